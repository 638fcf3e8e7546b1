package exportlink

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"routeopt.io/routeopt/webserver/exportkey"
)

func TestSignature(t *testing.T) {
	key := exportkey.Key{ID: "0a1b2c3d4e5f", Key: bytes.Repeat([]byte{0x5a}, 32)}
	l := Link{
		ExportID: "7b0c64ae-6d1f-4e55-9a57-0f3f3b7a9d10", Tenant: "acme",
		OptimizationID: "74664201-cd11-59b0-af6c-dddd4df97de2", OptimizationUID: "4fa4c3d0-b643-43d8-abeb-9b005ff96abe",
		Format: "xlsx", Include: "true", Expires: "1795431072", KeyID: key.ID,
	}
	u, err := url.Parse(l.URL("https://routes.example.com", key.Key))
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/v1/exports/"+l.ExportID {
		t.Errorf("path %q", u.Path)
	}
	q := u.Query()
	got := Link{
		ExportID: strings.TrimPrefix(u.Path, "/v1/exports/"), Tenant: q.Get(linkTenant),
		OptimizationID: q.Get(linkOptimizationID), OptimizationUID: q.Get(linkOptimizationUID),
		Format: q.Get(linkFormat), Include: q.Get(linkInclude), Expires: q.Get(linkExpires), KeyID: q.Get(linkKeyID),
	}
	sig := q.Get(linkSignature)
	if got != l || !got.Verify(key.Key, sig) {
		t.Fatalf("the link does not verify: %+v %q", got, sig)
	}
	other := exportkey.Key{ID: "f5e4d3c2b1a0", Key: bytes.Repeat([]byte{0xa5}, 32)}
	if got.Verify(other.Key, sig) {
		t.Error("verified under another key")
	}
	// Every field is signed; moving text across a field boundary is too.
	for name, change := range map[string]func(*Link){
		"export id": func(l *Link) { l.ExportID += "0" }, "tenant": func(l *Link) { l.Tenant = "acm" },
		"optimization id": func(l *Link) { l.OptimizationID = "x" }, "uid": func(l *Link) { l.OptimizationUID = "x" },
		"format": func(l *Link) { l.Format = "csv" }, "include": func(l *Link) { l.Include = "false" },
		"expires": func(l *Link) { l.Expires = "1795431073" }, "key id": func(l *Link) { l.KeyID = "x" },
		"boundary": func(l *Link) { l.Tenant, l.OptimizationID = l.Tenant+"\n"+l.OptimizationID, "" },
	} {
		changed := l
		change(&changed)
		if changed.Verify(key.Key, sig) {
			t.Errorf("%s changed, the signature still verifies", name)
		}
	}
	for _, bad := range []string{"", "!!!", sig + "A", strings.ToUpper(sig), respell(sig)} {
		if l.Verify(key.Key, bad) {
			t.Errorf("signature %q verifies", bad)
		}
	}
}

// respell spells a 32-byte base64url signature another way: its last
// character carries two padding bits, which lenient decoders ignore.
func respell(sig string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	return sig[:len(sig)-1] + string(alphabet[last^1])
}
