// Package exportlink signs and reads the download links of exports. A link
// needs no API key: it carries what the download needs and an HMAC-SHA256
// signature over all of it, under the export signing key (package
// exportkey) its key id names:
//
//	<public URL>/v1/exports/<export id>?tenant=<company id>
//	  &optimization_id=<id>&optimization_uid=<uid>&format=<xlsx|csv>
//	  &include_driver_instructions=<true|false>&expires=<unix seconds>
//	  &key_id=<key id>&signature=<base64url HMAC, no padding>
//
// The signature covers every other parameter and the export id
// (Link.canonical); the optimization's uid makes a link die with its
// optimization even if one of the same id is created again.
package exportlink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
)

// Path is where download links point, below the public URL.
const Path = "/v1/exports/"

// Query parameters of a download link.
const (
	linkTenant          = "tenant"
	linkOptimizationID  = "optimization_id"
	linkOptimizationUID = "optimization_uid"
	linkFormat          = "format"
	linkInclude         = "include_driver_instructions"
	linkExpires         = "expires"
	linkKeyID           = "key_id"
	linkSignature       = "signature"
)

// Link is what a download link carries besides its signature.
type Link struct {
	ExportID, Tenant, OptimizationID, OptimizationUID string
	Format, Include, Expires, KeyID                   string
}

// canonical is the signed string: a version tag and every field, one per
// line, in a fixed order. Fields never contain a newline when signed, so
// no other set of fields gives the same string.
func (l Link) canonical() string {
	return strings.Join([]string{
		"routeopt-export-link-v1", l.ExportID, l.Tenant, l.OptimizationID, l.OptimizationUID,
		l.Format, l.Include, l.Expires, l.KeyID,
	}, "\n")
}

func (l Link) mac(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(l.canonical()))
	return m.Sum(nil)
}

// URL is the signed download URL under base.
func (l Link) URL(base string, key []byte) string {
	var b strings.Builder
	b.WriteString(base + Path + url.PathEscape(l.ExportID) + "?")
	for i, kv := range [][2]string{
		{linkTenant, l.Tenant}, {linkOptimizationID, l.OptimizationID}, {linkOptimizationUID, l.OptimizationUID},
		{linkFormat, l.Format}, {linkInclude, l.Include}, {linkExpires, l.Expires}, {linkKeyID, l.KeyID},
		{linkSignature, base64.RawURLEncoding.EncodeToString(l.mac(key))},
	} {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(kv[0] + "=" + url.QueryEscape(kv[1]))
	}
	return b.String()
}

// Verify reports, in constant time, whether signature is l's under key,
// encoded as URL wrote it: strict decoding refuses the other spellings of
// the same bytes (non-zero padding bits).
func (l Link) Verify(key []byte, signature string) bool {
	got, err := base64.RawURLEncoding.Strict().DecodeString(signature)
	if err != nil {
		return false
	}
	return hmac.Equal(got, l.mac(key))
}

// FromQuery reads a download link's fields and signature from its
// export id and query. exact is false unless the query holds each of the
// link's parameters once and nothing else: a link verifies only as it was
// given, and a repeated parameter cannot be read one way here and another
// way by a proxy or a log.
func FromQuery(exportID string, q url.Values) (l Link, signature string, exact bool) {
	exact, read := true, 0
	one := func(name string) string {
		v := q[name]
		exact, read = exact && len(v) == 1, read+1
		if len(v) == 0 {
			return ""
		}
		return v[0]
	}
	l = Link{
		ExportID: exportID, Tenant: one(linkTenant),
		OptimizationID: one(linkOptimizationID), OptimizationUID: one(linkOptimizationUID),
		Format: one(linkFormat), Include: one(linkInclude), Expires: one(linkExpires), KeyID: one(linkKeyID),
	}
	signature = one(linkSignature)
	return l, signature, exact && len(q) == read
}
