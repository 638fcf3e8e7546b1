package webserver

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAuthFailureLimiter(t *testing.T) {
	l := newAuthFailureLimiter(1, 3)
	now := time.Unix(1_700_000_000, 0)
	if blocked, _ := l.blocked("192.0.2.1", now); blocked {
		t.Fatal("a source that never failed is blocked")
	}
	for i := range 3 {
		if blocked, _ := l.blocked("192.0.2.1", now); blocked {
			t.Fatalf("blocked after %d failures of a burst of 3", i)
		}
		l.failed("192.0.2.1", now)
	}
	blocked, wait := l.blocked("192.0.2.1", now)
	if !blocked || wait <= 0 || wait > time.Second {
		t.Fatalf("after the burst: blocked %v, wait %s; want blocked for at most 1 s", blocked, wait)
	}
	if blocked, _ := l.blocked("192.0.2.2", now); blocked {
		t.Error("another source is blocked too")
	}
	if blocked, _ := l.blocked("192.0.2.1", now.Add(wait)); blocked {
		t.Errorf("still blocked after the wait it gave (%s)", wait)
	}
}

func TestAuthFailureLimiterForgetsLeastRecentSources(t *testing.T) {
	l := newAuthFailureLimiter(1, 1)
	now := time.Unix(1_700_000_000, 0)
	l.failed("first", now)
	for i := range failedAuthSources {
		l.failed(string(rune('a'+i%26))+time.Duration(i).String(), now)
	}
	if got := l.buckets.Len(); got != failedAuthSources {
		t.Errorf("%d sources remembered, want at most %d", got, failedAuthSources)
	}
	if blocked, _ := l.blocked("first", now); blocked {
		t.Error("the least recently failing source is still remembered")
	}
}

func TestSourceKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":                  "192.0.2.7",
		"::ffff:192.0.2.7":           "192.0.2.7",
		"2001:db8:1:2:aaaa::1":       "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff::99": "2001:db8:1:2::/64",
		"not an address":             "not an address",
	} {
		if got := sourceKey(in); got != want {
			t.Errorf("sourceKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// A source address that keeps failing authentication is refused with 429
// before its key is even checked; behind a trusted proxy the source is the
// client X-Forwarded-For names, and from anyone else that header is ignored.
func TestFailedAuthenticationsAreLimitedPerSource(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
		// forwarded is the X-Forwarded-For of the requests after the burst.
		forwarded string
		// wantWrong and wantValid answer a wrong and a valid key after it.
		wantWrong, wantValid int
	}{
		{"same source", nil, "", http.StatusTooManyRequests, http.StatusTooManyRequests},
		{"X-Forwarded-For from an untrusted peer is ignored", nil, "198.51.100.7", http.StatusTooManyRequests, http.StatusTooManyRequests},
		{"another client behind a trusted proxy", []string{"127.0.0.1/32"}, "198.51.100.7", http.StatusUnauthorized, http.StatusOK},
		{"the same client behind a trusted proxy", []string{"127.0.0.1/32"}, "198.51.100.1", http.StatusTooManyRequests, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, key := budgetTestServer(t, 0, false, Options{AuthFailureRate: 0.01, AuthFailureBurst: 3, TrustedProxies: tc.trusted})
			send := func(key, forwarded string) *http.Response {
				req, err := http.NewRequest(http.MethodGet, ts.URL+"/v1/me", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+key)
				if forwarded != "" {
					req.Header.Set("X-Forwarded-For", forwarded)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				return resp
			}
			wrong := APIKeyPrefix + strings.Repeat("x", 40)
			for i := range 3 {
				if resp := send(wrong, "198.51.100.1"); resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("wrong key %d within the burst: %d, want 401", i+1, resp.StatusCode)
				}
			}
			for _, k := range []struct {
				name, key string
				want      int
			}{{"wrong", wrong, tc.wantWrong}, {"valid", key, tc.wantValid}} {
				resp := send(k.key, tc.forwarded)
				if resp.StatusCode != k.want {
					t.Errorf("%s key past the burst: %d, want %d", k.name, resp.StatusCode, k.want)
				}
				if resp.StatusCode == http.StatusTooManyRequests {
					if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
						t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
					}
				}
			}
		})
	}
}
