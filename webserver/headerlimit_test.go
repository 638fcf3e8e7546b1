package webserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Header fields over the documented limit get 431 in the error envelope,
// with the request id; below it the request is served.
func TestLargeHeaders(t *testing.T) {
	ts, key := budgetTestServer(t, 0, false, Options{})
	for _, tc := range []struct {
		name       string
		size       int
		wantStatus int
	}{
		{"within the limit", MaxHeaderBytes / 2, http.StatusOK},
		{"over the limit", MaxHeaderBytes + 1, http.StatusRequestHeaderFieldsTooLarge},
		{"far over the limit, below the server's cap", HardMaxHeaderBytes / 2, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, ts.URL+"/v1/me", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("X-Request-ID", "large-headers")
			req.Header.Set("X-Padding", strings.Repeat("p", tc.size))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if got := resp.Header.Get("X-Request-ID"); got != "large-headers" {
				t.Errorf("X-Request-ID %q", got)
			}
			if tc.wantStatus == http.StatusOK {
				return
			}
			var body errorBody
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Code != CodeHeadersTooLarge || body.Error.Fields["max_header_bytes"] != float64(MaxHeaderBytes) {
				t.Errorf("body %+v", body)
			}
		})
	}
}
