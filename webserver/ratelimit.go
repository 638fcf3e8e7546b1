package webserver

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// rateLimit answers 429 with Retry-After once a key has spent its tokens.
func (s *Server) rateLimit(c *gin.Context) {
	if s.limiter == nil {
		c.Next()
		return
	}
	ok, wait := s.limiter.Allow(principal(c).KeyID, s.clock.Now())
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
