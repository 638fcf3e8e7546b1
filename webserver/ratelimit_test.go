package webserver

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"routeopt.io/routeopt/webserver/apikey"
)

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
			wrong := apikey.Prefix + strings.Repeat("x", 40)
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
