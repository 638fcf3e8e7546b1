// Package webhook is what the REST API (registration) and the manager's
// notifier (delivery, controllers/notify) share about webhook events: the
// event a receiver gets, the header its signature travels in, the signing
// secret's form, and which targets may receive events (docs/API.md,
// "Webhooks"). It sends nothing: the notifier signs and dials
// (controllers/notify/delivery).
//
// A target must be public: https, a host whose every address is a public
// unicast one. Policy checks that at registration (CheckURL), and gives
// the notifier's dialer the same rule to apply again at connect time, on
// the address actually dialled (Allows, Addrs, Control), so a name that
// resolves elsewhere later (DNS rebinding) still cannot reach inside the
// network. The address classes come from the IANA special-purpose
// registries through code.dny.dev/ssrf.
package webhook

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"

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

// NewSecret is a signing secret: SecretPrefix and 32 random bytes in hex.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + hex.EncodeToString(b), nil
}

// Resolver finds the addresses of a host; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy decides which targets may receive events.
type Policy struct {
	resolver Resolver
	allowed  []string // canonical host:port
	guard    *ssrf.Guardian
	// RootCAs are the authorities a receiver's certificate must chain to;
	// nil means the system's. Tests set it to trust their own receivers.
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

// Allows reports whether host:port is one of the explicitly allowed
// targets (local development), which may be reached at any address.
func (p *Policy) Allows(host, port string) bool {
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
	if p.Allows(host, port) && (scheme == "https" || scheme == "http") {
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

// Addrs are the addresses a delivery to host may dial: host itself when
// it is an IP address, its resolved addresses otherwise. A host that
// spells an IP address in a non-standard form is refused with
// ssrf.ErrProhibitedIP. Whether an address is public is left to Control,
// on the socket.
func (p *Policy) Addrs(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if looksNumeric(host) {
		return nil, fmt.Errorf("%w: host %q spells an IP address in a non-standard form", ssrf.ErrProhibitedIP, host)
	}
	return p.resolver.LookupNetIP(ctx, "ip", host)
}

// Control is a net.Dialer Control function: it refuses, with
// ssrf.ErrProhibitedIP, a connection to anything but a public unicast
// address, checked on the very address being dialled.
func (p *Policy) Control(network, address string, c syscall.RawConn) error {
	return p.guard.Safe(network, address, c)
}
