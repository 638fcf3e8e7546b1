// Package ratelimit holds the token buckets that make a client wait:
// requests per API key, and failed authentications per source address
// (refused before their key is even read). It decides who waits and for
// how long; the REST handlers answer 429 with that wait.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// PerKey is a token bucket per API key. Buckets idle for longer than it
// takes to refill are dropped, so memory follows the active keys only.
type PerKey struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	limiter *rate.Limiter
	seen    time.Time
}

// NewPerKey allows perSecond requests per key, burst at once.
func NewPerKey(perSecond float64, burst int) *PerKey {
	return &PerKey{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*bucket{}}
}

// Allow takes a token for key; when none is left it returns how long until one is.
func (l *PerKey) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{limiter: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	l.sweep(now)
	r := b.limiter.ReserveN(now, 1)
	if !r.OK() {
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops full, idle buckets about once a minute.
func (l *PerKey) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	refill := time.Duration(float64(l.burst)/float64(l.limit)*float64(time.Second)) + time.Minute
	for k, b := range l.buckets {
		if now.Sub(b.seen) > refill {
			delete(l.buckets, k)
		}
	}
}
