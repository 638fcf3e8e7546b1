// Package webhook is the contract of event deliveries that the REST API
// (registration) and the manager's notifier (delivery) share: which targets
// may receive events, the event a receiver gets, its id and its signature
// (docs/API.md, "Webhooks").
//
// A target must be public: https, a host whose every address is a public
// unicast one. That is checked at registration and again at connect time,
// on the address actually dialled, so a name that resolves elsewhere later
// (DNS rebinding) still cannot reach inside the network. The address
// classes come from the IANA special-purpose registries through
// code.dny.dev/ssrf.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"code.dny.dev/ssrf"
)

// Event types (docs/API.md, "Event types").
const (
	EventCompleted = "optimization.completed"
	EventFailed    = "optimization.failed"
	EventCancelled = "optimization.cancelled"
)

// SignatureHeader carries t=<unix seconds>,v1=<hex HMAC-SHA256>.
const SignatureHeader = "Service-Signature"

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_svc_"

// MaxURLLength bounds a webhook URL, in characters (docs/API.md, "WebhookIn").
const MaxURLLength = 500

// Attempts and AttemptTimeout: each event is tried 3 times, quickly, and
// a receiver has 5 s to answer each attempt with a 2xx.
const (
	Attempts       = 3
	AttemptTimeout = 5 * time.Second
)

// Backoff is the wait before attempt i+1 (i from 1): the attempts start at
// about 0 s, 1 s and 3 s.
func Backoff(i int) time.Duration { return time.Duration(i) * time.Second }

// Event is the JSON body a receiver gets: identifiers and links only.
type Event struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"`
	Created string    `json:"created"`
	Data    EventData `json:"data"`
}

// EventData is an Event's data.
type EventData struct {
	OptimizationID string  `json:"optimization_id"`
	Status         string  `json:"status"`
	ErrorCode      *string `json:"error_code"`
	ErrorMessage   *string `json:"error_message"`
	Links          Links   `json:"links"`
}

// Links are an Event's URLs.
type Links struct {
	Self   string `json:"self"`
	Result string `json:"result"`
}

// EventID is the id of the event that optimization uid reached status:
// retried and repeated deliveries of one event keep it.
func EventID(uid, status string) string {
	sum := sha256.Sum256([]byte(uid + "/" + status))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// EventType is the type of the event for a terminal status, or "".
func EventType(status string) string {
	switch status {
	case "completed":
		return EventCompleted
	case "failed":
		return EventFailed
	case "cancelled":
		return EventCancelled
	}
	return ""
}

// NewSecret is a signing secret: SecretPrefix and 32 random bytes in hex.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + hex.EncodeToString(b), nil
}

// Sign is the Service-Signature header value of body sent at t: the HMAC
// key is the whole secret, prefix included.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Resolver finds the addresses of a host; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy decides which targets may receive events and dials them.
type Policy struct {
	resolver Resolver
	allowed  []string // canonical host:port
	guard    *ssrf.Guardian
	// RootCAs verify receivers' certificates; nil means the system's. Tests
	// set it to trust their own receivers.
	RootCAs *x509.CertPool
}

// NewPolicy allows public https targets, plus exactly the HOST:PORT
// targets of allow over http or https although they are private (local
// development only). A nil resolver means net.DefaultResolver.
func NewPolicy(allow []string, resolver Resolver) (*Policy, error) {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	p := &Policy{resolver: resolver, guard: ssrf.New(ssrf.WithAnyPort(), ssrf.WithNetworks("tcp4", "tcp6"))}
	for _, a := range allow {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("webhook allow target %q is not HOST:PORT", a)
		}
		p.allowed = append(p.allowed, net.JoinHostPort(strings.ToLower(host), port))
	}
	return p, nil
}

// allows reports whether host:port is an explicitly allowed target.
func (p *Policy) allows(host, port string) bool {
	return slices.Contains(p.allowed, net.JoinHostPort(strings.ToLower(host), port))
}

// CheckURL tells why raw cannot receive events, in words for the person
// who registered it, or returns nil.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	if n := len([]rune(raw)); n > MaxURLLength {
		return fmt.Errorf("the URL has %d characters, at most %d are allowed", n, MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a valid URL: %s", strings.TrimPrefix(err.Error(), "parse \""+raw+"\": "))
	}
	if !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return errors.New("not an absolute URL: give the full https://host/path")
	}
	if u.User != nil {
		return errors.New("the URL must not carry a user name or password")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("the URL must not have a fragment (#...)")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return errors.New("the URL has no host")
	}
	scheme := strings.ToLower(u.Scheme)
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	if p.allows(host, port) && (scheme == "https" || scheme == "http") {
		return nil
	}
	if scheme != "https" {
		return fmt.Errorf("the URL must use https, not %s", u.Scheme)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s is not a valid port number", port)
	}
	if strings.Contains(host, "%") {
		return errors.New("the host must not carry an IPv6 zone")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if err := p.guard.SafeAddr(addr); err != nil {
			return fmt.Errorf("%s is not a public address: events go to public receivers only", addr)
		}
		return nil
	}
	if looksNumeric(host) {
		return fmt.Errorf("host %q spells an IP address in a non-standard form: write a host name or a dotted-decimal address", host)
	}
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("host %q could not be resolved", host)
	}
	for _, a := range addrs {
		if err := p.guard.SafeAddr(a.Unmap()); err != nil {
			return fmt.Errorf("host %q resolves to %s, which is not a public address: events go to public receivers only", host, a)
		}
	}
	return nil
}

// looksNumeric reports whether host would be read as an IPv4 address by
// inet_aton or a WHATWG URL parser although it is not a dotted quad:
// decimal (2130706433), octal (0177.0.0.1), hex (0x7f.1) and short forms
// (127.1), all of which reach the same address as the canonical one. A
// host whose last label is numeric is one of them.
func looksNumeric(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := strings.ToLower(labels[len(labels)-1])
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		last = last[2:]
		for _, r := range last {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// dial connects to addr (host:port): an allowed target as it is, anything
// else only to a public address, checked on the very address dialled.
func (p *Policy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: AttemptTimeout}
	if p.allows(host, port) {
		return dialer.DialContext(ctx, network, addr)
	}
	dialer.Control = p.guard.Safe
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if looksNumeric(host) {
		return nil, fmt.Errorf("%w: host %q spells an IP address in a non-standard form", ssrf.ErrProhibitedIP, host)
	} else if ips, err = p.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		conn, err := dialer.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), mustPort(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("host %q has no address", host)
	}
	return nil, errors.Join(errs...)
}

func mustPort(s string) uint16 {
	n, _ := strconv.ParseUint(s, 10, 16)
	return uint16(n)
}

// Client sends deliveries: at most AttemptTimeout per attempt, redirects
// never followed (the 3xx answer counts as a failed attempt), every
// connection through the policy's dialer. Proxies from the environment are
// not used: they would dial instead of the checked dialer.
func (p *Policy) Client() *http.Client {
	return &http.Client{
		Timeout: AttemptTimeout,
		Transport: &http.Transport{
			DialContext:         p.dial,
			TLSClientConfig:     &tls.Config{RootCAs: p.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: AttemptTimeout,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
