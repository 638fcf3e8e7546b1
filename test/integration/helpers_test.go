package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// call sends a JSON request with the system's API key and decodes the answer.
// The request and the response are checked against the OpenAPI document the
// server serves (see openapi_test.go): a request the document refuses must
// be refused by the server too, and every response must be one the document
// describes for that operation and status.
func (s *system) call(t *testing.T, method, path string, body any, headers map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	return s.do(t, method, path, body, headers, "")
}

// callInvalid is call for a request the test sends knowing that it breaks the
// documented contract (a wrong type, a bound, an unknown field, or a value
// only the server's pydantic-style lax coercion accepts, such as "2" for an
// integer). why says how. The document must refuse the request; the
// response is validated all the same.
func (s *system) callInvalid(t *testing.T, why, method, path string, body any, headers map[string]string) (int, map[string]any, http.Header) {
	t.Helper()
	if why == "" {
		t.Fatal("callInvalid needs a reason")
	}
	return s.do(t, method, path, body, headers, why)
}

func (s *system) do(t *testing.T, method, path string, body any, headers map[string]string, invalidWhy string) (int, map[string]any, http.Header) {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	newRequest := func() *http.Request {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, s.url+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		return req
	}
	check := checkRequest(t, s, newRequest(), invalidWhy)
	resp, err := http.DefaultClient.Do(newRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	rawResp, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	check.response(t, resp.StatusCode, resp.Header, rawResp)
	var out map[string]any
	if len(rawResp) > 0 {
		if err := json.Unmarshal(rawResp, &out); err != nil {
			t.Fatalf("%s %s: answer is not a JSON object: %v: %s", method, path, err, rawResp)
		}
	}
	return resp.StatusCode, out, resp.Header
}

// waitFor polls cond until it is true or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
