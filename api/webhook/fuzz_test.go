package webhook

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	stripewebhook "github.com/stripe/stripe-go/v85/webhook"
)

var signatureRe = regexp.MustCompile(`^t=-?[0-9]+,v1=[0-9a-f]{64}$`)

// FuzzSign: the Service-Signature header is t=<unix seconds>,v1=<64 hex>
// for any secret, time and body, and Stripe's verifier (the one the README
// points receivers to) accepts it for exactly that body and secret and
// computes the same MAC.
func FuzzSign(f *testing.F) {
	f.Add("whsec_svc_0123456789abcdef", int64(1700000000), []byte(`{"id":"evt_1","type":"optimization.completed"}`))
	f.Add("", int64(0), []byte{})
	f.Add("whsec_svc_é,=", int64(-62135596800), []byte("t=1,v1=00\n\x00\xff"))
	f.Add("s", int64(253402300799), []byte(`{}`))
	f.Fuzz(func(t *testing.T, secret string, unix int64, body []byte) {
		at := time.Unix(unix, 0)
		header := Sign(secret, at, body)
		if !signatureRe.MatchString(header) {
			t.Fatalf("Sign = %q, not t=<unix>,v1=<hex>", header)
		}
		if want := "v1=" + hex.EncodeToString(stripewebhook.ComputeSignature(at, body, secret)); !strings.HasSuffix(header, want) {
			t.Fatalf("Sign = %q, Stripe computes %q", header, want)
		}
		if err := stripewebhook.ValidatePayloadIgnoringTolerance(body, header, secret); err != nil {
			t.Fatalf("Stripe's verifier refuses %q: %v", header, err)
		}
		if err := stripewebhook.ValidatePayloadIgnoringTolerance(append(bytes.Clone(body), ' '), header, secret); err == nil {
			t.Fatal("Stripe's verifier accepts the signature for another body")
		}
		if err := stripewebhook.ValidatePayloadIgnoringTolerance(body, header, secret+"x"); err == nil {
			t.Fatal("Stripe's verifier accepts the signature under another secret")
		}
	})
}

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
