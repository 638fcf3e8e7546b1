package webserver

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"routeopt.io/routeopt/webserver/exportkey"
)

func TestExportLinkSignature(t *testing.T) {
	key := exportkey.Key{ID: "0a1b2c3d4e5f", Key: bytes.Repeat([]byte{0x5a}, 32)}
	l := exportLink{
		ExportID: "7b0c64ae-6d1f-4e55-9a57-0f3f3b7a9d10", Tenant: "acme",
		OptimizationID: "74664201-cd11-59b0-af6c-dddd4df97de2", OptimizationUID: "4fa4c3d0-b643-43d8-abeb-9b005ff96abe",
		Format: "xlsx", Include: "true", Expires: "1795431072", KeyID: key.ID,
	}
	u, err := url.Parse(l.url("https://routes.example.com", key.Key))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/v1/exports/"+l.ExportID {
		t.Errorf("path %q", u.Path)
	}
	q := u.Query()
	got := exportLink{
		ExportID: strings.TrimPrefix(u.Path, "/v1/exports/"), Tenant: q.Get(linkTenant),
		OptimizationID: q.Get(linkOptimizationID), OptimizationUID: q.Get(linkOptimizationUID),
		Format: q.Get(linkFormat), Include: q.Get(linkInclude), Expires: q.Get(linkExpires), KeyID: q.Get(linkKeyID),
	}
	sig := q.Get(linkSignature)
	if got != l || !got.verify(key.Key, sig) {
		t.Fatalf("the link does not verify: %+v %q", got, sig)
	}
	other := exportkey.Key{ID: "f5e4d3c2b1a0", Key: bytes.Repeat([]byte{0xa5}, 32)}
	if got.verify(other.Key, sig) {
		t.Error("verified under another key")
	}
	// Every field is signed; moving text across a field boundary is too.
	for name, change := range map[string]func(*exportLink){
		"export id": func(l *exportLink) { l.ExportID += "0" }, "tenant": func(l *exportLink) { l.Tenant = "acm" },
		"optimization id": func(l *exportLink) { l.OptimizationID = "x" }, "uid": func(l *exportLink) { l.OptimizationUID = "x" },
		"format": func(l *exportLink) { l.Format = "csv" }, "include": func(l *exportLink) { l.Include = "false" },
		"expires": func(l *exportLink) { l.Expires = "1795431073" }, "key id": func(l *exportLink) { l.KeyID = "x" },
		"boundary": func(l *exportLink) { l.Tenant, l.OptimizationID = l.Tenant+"\n"+l.OptimizationID, "" },
	} {
		changed := l
		change(&changed)
		if changed.verify(key.Key, sig) {
			t.Errorf("%s changed, the signature still verifies", name)
		}
	}
	for _, bad := range []string{"", "!!!", sig + "A", strings.ToUpper(sig), respell(sig)} {
		if l.verify(key.Key, bad) {
			t.Errorf("signature %q verifies", bad)
		}
	}
}
