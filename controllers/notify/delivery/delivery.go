// Package delivery is how the notifier puts one webhook event on the wire:
// signed (Sign), over a client that reaches only the targets the webhook
// policy allows (Client), on a fixed schedule of attempts.
package delivery

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"routeopt.io/routeopt/api/webhook"
)

// Attempts and AttemptTimeout: each event is tried 3 times, quickly, and
// a receiver has 5 s to answer each attempt with a 2xx.
const (
	Attempts       = 3
	AttemptTimeout = 5 * time.Second
)

// Backoff is the wait before attempt i+1 (i from 1): the attempts start at
// about 0 s, 1 s and 3 s.
func Backoff(i int) time.Duration { return time.Duration(i) * time.Second }

// Sign is the webhook.SignatureHeader value of body sent at t: the HMAC
// key is the whole secret, prefix included.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Client sends deliveries: at most AttemptTimeout per attempt, redirects
// never followed (the 3xx answer counts as a failed attempt), every
// connection through a dialer that applies p on the address it dials, and
// receivers' certificates checked against p.RootCAs. Proxies from the
// environment are not used: they would dial instead of the checked dialer.
func Client(p *webhook.Policy) *http.Client {
	d := &dialer{policy: p}
	return &http.Client{
		Timeout: AttemptTimeout,
		Transport: &http.Transport{
			DialContext:         d.dial,
			TLSClientConfig:     &tls.Config{RootCAs: p.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: AttemptTimeout,
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialer connects to receivers under a webhook policy.
type dialer struct {
	policy *webhook.Policy
}

// dial connects to addr (host:port): an allowed target as it is, anything
// else only to a public address, checked on the very address dialled.
func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	nd := &net.Dialer{Timeout: AttemptTimeout}
	if d.policy.Allows(host, port) {
		return nd.DialContext(ctx, network, addr)
	}
	nd.Control = d.policy.Control
	ips, err := d.policy.Addrs(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		conn, err := nd.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), mustPort(port)).String())
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
