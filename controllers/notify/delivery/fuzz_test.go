package delivery

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"

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
