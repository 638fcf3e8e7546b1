package webserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"
)

// keyLimiter is a token bucket per API key. Buckets idle for longer than it
// takes to refill are dropped, so memory follows the active keys only.
type keyLimiter struct {
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

func newKeyLimiter(perSecond float64, burst int) *keyLimiter {
	return &keyLimiter{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*bucket{}}
}

// allow takes a token for key; when none is left it returns how long until one is.
func (l *keyLimiter) allow(key string, now time.Time) (bool, time.Duration) {
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
func (l *keyLimiter) sweep(now time.Time) {
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

// rateLimit answers 429 with Retry-After once a key has spent its tokens.
func (s *Server) rateLimit(c *gin.Context) {
	if s.limiter == nil {
		c.Next()
		return
	}
	ok, wait := s.limiter.allow(principal(c).KeyID, s.clock.Now())
	if !ok {
		abortRateLimited(c, wait, "too many requests for this API key")
		return
	}
	c.Next()
}

// abortRateLimited answers 429 with Retry-After: wait in whole seconds, at
// least one.
func abortRateLimited(c *gin.Context, wait time.Duration, why string) {
	seconds := max(1, int(math.Ceil(wait.Seconds())))
	c.Header("Retry-After", strconv.Itoa(seconds))
	abortError(c, http.StatusTooManyRequests, CodeRateLimited, why+"; retry after "+strconv.Itoa(seconds)+" s", map[string]any{"retry_after_seconds": seconds})
}
