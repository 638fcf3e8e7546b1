package ratelimit

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/utils/lru"
)

// maxFailingSources bounds the source addresses whose failed
// authentications are remembered; past it the least recently failing one
// is forgotten (it starts again with a full bucket).
const maxFailingSources = 10_000

// FailedAuth is a token bucket per source address that only failed
// authentications spend. A source whose bucket is empty is refused before
// its key is even looked at, so guessing keys from one address runs at the
// bucket's rate whatever the keys. Only sources that failed have a bucket.
type FailedAuth struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex // get-or-create of a bucket
	buckets *lru.Cache // source → *rate.Limiter
}

// NewFailedAuth allows perSecond failed authentications per source
// address, burst at once.
func NewFailedAuth(perSecond float64, burst int) *FailedAuth {
	return &FailedAuth{limit: rate.Limit(perSecond), burst: burst, buckets: lru.New(maxFailingSources)}
}

// Blocked reports whether source has no failure left at now, and if so
// how long until it has one.
func (l *FailedAuth) Blocked(source string, now time.Time) (bool, time.Duration) {
	v, ok := l.buckets.Get(source)
	if !ok {
		return false, 0
	}
	tokens := v.(*rate.Limiter).TokensAt(now)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second))
}

// Failed spends one of source's failures at now.
func (l *FailedAuth) Failed(source string, now time.Time) {
	l.mu.Lock()
	v, ok := l.buckets.Get(source)
	if !ok {
		v = rate.NewLimiter(l.limit, l.burst)
		l.buckets.Add(source, v)
	}
	l.mu.Unlock()
	v.(*rate.Limiter).AllowN(now, 1)
}

// SourceKey is the bucket of a client address: the address itself, or
// for IPv6 its /64, which one client usually holds whole.
func SourceKey(clientIP string) string {
	addr, err := netip.ParseAddr(clientIP)
	if err != nil {
		return clientIP
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	prefix, _ := addr.Prefix(64) // an IPv6 address always has a /64
	return prefix.String()
}
