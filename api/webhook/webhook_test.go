package webhook

import (
	"context"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

// fakeResolver answers from a table; a name not in it does not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	answers, ok := f[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, 0, len(answers))
	for _, a := range answers {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// names is the DNS the tests see.
var names = fakeResolver{
	"hooks.example.com":       {"93.184.216.34"},
	"v6.example.com":          {"2606:4700::1111"},
	"localhost":               {"127.0.0.1", "::1"},
	"internal.example.com":    {"10.0.0.5"},
	"mixed.example.com":       {"93.184.216.34", "127.0.0.1"},
	"rebind.example.com":      {"169.254.169.254"},
	"cgnat.example.com":       {"100.64.1.1"},
	"ula.example.com":         {"fd00::1"},
	"mapped.example.com":      {"::ffff:127.0.0.1"},
	"nat64.example.com":       {"64:ff9b::a9fe:a9fe"},
	"empty.example.com":       {},
	"unspecified.example.com": {"0.0.0.0"},
}

func TestCheckURLRefuses(t *testing.T) {
	p, err := NewPolicy(nil, names)
	if err != nil {
		t.Fatal(err)
	}
	long := "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength)
	tests := []struct {
		name, url string
		why       string // a word the refusal must contain
	}{
		// not https
		{"http", "http://hooks.example.com/x", "https"},
		{"ftp", "ftp://hooks.example.com/file", "https"},
		{"ws", "wss://hooks.example.com/socket", "https"},
		{"no scheme", "hooks.example.com/x", "absolute"},
		// length
		{"longer than 500 characters", long, "at most 500"},
		// userinfo
		{"user and password", "https://user:secret@hooks.example.com/x", "user"},
		{"user only", "https://user@hooks.example.com/x", "user"},
		// no host
		{"empty authority", "https:///x", "host"},
		{"port only", "https://:443/x", "host"},
		// fragment
		{"fragment", "https://hooks.example.com/x#part", "fragment"},
		{"empty fragment", "https://hooks.example.com/x#", "fragment"},
		// loopback
		{"loopback 127.0.0.1", "https://127.0.0.1/x", "public"},
		{"loopback 127.255.255.254", "https://127.255.255.254/x", "public"},
		{"loopback [::1]", "https://[::1]/x", "public"},
		{"localhost resolves to loopback", "https://localhost/x", "public"},
		{"localhost with a port", "https://localhost:8443/x", "public"},
		// RFC 1918
		{"10/8", "https://10.0.0.1/x", "public"},
		{"10/8 top", "https://10.255.255.255/x", "public"},
		{"172.16/12", "https://172.16.0.1/x", "public"},
		{"172.16/12 top", "https://172.31.255.254/x", "public"},
		{"192.168/16", "https://192.168.1.1/x", "public"},
		// CGNAT
		{"100.64/10", "https://100.64.0.1/x", "public"},
		{"100.64/10 top", "https://100.127.255.254/x", "public"},
		// link-local
		{"cloud metadata", "https://169.254.169.254/latest/meta-data", "public"},
		{"169.254/16", "https://169.254.0.1/x", "public"},
		{"[fe80::1]", "https://[fe80::1]/x", "public"},
		// unique-local
		{"[fc00::1]", "https://[fc00::1]/x", "public"},
		{"[fd12::1]", "https://[fd12::1]/x", "public"},
		// multicast
		{"224.0.0.1", "https://224.0.0.1/x", "public"},
		{"[ff02::1]", "https://[ff02::1]/x", "public"},
		// unspecified
		{"0.0.0.0", "https://0.0.0.0/x", "public"},
		{"[::]", "https://[::]/x", "public"},
		// broadcast and reserved
		{"255.255.255.255", "https://255.255.255.255/x", "public"},
		{"240.0.0.1", "https://240.0.0.1/x", "public"},
		// IPv4-mapped IPv6
		{"mapped loopback", "https://[::ffff:127.0.0.1]/x", "public"},
		{"mapped metadata in hex", "https://[::ffff:a9fe:a9fe]/x", "public"},
		{"mapped 10/8", "https://[::ffff:10.0.0.1]/x", "public"},
		// NAT64
		{"NAT64 loopback", "https://[64:ff9b::7f00:1]/x", "public"},
		{"NAT64 metadata", "https://[64:ff9b::a9fe:a9fe]/x", "public"},
		// 6to4 embedding a private address
		{"6to4 loopback", "https://[2002:7f00:1::1]/x", "public"},
		// odd IPv4 spellings, which inet_aton and WHATWG parsers read as addresses
		{"decimal", "https://2130706433/x", "non-standard"},
		{"hex", "https://0x7f000001/x", "non-standard"},
		{"octal dotted", "https://0177.0.0.1/x", "non-standard"},
		{"hex dotted", "https://0x7f.0.0.1/x", "non-standard"},
		{"short 127.1", "https://127.1/x", "non-standard"},
		{"short octal", "https://0177.1/x", "non-standard"},
		{"octal whole", "https://017700000001/x", "non-standard"},
		{"short hex", "https://0x7f.1/x", "non-standard"},
		{"short 10.1", "https://10.1/x", "non-standard"},
		{"decimal 192.168.0.1", "https://3232235521/x", "non-standard"},
		{"hex upper case", "https://0X7F000001/x", "non-standard"},
		// names resolving into a refused class
		{"name to RFC 1918", "https://internal.example.com/x", "public"},
		{"name to a public and a loopback address", "https://mixed.example.com/x", "public"},
		{"name to metadata", "https://rebind.example.com/x", "public"},
		{"name to CGNAT", "https://cgnat.example.com/x", "public"},
		{"name to unique-local", "https://ula.example.com/x", "public"},
		{"name to mapped loopback", "https://mapped.example.com/x", "public"},
		{"name to NAT64 metadata", "https://nat64.example.com/x", "public"},
		{"name to unspecified", "https://unspecified.example.com/x", "public"},
		{"name with trailing dot", "https://internal.example.com./x", "public"},
		{"name in upper case", "https://INTERNAL.example.com/x", "public"},
		// names that do not resolve
		{"unknown name", "https://nowhere.example.com/x", "resolve"},
		{"name without addresses", "https://empty.example.com/x", "resolve"},
		// IPv6 zone
		{"zone", "https://[fe80::1%25eth0]/x", "zone"},
		// bad ports
		{"port above 65535", "https://hooks.example.com:99999/x", "port"},
		{"port 0", "https://hooks.example.com:0/x", "port"},
		{"port not a number", "https://hooks.example.com:https/x", "port"},
		// not a URL at all
		{"control character", "https://hooks.example.com/\x7f", "valid URL"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d refused URLs", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.CheckURL(context.Background(), tc.url)
			if err == nil {
				t.Fatalf("CheckURL(%q) accepted it", tc.url)
			}
			if !strings.Contains(err.Error(), tc.why) {
				t.Errorf("CheckURL(%q) = %q, which does not say %q", tc.url, err, tc.why)
			}
		})
	}
	t.Logf("%d refused URLs", len(tests))
}

func TestCheckURLAccepts(t *testing.T) {
	public, err := NewPolicy(nil, names)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := NewPolicy([]string{"127.0.0.1:9999", "LocalHost:8080"}, names)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		policy *Policy
		url    string
	}{
		{"public name", public, "https://hooks.example.com/x"},
		{"public name, query and port", public, "https://hooks.example.com:8443/x?tenant=a"},
		{"public name with IPv6 only", public, "https://v6.example.com/x"},
		{"public IPv4 with a port", public, "https://93.184.216.34:8443/hook"},
		{"public IPv6", public, "https://[2606:4700::1111]/x"},
		{"https in upper case", public, "HTTPS://hooks.example.com/x"},
		{"exactly 500 characters", public, "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength-len("https://hooks.example.com/"))},
		{"allowed target over http", dev, "http://127.0.0.1:9999/x"},
		{"allowed target over https", dev, "https://127.0.0.1:9999"},
		{"allowed name, any case", dev, "http://localhost:8080/events"},
		{"a public target beside allowed ones", dev, "https://hooks.example.com/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.policy.CheckURL(context.Background(), tc.url); err != nil {
				t.Errorf("CheckURL(%q) = %v, want accepted", tc.url, err)
			}
		})
	}
}

// An allowed target is exactly one HOST:PORT: its neighbours stay refused.
func TestCheckURLAllowTargetIsExact(t *testing.T) {
	p, err := NewPolicy([]string{"127.0.0.1:9999"}, names)
	if err != nil {
		t.Fatal(err)
	}
	for raw, why := range map[string]string{
		"http://127.0.0.1:9998/x":  "https",
		"https://127.0.0.1:9998/x": "public",
		"http://127.0.0.2:9999/x":  "https",
		"https://127.0.0.1/x":      "public",
		"ftp://127.0.0.1:9999/x":   "https",
		"http://localhost:9999/x":  "https",
		"https://localhost:9999/x": "public",
	} {
		err := p.CheckURL(context.Background(), raw)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("CheckURL(%q) = %v, want a refusal saying %q", raw, err, why)
		}
	}
	for _, bad := range []string{"127.0.0.1", ":9999", "127.0.0.1:", "[::1]"} {
		if _, err := NewPolicy([]string{bad}, nil); err == nil {
			t.Errorf("NewPolicy accepted the allow target %q", bad)
		}
	}
}

func TestNewSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		s, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^whsec_svc_[0-9a-f]{64}$`).MatchString(s) {
			t.Fatalf("secret %q is not whsec_svc_ and 64 hex digits", s)
		}
		if seen[s] {
			t.Fatal("a secret repeated")
		}
		seen[s] = true
	}
}
