package webhook

import (
	"context"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzNames resolves names under internal.test and localhost.test to
// private and loopback addresses, and every other name to a public one.
type fuzzNames struct{}

func (fuzzNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch h := strings.ToLower(strings.TrimSuffix(host, ".")); {
	case strings.HasSuffix(h, "internal.test"):
		return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")}, nil
	case strings.HasSuffix(h, "localhost.test"):
		return []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

// FuzzCheckURL: a webhook URL is accepted only when it is an absolute
// https URL of at most MaxURLLength characters, without credentials or a
// fragment, whose host is a public address or resolves only to public
// ones; a refusal is a sentence for the person who registered it.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/routeopt", "http://hooks.example.com/", "HTTPS://Hooks.Example.com:8443/x?y=1",
		"https://a.internal.test/", "https://LOCALHOST.test./", "https://10.0.0.1/", "https://[::1]/", "https://[fe80::1%25eth0]/",
		"https://0x7f.1/", "https://2130706433/", "https://017700000001/", "https://127.1/", "https://[::ffff:127.0.0.1]/",
		"https://user@hooks.example.com/", "https://hooks.example.com/#x", "https://hooks.example.com:99999/", "https:///x",
		"https:hooks.example.com", "//hooks.example.com/", "", " https://hooks.example.com", "https://hooks.example.com/" + strings.Repeat("é", 490),
		"https://[2606:4700::1111]/", "https://1.1.1.1:443/", "https://100.64.0.1/", "https://xn--bcher-kva.example/",
	} {
		f.Add(s)
	}
	p, err := NewPolicy(nil, fuzzNames{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := p.CheckURL(context.Background(), raw)
		if err != nil {
			if msg := err.Error(); msg == "" || !utf8.ValidString(msg) && utf8.ValidString(raw) {
				t.Fatalf("CheckURL(%q) refused with %q", raw, msg)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || utf8.RuneCountInString(raw) > MaxURLLength || !strings.EqualFold(u.Scheme, "https") || u.Host == "" || u.Opaque != "" || u.User != nil || strings.Contains(raw, "#") {
			t.Fatalf("CheckURL accepted %q", raw)
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if strings.HasSuffix(host, "internal.test") || strings.HasSuffix(host, "localhost.test") {
			t.Fatalf("CheckURL accepted %q, which resolves to a private address", raw)
		}
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			if a = a.Unmap(); !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() {
				t.Fatalf("CheckURL accepted %q, a private address", raw)
			}
		} else if looksNumeric(u.Hostname()) {
			t.Fatalf("CheckURL accepted %q, an address in a non-standard form", raw)
		}
	})
}
