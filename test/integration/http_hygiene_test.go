package integration

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/portal"
)

// hygieneAPI is the REST API alone (no manager) for a fresh tenant.
type hygieneAPI struct {
	url, key string
}

func startHygieneAPI(t *testing.T) hygieneAPI {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	company := "it-" + randomHex(4)
	if _, err := tenant.Create(ctx, k8sClient, company, "Integration "+company, operatorNamespace); err != nil {
		t.Fatal(err)
	}
	key := newAPIKey(t, company, apikey.AllScopes...)
	url, _ := startAPI(ctx, t, cfg, v1alpha1.TenantNamespace(company), nil)
	t.Cleanup(cancel) // before startAPI's cleanup, which waits for the cache to stop
	api := hygieneAPI{url: url, key: key}
	waitFor(t, 10*time.Second, "the key in the API's cache", func() (bool, error) {
		status, _, _ := api.send(t, "GET", "/v1/me", "", nil)
		return status == http.StatusOK, nil
	})
	return api
}

// rawClient follows no redirects and leaves Accept-Encoding and
// decompression to the test, so it sees the bytes the server sends.
var rawClient = &http.Client{
	Timeout:   30 * time.Second,
	Transport: &http.Transport{DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// send makes one request with the API key and returns the raw answer.
func (a hygieneAPI) send(t *testing.T, method, path, body string, headers map[string]string) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw, resp.Header
}

// create stores a valid optimization and returns its id.
func (a hygieneAPI) create(t *testing.T) string {
	t.Helper()
	status, raw, _ := a.send(t, "POST", "/v1/optimizations", cfBTop(""), map[string]string{
		"Content-Type": "application/json", "Idempotency-Key": "hygiene-" + randomHex(8),
	})
	if status != http.StatusAccepted {
		t.Fatalf("create: %d %s", status, raw)
	}
	var rec struct{ ID string }
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

// Bodies are read as FastAPI reads them: JSON with no Content-Type,
// application/json with parameters or application/*+json; text and forms
// are one model_attributes_type at ["body"] echoing the text, beside the
// header's own errors.
func TestHTTPContentType(t *testing.T) {
	api := startHygieneAPI(t)
	type entry struct {
		Loc   []any
		Type  string
		Input any
	}
	notModel := func(input string) entry {
		return entry{Loc: []any{"body"}, Type: "model_attributes_type", Input: input}
	}
	idemKey := func() string { return "ct-" + randomHex(8) }
	for _, tc := range []struct {
		name, contentType, body string
		noIdempotencyKey        bool
		want                    int
		details                 []entry
	}{
		{name: "no content type", body: cfBTop(""), want: http.StatusAccepted},
		{name: "json with charset", contentType: "application/json; charset=utf-8", body: cfBTop(""), want: http.StatusAccepted},
		{name: "+json type", contentType: "application/merge-patch+json", body: cfBTop(""), want: http.StatusAccepted},
		{name: "text", contentType: "text/plain", body: "<b>&", want: 422, details: []entry{notModel("<b>&")}},
		{name: "text holding JSON", contentType: "text/plain; charset=utf-8", body: cfBTop(""), want: 422, details: []entry{notModel(cfBTop(""))}},
		{name: "form", contentType: "application/x-www-form-urlencoded", body: "a=1&b=2", want: 422, details: []entry{notModel("a=1&b=2")}},
		{name: "multipart", contentType: "multipart/form-data; boundary=XX", body: "--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XX--\r\n", want: 422,
			details: []entry{notModel("--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XX--\r\n")}},
		{name: "malformed type", contentType: "json", body: cfBTop(""), want: 422, details: []entry{notModel(cfBTop(""))}},
		{name: "text without idempotency key", contentType: "text/plain", body: "x", noIdempotencyKey: true, want: 422,
			details: []entry{{Loc: []any{"header", "idempotency-key"}, Type: "missing"}, notModel("x")}},
		{name: "empty text body", contentType: "text/plain", want: 422, details: []entry{{Loc: []any{"body"}, Type: "missing"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := map[string]string{}
			if tc.contentType != "" {
				headers["Content-Type"] = tc.contentType
			}
			if !tc.noIdempotencyKey {
				headers["Idempotency-Key"] = idemKey()
			}
			status, raw, _ := api.send(t, "POST", "/v1/optimizations", tc.body, headers)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, raw)
			}
			if tc.details == nil {
				return
			}
			var got struct{ Detail []entry }
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%v: %s", err, raw)
			}
			if len(got.Detail) != len(tc.details) {
				t.Fatalf("details %s, want %d", raw, len(tc.details))
			}
			for i, want := range tc.details {
				d := got.Detail[i]
				if d.Type != want.Type || !equalJSON(d.Loc, want.Loc) || (want.Input != nil && d.Input != want.Input) {
					t.Errorf("detail %d = %+v, want %+v", i, d, want)
				}
			}
		})
	}
	// Every handler with a body reads it the same way.
	for _, path := range []string{"/v1/webhooks", "/v1/api-keys"} {
		status, raw, _ := api.send(t, "POST", path, "hello", map[string]string{"Content-Type": "text/plain"})
		if status != 422 || !bytes.Contains(raw, []byte(`"type":"model_attributes_type"`)) || !bytes.Contains(raw, []byte(`"input":"hello"`)) {
			t.Errorf("POST %s as text: %d %s", path, status, raw)
		}
	}
	// An export's body is optional: an empty text body means the defaults
	// (here the optimization is not completed yet), a non-empty one is refused.
	id := api.create(t)
	if status, raw, _ := api.send(t, "POST", "/v1/optimizations/"+id+"/exports", "", map[string]string{"Content-Type": "text/plain"}); status != http.StatusConflict {
		t.Errorf("export with an empty text body: %d %s", status, raw)
	}
	if status, raw, _ := api.send(t, "POST", "/v1/optimizations/"+id+"/exports", "csv", map[string]string{"Content-Type": "text/plain"}); status != 422 || !bytes.Contains(raw, []byte(`"input":"csv"`)) {
		t.Errorf("export with a text body: %d %s", status, raw)
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// HEAD is answered wherever GET is, with GET's status and headers and no
// body; a HEAD where no GET is served is a 405 like any other method.
func TestHTTPHead(t *testing.T) {
	api := startHygieneAPI(t)
	id := api.create(t)
	for _, path := range []string{
		"/healthz", "/openapi.json", "/docs", "/docs/index.html",
		"/portal", "/portal/", "/portal/optimizations/" + id, "/portal/no-such-asset.js",
		"/v1/me", "/v1/optimizations", "/v1/optimizations?page=0", "/v1/optimizations/" + id,
		"/v1/optimizations/" + id + "/result", "/v1/optimizations/00000000-0000-0000-0000-000000000000",
		"/v1/webhooks", "/v1/api-keys", "/v1/exports/nope?sig=x",
	} {
		t.Run(path, func(t *testing.T) {
			getStatus, getBody, getHdr := api.send(t, "GET", path, "", nil)
			headStatus, headBody, headHdr := api.send(t, "HEAD", path, "", nil)
			if headStatus != getStatus || headStatus == http.StatusMethodNotAllowed {
				t.Fatalf("HEAD %d, GET %d", headStatus, getStatus)
			}
			if len(headBody) != 0 {
				t.Errorf("HEAD answered a body: %q", headBody)
			}
			for _, h := range []string{"Content-Type", "Content-Length", "Location", "Allow", "WWW-Authenticate"} {
				// net/http writes Content-Length: 0 for an empty GET only.
				if h == "Content-Length" && len(getBody) == 0 {
					continue
				}
				if headHdr.Get(h) != getHdr.Get(h) {
					t.Errorf("%s: HEAD %q, GET %q", h, headHdr.Get(h), getHdr.Get(h))
				}
			}
			if cl := getHdr.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(getBody)) {
				t.Errorf("GET Content-Length %s for %d bytes", cl, len(getBody))
			}
			if headHdr.Get("X-Request-ID") == "" {
				t.Error("HEAD without X-Request-ID")
			}
		})
	}
	status, _, hdr := api.send(t, "HEAD", "/v1/optimizations/"+id+"/cancel", "", nil)
	if status != http.StatusMethodNotAllowed || hdr.Get("X-Request-ID") == "" {
		t.Errorf("HEAD on a POST-only route: %d %v", status, hdr)
	}
}

// Redirects, 404s and 405s carry X-Request-ID (the client's, echoed), and
// 404s and 405s the JSON error envelope.
func TestHTTPRedirectsAndRoutingErrors(t *testing.T) {
	api := startHygieneAPI(t)
	for _, tc := range []struct {
		method, path string
		want         int
		code         string // the envelope's code; "" for a redirect
		location     string
	}{
		{"GET", "/healthz/", http.StatusMovedPermanently, "", "/healthz"},
		{"GET", "/v1/me/", http.StatusMovedPermanently, "", "/v1/me"},
		{"POST", "/v1/optimizations/", http.StatusTemporaryRedirect, "", "/v1/optimizations"},
		{"GET", "/no-such-route", http.StatusNotFound, webserver.CodeNotFound, ""},
		{"GET", "/v1/no-such-route", http.StatusNotFound, webserver.CodeNotFound, ""},
		{"DELETE", "/v1/optimizations", http.StatusMethodNotAllowed, webserver.CodeMethodNotAllowed, ""},
		{"PUT", "/healthz", http.StatusMethodNotAllowed, webserver.CodeMethodNotAllowed, ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rid := "rid-" + randomHex(6)
			status, raw, hdr := api.send(t, tc.method, tc.path, "", map[string]string{"X-Request-ID": rid})
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, raw)
			}
			if got := hdr.Get("X-Request-ID"); got != rid {
				t.Errorf("X-Request-ID %q, want %q", got, rid)
			}
			if tc.code == "" {
				if got := hdr.Get("Location"); got != tc.location {
					t.Errorf("Location %q, want %q", got, tc.location)
				}
				return
			}
			var env struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(raw, &env); err != nil || env.Error.Code != tc.code || env.Error.Message == "" {
				t.Errorf("body %s (%v), want code %s", raw, err, tc.code)
			}
			if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q", hdr.Get("Content-Type"))
			}
		})
	}
}

// Answers are gzip-compressed for clients that accept it, above a minimum
// size, with Vary: Accept-Encoding; small answers, HEAD and clients that do
// not accept gzip get the plain body with its Content-Length.
func TestHTTPGzip(t *testing.T) {
	api := startHygieneAPI(t)
	for range 3 {
		api.create(t)
	}
	gz := map[string]string{"Accept-Encoding": "gzip"}
	for _, path := range []string{"/openapi.json", "/v1/optimizations", portal.AssetsPath + "app.js"} {
		t.Run(path, func(t *testing.T) {
			_, plain, plainHdr := api.send(t, "GET", path, "", nil)
			status, raw, hdr := api.send(t, "GET", path, "", gz)
			if status != http.StatusOK || hdr.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%d, Content-Encoding %q", status, hdr.Get("Content-Encoding"))
			}
			if !strings.Contains(hdr.Get("Vary"), "Accept-Encoding") || !strings.Contains(plainHdr.Get("Vary"), "Accept-Encoding") {
				t.Errorf("Vary %q / %q", hdr.Get("Vary"), plainHdr.Get("Vary"))
			}
			if cl := hdr.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(raw)) {
				t.Errorf("compressed Content-Length %s for %d bytes", cl, len(raw))
			}
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
				t.Error("compressed twice")
			}
			if path != "/v1/optimizations" && !bytes.Equal(body, plain) { // list ages change between calls
				t.Errorf("decompressed body differs from the plain one (%d vs %d bytes)", len(body), len(plain))
			}
			if plainHdr.Get("Content-Encoding") != "" || len(plain) < 1024 {
				t.Errorf("plain answer: Content-Encoding %q, %d bytes", plainHdr.Get("Content-Encoding"), len(plain))
			}
			_, headBody, headHdr := api.send(t, "HEAD", path, "", gz)
			if len(headBody) != 0 || headHdr.Get("Content-Encoding") != "" {
				t.Errorf("HEAD: %d bytes, Content-Encoding %q", len(headBody), headHdr.Get("Content-Encoding"))
			}
		})
	}
	// Below the minimum size the body goes out as it is.
	status, raw, hdr := api.send(t, "GET", "/healthz", "", gz)
	if status != http.StatusOK || hdr.Get("Content-Encoding") != "" || hdr.Get("Content-Length") != strconv.Itoa(len(raw)) || string(raw) != `{"status":"ok"}` {
		t.Errorf("small answer: %d %q %v", status, raw, hdr)
	}
}

// JSON answers are not HTML-escaped: `<API_KEY>`, not `\u003cAPI_KEY\u003e`.
func TestHTTPNoHTMLEscaping(t *testing.T) {
	api := startHygieneAPI(t)
	noKey := hygieneAPI{url: api.url}
	for _, tc := range []struct {
		name, method, path, body string
		headers                  map[string]string
		api                      hygieneAPI
		want                     string
	}{
		{"401 message", "GET", "/v1/me", "", nil, noKey, "Bearer <API_KEY>"},
		{"422 input", "POST", "/v1/optimizations", `{"depot":"<b>&</b>"}`, map[string]string{"Idempotency-Key": "esc-" + randomHex(8)}, api, `"input":"<b>&</b>"`},
		{"422 text input", "POST", "/v1/webhooks", "<x>", map[string]string{"Content-Type": "text/plain"}, api, `"input":"<x>"`},
		{"OpenAPI document", "GET", "/openapi.json", "", nil, noKey, "t=<unix_seconds>,v1=<hex>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, raw, _ := tc.api.send(t, tc.method, tc.path, tc.body, tc.headers)
			if !bytes.Contains(raw, []byte(tc.want)) {
				t.Errorf("answer lacks %s: %.400s", tc.want, raw)
			}
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if bytes.Contains(raw, []byte(esc)) {
					t.Errorf("answer holds %s: %.400s", esc, raw)
				}
			}
		})
	}
}

// Errors answered before a handler runs: header fields over the documented
// 32 KiB get 431 in the envelope with the request id, up to the server's
// 1 MiB; past it, and for requests net/http cannot parse or serve, net/http
// answers itself in plain text (the README says so).
func TestHTTPErrorsBeforeHandlers(t *testing.T) {
	api := startHygieneAPI(t)
	host := strings.TrimPrefix(api.url, "http://")
	request := func(line, padding string) string {
		return line + "\r\nHost: " + host + "\r\nAuthorization: Bearer " + api.key + "\r\nX-Request-ID: before-handlers\r\nX-Padding: " + padding + "\r\n\r\n"
	}
	for _, tc := range []struct {
		name, request string
		want          int
		// envelope is the code of an answer in the error envelope; empty
		// for net/http's own plain-text answers.
		envelope string
	}{
		{"headers within 32 KiB", request("GET /v1/me HTTP/1.1", strings.Repeat("p", 16<<10)), http.StatusOK, ""},
		{"headers over 32 KiB", request("GET /v1/me HTTP/1.1", strings.Repeat("p", webserver.MaxHeaderBytes)), http.StatusRequestHeaderFieldsTooLarge, webserver.CodeHeadersTooLarge},
		{"headers over 1 MiB", request("GET /v1/me HTTP/1.1", strings.Repeat("p", webserver.HardMaxHeaderBytes+8192)), http.StatusRequestHeaderFieldsTooLarge, ""},
		{"malformed request line", "GET /v1/me\r\nHost: " + host + "\r\n\r\n", http.StatusBadRequest, ""},
		{"bad Content-Length", "POST /v1/optimizations HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: -5\r\n\r\n", http.StatusBadRequest, ""},
		{"unsupported Transfer-Encoding", "POST /v1/optimizations HTTP/1.1\r\nHost: " + host + "\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented, ""},
		{"HTTP/3.0", request("GET /v1/me HTTP/3.0", "x"), http.StatusHTTPVersionNotSupported, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawExchange(t, host, tc.request)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tc.want, body)
			}
			if tc.want == http.StatusOK {
				return
			}
			if tc.envelope == "" {
				if resp.Header.Get("X-Request-ID") != "" || json.Valid(body) {
					t.Errorf("net/http's own answer changed (the README describes it): %v %s", resp.Header, body)
				}
				return
			}
			if got := resp.Header.Get("X-Request-ID"); got != "before-handlers" {
				t.Errorf("X-Request-ID %q", got)
			}
			var e struct {
				Error struct {
					Code   string
					Fields map[string]any
				}
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tc.envelope {
				t.Errorf("body %s (%v), want code %s", body, err, tc.envelope)
			}
		})
	}
}

// rawExchange writes request on a new connection to host as it is and
// reads the answer; the write goes on beside the read, since a server may
// answer before it has read the whole request.
func rawExchange(t *testing.T, host, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	go func() { _, _ = io.WriteString(conn, request) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}
