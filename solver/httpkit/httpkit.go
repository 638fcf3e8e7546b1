// Package httpkit is the HTTP toolkit the solver's providers (Nominatim,
// OSRM) share: one attempt with its own timeout and a bounded body, and a
// retry loop with jittered exponential backoff that honours Retry-After, so
// both services fail the same clear way instead of two diverging copies.
package httpkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter caps a Retry-After header so a hostile or broken server
// cannot make a caller compute absurd waits.
const maxRetryAfter = 24 * time.Hour

// AttemptError is the failure of one attempt. Retry marks failures worth
// another try (network errors, timeouts, 429 and 5xx); After is the delay
// the server asked for with Retry-After.
type AttemptError struct {
	Err    error
	Retry  bool
	After  time.Duration
	Status int // HTTP status, 0 when no answer arrived
}

func (e *AttemptError) Error() string { return e.Err.Error() }
func (e *AttemptError) Unwrap() error { return e.Err }

// Retryable marks err as worth retrying.
func Retryable(err error) *AttemptError { return &AttemptError{Err: err, Retry: true} }

// RetryError reports retries that did not succeed: exhausted, cut short by
// a Retry-After beyond the backoff cap, or by the caller's deadline. It
// names the service and the last HTTP status so an operator knows which
// dependency failed and how.
type RetryError struct {
	Service  string
	Attempts int
	Status   int // last HTTP status, 0 when none arrived
	Reason   string
	Err      error // the last attempt's failure
}

func (e *RetryError) Error() string {
	status := "no answer"
	if e.Status != 0 {
		status = "HTTP " + strconv.Itoa(e.Status)
	}
	return fmt.Sprintf("%s: %s after %d attempt(s) (last: %s): %v", e.Service, e.Reason, e.Attempts, status, e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }

// Retrier runs attempts until one succeeds, one fails for good, the retries
// run out or ctx ends. The zero value of each field means its default.
type Retrier struct {
	// Service names the dependency in errors, e.g. "nominatim".
	Service string
	// Attempts is the total number of tries; at least 1.
	Attempts int
	// MinBackoff is the first retry's wait, doubled per retry up to
	// MaxBackoff, with jitter in the upper half.
	MinBackoff, MaxBackoff time.Duration
	// AbortLongRetryAfter ends the retries at once when the server asks
	// for longer than MaxBackoff; otherwise the wait is capped there.
	AbortLongRetryAfter bool
	// OnRetryAfter, when set, hears every Retry-After delay before the
	// wait (Nominatim pauses all its callers).
	OnRetryAfter func(time.Duration)
	// Sleep waits d or until ctx ends; nil means a timer. Now is the clock;
	// nil means time.Now. Tests replace both.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

// Do calls attempt (numbered from 0) until it returns nil. An error that is
// not a retryable *AttemptError is returned as it is; a cancelled ctx
// yields an error wrapping ctx.Err(); otherwise the end is a *RetryError.
// Waits that would outlast ctx's deadline are not started.
func (r *Retrier) Do(ctx context.Context, attempt func(ctx context.Context, n int) error) error {
	attempts := max(r.Attempts, 1)
	minB, maxB := r.MinBackoff, r.MaxBackoff
	if minB <= 0 {
		minB = 500 * time.Millisecond
	}
	maxB = max(maxB, minB)
	for n := 0; ; n++ {
		err := attempt(ctx, n)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", r.Service, ctx.Err())
		}
		var ae *AttemptError
		if !errors.As(err, &ae) || !ae.Retry {
			return err
		}
		fail := func(reason string) error {
			return &RetryError{Service: r.Service, Attempts: n + 1, Status: ae.Status, Reason: reason, Err: ae.Err}
		}
		if n+1 >= attempts {
			return fail("failed")
		}
		wait := Backoff(minB, maxB, n)
		if ae.After > 0 {
			if ae.After > maxB && r.AbortLongRetryAfter {
				return fail(fmt.Sprintf("asked to retry after %s", ae.After))
			}
			if r.OnRetryAfter != nil {
				r.OnRetryAfter(min(ae.After, maxB))
			}
			wait = min(max(wait, ae.After), maxB)
		}
		if dl, ok := ctx.Deadline(); ok && r.now().Add(wait).After(dl) {
			return fail("no time left to retry")
		}
		if err := r.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s: %w", r.Service, err)
		}
	}
}

func (r *Retrier) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Retrier) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Backoff is the wait after failed attempt n (from 0): min doubled n times,
// capped at max, with full jitter in its upper half so callers that failed
// together do not retry together.
func Backoff(minD, maxD time.Duration, n int) time.Duration {
	d := minD
	for i := 0; i < n && d < maxD; i++ {
		d *= 2
	}
	d = min(d, maxD)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits d or until ctx ends, returning ctx.Err() then.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseRetryAfter reads a Retry-After header, delay seconds or an HTTP
// date, relative to now. It returns 0 when the header is absent, unreadable
// or in the past, and caps it at a day.
func ParseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		if s > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// Response is an answer read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// ErrTooLarge marks an answer longer than the caller's bound.
var ErrTooLarge = errors.New("answer too large")

// Get sends one GET with its own timeout and reads at most maxBody bytes.
// Transport failures, timeouts and interrupted reads are retryable
// *AttemptErrors whose text never contains the URL (it may carry addresses
// or an e-mail); a cancelled ctx returns ctx.Err(). Every status is
// returned as a Response; use StatusError to classify it.
func Get(ctx context.Context, client *http.Client, u string, header http.Header, timeout time.Duration, maxBody int64) (*Response, error) {
	if client == nil {
		client = http.DefaultClient
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if actx.Err() != nil {
			return nil, Retryable(fmt.Errorf("no answer within %s", timeout))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, Retryable(fmt.Errorf("request failed: %w", err))
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if actx.Err() != nil {
			return nil, &AttemptError{Err: fmt.Errorf("answer not complete within %s", timeout), Retry: true, Status: resp.StatusCode}
		}
		return nil, &AttemptError{Err: fmt.Errorf("reading the answer: %w", err), Retry: true, Status: resp.StatusCode}
	}
	if int64(len(body)) > maxBody {
		return nil, fmt.Errorf("%w: more than %d bytes (HTTP %d)", ErrTooLarge, maxBody, resp.StatusCode)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// Transient reports whether status is worth retrying: 429 or any 5xx.
func Transient(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// RetryStatus wraps err, describing a transient answer, as a retryable
// attempt carrying the status and the server's Retry-After.
func RetryStatus(resp *Response, err error, now time.Time) *AttemptError {
	return &AttemptError{Err: err, Retry: true, Status: resp.Status, After: ParseRetryAfter(resp.Header.Get("Retry-After"), now)}
}
