package delivery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"code.dny.dev/ssrf"

	"routeopt.io/routeopt/api/webhook"
)

// localhost resolves localhost to its loopback addresses; no other name
// resolves.
type localhost struct{}

func (localhost) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// rebindResolver answers a public address to the first lookup and a
// loopback one afterwards, as a DNS rebinding attacker does.
type rebindResolver struct {
	mu    sync.Mutex
	calls int
}

func (r *rebindResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// countingListener accepts on 127.0.0.1 and counts connections.
func countingListener(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = conn.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, accepted
}

// A name that passed the registration check but resolves to loopback at
// delivery time is refused by the dialer, on the address it would dial.
func TestDialRefusesDNSRebinding(t *testing.T) {
	port, accepted := countingListener(t)
	resolver := &rebindResolver{}
	p, err := webhook.NewPolicy(nil, resolver)
	if err != nil {
		t.Fatal(err)
	}
	raw := "https://rebind.attacker.example:" + strconv.Itoa(port) + "/hook"
	if err := p.CheckURL(context.Background(), raw); err != nil {
		t.Fatalf("registration: %v (the first answer is public)", err)
	}
	resp, err := Client(p).Post(raw, "application/json", strings.NewReader(`{}`))
	if err == nil {
		_ = resp.Body.Close()
		t.Fatalf("the delivery reached %s: %d", raw, resp.StatusCode)
	}
	var urlErr *url.Error
	if !errors.As(err, &urlErr) {
		t.Errorf("error %T is not a *url.Error: %v", err, err)
	}
	if !errors.Is(err, ssrf.ErrProhibitedIP) {
		t.Errorf("error is not the ssrf guard's: %v", err)
	}
	if resolver.calls < 2 {
		t.Errorf("the dialer did not resolve the name again (%d lookups)", resolver.calls)
	}
	time.Sleep(100 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("the loopback listener accepted %d connections", n)
	}

	// The listener does count: an allowed target reaches it.
	before := accepted.Load()
	allowed, err := webhook.NewPolicy([]string{"127.0.0.1:" + strconv.Itoa(port)}, resolver)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := Client(allowed).Get("http://127.0.0.1:" + strconv.Itoa(port) + "/x"); err == nil {
		_ = resp.Body.Close()
	}
	waitUntil(t, func() bool { return accepted.Load() > before }, "the allowed target's connection")
}

// A literal private address in a delivery URL is refused by the dialer
// too, whatever the registration check said.
func TestDialRefusesPrivateLiterals(t *testing.T) {
	port, accepted := countingListener(t)
	p, err := webhook.NewPolicy(nil, localhost{})
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"127.0.0.1", "[::ffff:127.0.0.1]", "2130706433", "localhost", "127.1"} {
		resp, err := Client(p).Get(fmt.Sprintf("https://%s:%d/x", host, port))
		if err == nil {
			_ = resp.Body.Close()
			t.Errorf("%s: the request went through", host)
			continue
		}
		if !errors.Is(err, ssrf.ErrProhibitedIP) {
			t.Errorf("%s: %v is not the ssrf guard's refusal", host, err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("the loopback listener accepted %d connections", n)
	}
}

// The client never follows a redirect: the 3xx answer is the attempt's.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	var hits atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	p, err := webhook.NewPolicy([]string{ln.Addr().String()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := Client(p).Post("http://"+ln.Addr().String()+"/hook", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || hits.Load() != 1 {
		t.Errorf("status %d after %d requests, want the 307 itself", resp.StatusCode, hits.Load())
	}
}

func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSign(t *testing.T) {
	secret := "whsec_svc_0123456789abcdef"
	body := []byte(`{"id":"evt_1","type":"optimization.completed"}`)
	at := time.Unix(1700000000, 0)
	got := Sign(secret, at, body)
	// openssl dgst -sha256 -hmac whsec_svc_0123456789abcdef over
	// `1700000000.` and the body: the key is the whole secret, prefix included.
	const want = "t=1700000000,v1=24b1b31cf51cc832906f5db028bd10e67cb00b6f799b84958ba37fb4e85df584"
	if got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
	// The same by hand, for any secret and body.
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("1700000000." + string(body)))
	if hand := "t=1700000000,v1=" + hex.EncodeToString(mac.Sum(nil)); got != hand {
		t.Errorf("Sign = %q, by hand %q", got, hand)
	}
	withoutPrefix := hmac.New(sha256.New, []byte(strings.TrimPrefix(secret, webhook.SecretPrefix)))
	withoutPrefix.Write([]byte("1700000000." + string(body)))
	if strings.HasSuffix(got, hex.EncodeToString(withoutPrefix.Sum(nil))) {
		t.Error("Sign keyed the HMAC without the secret's prefix")
	}
	if Sign(secret, at, append([]byte{}, body[:len(body)-1]...)) == got || Sign(secret, at.Add(time.Second), body) == got || Sign(secret+"x", at, body) == got {
		t.Error("the signature does not depend on body, time and secret")
	}
}
