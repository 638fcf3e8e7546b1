package integration

import (
	"routeopt.io/routeopt/test/requests"

	"net/http"
	"testing"

	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// errorCode extracts error.code of the error envelope.
func errorCode(t *testing.T, body map[string]any) string {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error envelope: %v", body)
	}
	if _, ok := e["message"].(string); !ok {
		t.Fatalf("error without message: %v", body)
	}
	if _, ok := e["fields"]; !ok {
		t.Fatalf("error without fields: %v", body)
	}
	return e["code"].(string)
}

func TestAuthTenancyAndErrors(t *testing.T) {
	s := startSystem(t, "inprocess")
	other := startSystem(t, "inprocess")
	opt := createViaREST(t, s, "errors-test-key-01", requests.TenOrders(1))

	readOnly := *s.withKey(t, apikey.ScopeOptimizationsRead)
	noKey := *s
	noKey.apiKey = ""
	badKey := *s
	badKey.apiKey = "svc_sk_thisKeyDoesNotExist0123456789abcdef"

	tests := map[string]struct {
		sys        *system
		method     string
		path       string
		body       any
		wantStatus int
		wantCode   string
	}{
		"no key":                          {&noKey, "GET", "/v1/me", nil, 401, webserver.CodeUnauthorized},
		"unknown key":                     {&badKey, "GET", "/v1/optimizations", nil, 401, webserver.CodeUnauthorized},
		"read-only key cannot create":     {&readOnly, "POST", "/v1/optimizations", requests.TenOrders(1), 403, webserver.CodeInsufficientScope},
		"read-only key reads":             {&readOnly, "GET", "/v1/optimizations/" + opt.Name, nil, 200, ""},
		"another company's id":            {other, "GET", "/v1/optimizations/" + opt.Name, nil, 404, webserver.CodeNotFound},
		"another company's result":        {other, "GET", "/v1/optimizations/" + opt.Name + "/result", nil, 404, webserver.CodeNotFound},
		"unknown id":                      {s, "GET", "/v1/optimizations/00000000-0000-4000-8000-000000000000", nil, 404, webserver.CodeNotFound},
		"unknown route":                   {s, "GET", "/v1/nothing-here", nil, 404, webserver.CodeNotFound},
		"wrong method":                    {s, "DELETE", "/v1/optimizations", nil, 405, webserver.CodeMethodNotAllowed},
		"me needs only a valid key":       {&readOnly, "GET", "/v1/me", nil, 200, ""},
		"another company's list is empty": {other, "GET", "/v1/optimizations", nil, 200, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			status, body, hdr := tc.sys.call(t, tc.method, tc.path, tc.body, map[string]string{"Idempotency-Key": "errors-test-key-02"})
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %v", status, tc.wantStatus, body)
			}
			if tc.wantCode != "" {
				if code := errorCode(t, body); code != tc.wantCode {
					t.Errorf("code %q, want %q", code, tc.wantCode)
				}
			}
			if status == http.StatusUnauthorized && hdr.Get("WWW-Authenticate") != "Bearer" {
				t.Errorf("401 without WWW-Authenticate: Bearer")
			}
			if hdr.Get("X-Request-ID") == "" {
				t.Error("no X-Request-ID")
			}
		})
	}

	t.Run("insufficient scope names the scope", func(t *testing.T) {
		_, body, _ := readOnly.call(t, "POST", "/v1/optimizations", requests.TenOrders(1), map[string]string{"Idempotency-Key": "errors-test-key-03"})
		fields := body["error"].(map[string]any)["fields"].(map[string]any)
		if fields["required_scope"] != apikey.ScopeOptimizationsWrite {
			t.Errorf("fields %v", fields)
		}
	})
	t.Run("malformed id is a 422 at the path", func(t *testing.T) {
		status, body, _ := s.call(t, "GET", "/v1/optimizations/not-a-uuid", nil, nil)
		if status != 422 {
			t.Fatalf("status %d: %v", status, body)
		}
		d := body["detail"].([]any)[0].(map[string]any)
		if d["type"] != "uuid_parsing" || d["loc"].([]any)[0] != "path" {
			t.Errorf("detail %v", d)
		}
	})
	t.Run("a result asked too early is 409", func(t *testing.T) {
		early := createViaREST(t, s, "errors-test-early-1", requests.TenOrders(5))
		status, body, _ := s.call(t, "GET", "/v1/optimizations/"+early.Name+"/result", nil, nil)
		if status != 409 || errorCode(t, body) != webserver.CodeResultNotReady {
			t.Errorf("status %d body %v", status, body)
		}
	})
	t.Run("a request echoes X-Request-ID", func(t *testing.T) {
		_, _, hdr := s.call(t, "GET", "/v1/me", nil, map[string]string{"X-Request-ID": "trace-abc-123"})
		if hdr.Get("X-Request-ID") != "trace-abc-123" {
			t.Errorf("X-Request-ID %q", hdr.Get("X-Request-ID"))
		}
	})
	t.Run("a bad body is a 422 that changes nothing", func(t *testing.T) {
		bad := requests.TenOrders(1)
		bad["unexpected"] = true
		status, body, _ := s.call(t, "POST", "/v1/optimizations", bad, map[string]string{"Idempotency-Key": "errors-test-bad-01"})
		if status != 422 {
			t.Fatalf("status %d: %v", status, body)
		}
		_, list, _ := s.call(t, "GET", "/v1/optimizations", nil, nil)
		for _, it := range list["items"].([]any) {
			if it.(map[string]any)["id"] == webserver.OptimizationID(s.namespace, "errors-test-bad-01") {
				t.Error("a refused request created an optimization")
			}
		}
	})
}
