package httpkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// script answers the i-th request with steps[i] (the last one repeats).
type step struct {
	status     int
	retryAfter string
	body       string
	block      bool // wait for the client to give up
}

func serve(t *testing.T, steps ...step) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		s := steps[min(i, len(steps)-1)]
		if s.block {
			<-r.Context().Done()
			return
		}
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(s.status)
		_, _ = fmt.Fprint(w, s.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// fetch is how a provider uses the kit: Get, then classify the status.
func fetch(ctx context.Context, r *Retrier, u string, timeout time.Duration) ([]byte, error) {
	var body []byte
	err := r.Do(ctx, func(ctx context.Context, _ int) error {
		resp, err := Get(ctx, nil, u, http.Header{"User-Agent": {"test"}}, timeout, 1<<10)
		if err != nil {
			return err
		}
		if Transient(resp.Status) {
			return RetryStatus(resp, fmt.Errorf("HTTP %d", resp.Status), r.now())
		}
		if resp.Status != http.StatusOK {
			return fmt.Errorf("refused: HTTP %d", resp.Status)
		}
		body = resp.Body
		return nil
	})
	return body, err
}

// recorder replaces the Retrier's sleep: it records waits without waiting.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *recorder) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits = append(c.waits, d)
	return ctx.Err()
}

func TestRetrier(t *testing.T) {
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		steps    []step
		abort    bool // AbortLongRetryAfter
		requests int64
		body     string
		errHas   []string // empty: success
		waits    []time.Duration
	}{
		{
			name:     "429 then 200",
			steps:    []step{{status: 429}, {status: 200, body: "ok"}},
			requests: 2, body: "ok",
		},
		{
			name:     "Retry-After seconds",
			steps:    []step{{status: 429, retryAfter: "7"}, {status: 200, body: "ok"}},
			requests: 2, body: "ok", waits: []time.Duration{7 * time.Second},
		},
		{
			name:     "Retry-After HTTP date",
			steps:    []step{{status: 503, retryAfter: now.Add(12 * time.Second).Format(http.TimeFormat)}, {status: 200, body: "ok"}},
			requests: 2, body: "ok", waits: []time.Duration{12 * time.Second},
		},
		{
			name:     "Retry-After capped at MaxBackoff",
			steps:    []step{{status: 503, retryAfter: "3600"}, {status: 200, body: "ok"}},
			requests: 2, body: "ok", waits: []time.Duration{30 * time.Second},
		},
		{
			name:     "Retry-After beyond MaxBackoff aborts",
			steps:    []step{{status: 429, retryAfter: "3600"}, {status: 200}},
			abort:    true,
			requests: 1, errHas: []string{"svc", "asked to retry after 1h0m0s", "HTTP 429"},
		},
		{
			name:     "500 exhaustion",
			steps:    []step{{status: 500}},
			requests: 3, errHas: []string{"svc: failed after 3 attempt(s)", "last: HTTP 500"},
		},
		{
			name:     "other 4xx not retried",
			steps:    []step{{status: 404}},
			requests: 1, errHas: []string{"refused: HTTP 404"},
		},
		{
			name:     "body too large not retried",
			steps:    []step{{status: 200, body: strings.Repeat("x", 2<<10)}},
			requests: 1, errHas: []string{"answer too large"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := serve(t, tt.steps...)
			rec := &recorder{}
			r := &Retrier{Service: "svc", Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 30 * time.Second,
				AbortLongRetryAfter: tt.abort, Sleep: rec.sleep, Now: func() time.Time { return now }}
			body, err := fetch(context.Background(), r, srv.URL, 5*time.Second)
			if got := n.Load(); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			if len(tt.errHas) == 0 {
				if err != nil || string(body) != tt.body {
					t.Fatalf("fetch = %q, %v; want %q", body, err, tt.body)
				}
			} else {
				if err == nil {
					t.Fatal("no error")
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
			}
			if tt.waits != nil && fmt.Sprint(rec.waits) != fmt.Sprint(tt.waits) {
				t.Errorf("waits = %v, want %v", rec.waits, tt.waits)
			}
		})
	}
}

func TestRetrierExhaustionIsRetryError(t *testing.T) {
	srv, _ := serve(t, step{status: 503})
	r := &Retrier{Service: "svc", Attempts: 2, Sleep: (&recorder{}).sleep}
	_, err := fetch(context.Background(), r, srv.URL, 5*time.Second)
	var re *RetryError
	if !errors.As(err, &re) || re.Status != 503 || re.Attempts != 2 || re.Service != "svc" {
		t.Fatalf("err = %#v", err)
	}
}

func TestPerAttemptTimeout(t *testing.T) {
	srv, n := serve(t, step{block: true})
	r := &Retrier{Service: "svc", Attempts: 2, Sleep: (&recorder{}).sleep}
	_, err := fetch(context.Background(), r, srv.URL, 20*time.Millisecond)
	var re *RetryError
	if !errors.As(err, &re) || re.Status != 0 || !strings.Contains(err.Error(), "no answer within 20ms") || !strings.Contains(err.Error(), "last: no answer") {
		t.Fatalf("err = %v", err)
	}
	if n.Load() != 2 {
		t.Fatalf("requests = %d, want 2", n.Load())
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("an attempt's timeout reads as the caller's deadline")
	}
}

func TestCancelDuringWait(t *testing.T) {
	srv, n := serve(t, step{status: 503, retryAfter: "3600"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &Retrier{Service: "svc", Attempts: 5, MaxBackoff: 2 * time.Hour}
	done := make(chan error, 1)
	go func() {
		_, err := fetch(ctx, r, srv.URL, 5*time.Second)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for n.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no request reached the server")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the wait")
	}
	if n.Load() != 1 {
		t.Fatalf("requests = %d, want 1", n.Load())
	}
}

func TestNoWaitPastDeadline(t *testing.T) {
	srv, n := serve(t, step{status: 429, retryAfter: "20"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := &Retrier{Service: "svc", Attempts: 3, MaxBackoff: time.Minute}
	_, err := fetch(ctx, r, srv.URL, time.Second)
	if err == nil || !strings.Contains(err.Error(), "no time left to retry") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if n.Load() != 1 {
		t.Fatalf("requests = %d, want 1", n.Load())
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"5", 5 * time.Second},
		{" 0 ", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), 24 * time.Hour},
		{"99999999999", 24 * time.Hour},
	} {
		if got := ParseRetryAfter(tt.h, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %s, want %s", tt.h, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	for n := range 40 {
		d := Backoff(250*time.Millisecond, 10*time.Second, n)
		upper := min(250*time.Millisecond<<min(n, 10), 10*time.Second)
		if d < upper/2 || d > upper {
			t.Fatalf("Backoff(%d) = %v, want within [%v, %v]", n, d, upper/2, upper)
		}
	}
}

// A provider's classification of a final failure survives Do.
func TestFinalErrorKeptAsItIs(t *testing.T) {
	sentinel := errors.New("service unavailable")
	calls := 0
	err := (&Retrier{Service: "svc", Attempts: 3}).Do(context.Background(), func(context.Context, int) error {
		calls++
		return fmt.Errorf("%w: %w", sentinel, &AttemptError{Err: ErrTooLarge})
	})
	if !errors.Is(err, sentinel) || !errors.Is(err, ErrTooLarge) || calls != 1 {
		t.Fatalf("err = %v after %d call(s)", err, calls)
	}
}
