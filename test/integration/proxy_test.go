package integration

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// tcpProxy forwards connections to a target until it is cut (then every
// connection is closed and new ones refused) or turned into a black hole
// (connections are accepted and then nothing is forwarded either way).
type tcpProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	conns  []net.Conn
	holed  bool
	closed bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = u.Host
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		holed := p.holed
		p.conns = append(p.conns, in)
		p.mu.Unlock()
		if holed {
			continue // accepted, never answered
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, out)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

// cut closes the listener and every connection: the API is unreachable.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	_ = p.ln.Close()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// blackhole closes existing connections and accepts new ones without ever
// forwarding a byte: the API hangs.
func (p *tcpProxy) blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holed = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}
