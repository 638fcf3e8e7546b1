package integration

import (
	"routeopt.io/routeopt/test/requests"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// Every request the integration tests send through system.call, and every
// response they get, is validated against the OpenAPI document the server
// serves at /openapi.json, with kin-openapi's openapi3filter (which
// validates OpenAPI 3.1 documents with a JSON Schema 2020-12 validator). The
// rules:
//
//   - The response must be one the document describes: a documented status
//     of the operation (undocumented statuses fail), its headers
//     (X-Request-ID on every response, WWW-Authenticate on 401, Retry-After
//     on 429 and 503) and a body matching the schema. A request to a route
//     the document does not have must be answered 405 method_not_allowed
//     when the path is documented with other methods and 404 not_found
//     otherwise, with the error envelope and X-Request-ID; under /v1 a
//     missing or wrong key is 401 unauthorized first, as on every /v1 route.
//   - A request marked deliberately invalid (system.callInvalid) must be
//     refused by the document.
//   - An unmarked request the document refuses (a test of bad input that
//     does not say so) must be refused by the server too, with a 4xx other
//     than 409, or 503: the server may never accept what the document
//     refuses. Values only the pydantic-style lax coercion accepts ("2" for
//     an integer) therefore need callInvalid.
//   - A request the document accepts may be refused with 422 only for the
//     rules a schema cannot state (value_error: the location rule, unique
//     ids, time order; idempotency_key_reused); any other 422 means the
//     document is laxer than the code.

var apiDoc struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// openAPI loads the document from the first server that asks, once.
func openAPI(t *testing.T, s *system) (*openapi3.T, routers.Router) {
	t.Helper()
	apiDoc.once.Do(func() {
		resp, err := http.Get(s.url + "/openapi.json")
		if err != nil {
			apiDoc.err = err
			return
		}
		defer func() { _ = resp.Body.Close() }()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			apiDoc.err = err
			return
		}
		if resp.StatusCode != http.StatusOK {
			apiDoc.err = fmt.Errorf("GET /openapi.json: %d %s", resp.StatusCode, raw)
			return
		}
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(raw)
		if err != nil {
			apiDoc.err = fmt.Errorf("loading /openapi.json: %w", err)
			return
		}
		if err := doc.Validate(loader.Context); err != nil {
			apiDoc.err = fmt.Errorf("/openapi.json is not a valid OpenAPI document: %w", err)
			return
		}
		// The document's only server is "/", the host serving it; the
		// router cannot know that host, so it matches paths on any host.
		doc.Servers = nil
		apiDoc.doc = doc
		apiDoc.router, apiDoc.err = legacy.NewRouter(doc)
	})
	if apiDoc.err != nil {
		t.Fatalf("openapi: %v", apiDoc.err)
	}
	return apiDoc.doc, apiDoc.router
}

// bearerPresent is the AuthenticationFunc of request validation: the
// document requires an Authorization: Bearer <token> header; whether the
// token is a valid key is the server's to say (401 is documented).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no Authorization: Bearer <API key> header")
	}
	return nil
}

func filterOptions() *openapi3filter.Options {
	o := &openapi3filter.Options{
		MultiError:            true,
		IncludeResponseStatus: true,
		SkipSettingDefaults:   true,
		AuthenticationFunc:    bearerPresent,
	}
	// Name the place and the mismatch, without dumping the whole schema.
	o.WithCustomSchemaErrorFunc(func(err *openapi3.SchemaError) string {
		return fmt.Sprintf("at /%s: %s", strings.Join(err.JSONPointer(), "/"), err.Reason)
	})
	return o
}

// requestCheck is the outcome of validating one request, kept to judge the
// response against.
type requestCheck struct {
	doc        *openapi3.T
	what       string // "GET /v1/..."
	path       string // the request's path
	input      *openapi3filter.RequestValidationInput
	routeErr   error  // the document has no such operation
	pathKnown  bool   // ... but has the path with other methods
	requestErr error  // the document refuses the request
	invalidWhy string // the test says the request is deliberately invalid
}

// checkRequest validates req (which it consumes) against the document.
func checkRequest(t *testing.T, s *system, req *http.Request, invalidWhy string) *requestCheck {
	t.Helper()
	doc, router := openAPI(t, s)
	c := &requestCheck{doc: doc, what: req.Method + " " + req.URL.RequestURI(), path: req.URL.Path, invalidWhy: invalidWhy}
	route, params, err := router.FindRoute(req)
	if err != nil {
		c.routeErr = err
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			other := req.Clone(context.Background())
			other.Method = m
			if _, _, err := router.FindRoute(other); err == nil {
				c.pathKnown = true
			}
		}
	} else {
		c.input = &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: filterOptions()}
		c.requestErr = openapi3filter.ValidateRequest(context.Background(), c.input)
	}
	if invalidWhy != "" && c.routeErr == nil && c.requestErr == nil {
		t.Errorf("openapi: %s is marked deliberately invalid (%s), but the document accepts it: the document is laxer than the contract", c.what, invalidWhy)
	}
	return c
}

// semantic422 are the 422 detail types of rules no schema states.
var semantic422 = []string{"value_error", "idempotency_key_reused"}

// response validates the answer to the checked request.
func (c *requestCheck) response(t *testing.T, status int, header http.Header, body []byte) {
	t.Helper()
	if header.Get("X-Request-ID") == "" {
		t.Errorf("openapi: %s answered %d without X-Request-ID", c.what, status)
	}
	if c.routeErr != nil {
		c.offDocument(t, status, header, body)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: c.input,
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                filterOptions(),
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("openapi: %s answered %d, which the document does not describe:\n%v\nbody: %s", c.what, status, err, clip(body))
	}
	switch {
	case c.requestErr != nil && c.invalidWhy == "":
		refused := status >= 400 && status < 500 && status != http.StatusConflict || status == http.StatusServiceUnavailable
		if !refused {
			t.Errorf("openapi: the document refuses %s, but the server answered %d:\n%v\nbody: %s", c.what, status, c.requestErr, clip(body))
		}
	case c.requestErr == nil && status == http.StatusUnprocessableEntity:
		var v struct {
			Detail []struct {
				Type string `json:"type"`
				Loc  []any  `json:"loc"`
				Msg  string `json:"msg"`
			} `json:"detail"`
		}
		_ = json.Unmarshal(body, &v)
		for _, d := range v.Detail {
			if !slices.Contains(semantic422, d.Type) {
				t.Errorf("openapi: the document accepts %s, but the server refused it with %s at %v (%q): the document is laxer than the code", c.what, d.Type, d.Loc, d.Msg)
			}
		}
	}
}

// offDocument checks the answer to a route the document does not have:
// 405 method_not_allowed on a documented path, else 404 not_found, with the
// error envelope of components.responses.
func (c *requestCheck) offDocument(t *testing.T, status int, header http.Header, body []byte) {
	t.Helper()
	want, name := http.StatusNotFound, "NotFound"
	if c.pathKnown {
		want, name = http.StatusMethodNotAllowed, "MethodNotAllowed"
	} else if status == http.StatusUnauthorized && (c.path == "/v1" || strings.HasPrefix(c.path, "/v1/")) {
		want, name = http.StatusUnauthorized, "Unauthorized"
	}
	if status != want {
		t.Errorf("openapi: %s is not in the document (%v), so the answer must be %d, got %d: %s", c.what, c.routeErr, want, status, clip(body))
		return
	}
	mt := c.doc.Components.Responses[name].Value.Content.Get(header.Get("Content-Type"))
	if mt == nil {
		t.Errorf("openapi: %s answered %d with Content-Type %q, not the document's", c.what, status, header.Get("Content-Type"))
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("openapi: %s answered %d with a body that is not JSON: %s", c.what, status, clip(body))
		return
	}
	if err := mt.Schema.Value.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		t.Errorf("openapi: %s answered %d with a body that is not components.responses.%s:\n%v\nbody: %s", c.what, status, name, err, clip(body))
	}
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

// The document and Swagger UI are served without an API key, from assets in
// the binary.
func TestOpenAPIDocumentAndDocs(t *testing.T) {
	s := startSystem(t, "inprocess")
	doc, _ := openAPI(t, s)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	for path, wantType := range map[string]string{
		"/openapi.json":                         "application/json",
		"/docs":                                 "text/html",
		"/docs/":                                "text/html",
		"/docs/swagger-ui-bundle.js":            "javascript",
		"/docs/swagger-ui.css":                  "text/css",
		"/docs/swagger-ui-standalone-preset.js": "javascript",
	} {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), wantType) || len(raw) == 0 {
			t.Errorf("GET %s without a key: %d %q, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(raw))
		}
		if resp.Header.Get("X-Request-ID") == "" {
			t.Errorf("GET %s: no X-Request-ID", path)
		}
		if strings.HasPrefix(wantType, "text/html") && !strings.Contains(string(raw), `"/openapi.json"`) {
			t.Errorf("GET %s: the UI does not load /openapi.json", path)
		}
	}

	// The validation the other tests rely on refuses what it must.
	t.Run("deliberately invalid requests are refused by both", func(t *testing.T) {
		bad := requests.TenOrders(1)
		bad["fleet"].(map[string]any)["count"] = "2" // lax coercion: accepted by the server, not by the contract
		status, _, _ := s.callInvalid(t, "fleet.count as a string", "POST", "/v1/optimizations", bad, map[string]string{"Idempotency-Key": "openapi-lax-count-01"})
		if status != http.StatusAccepted {
			t.Errorf("lax coercion: %d", status)
		}
		status, _, _ = s.callInvalid(t, "Idempotency-Key too short", "POST", "/v1/optimizations", requests.TenOrders(1), map[string]string{"Idempotency-Key": "short"})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("short key: %d", status)
		}
		status, _, _ = s.callInvalid(t, "page_size above 100", "GET", "/v1/optimizations?page_size=101", nil, nil)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("page_size: %d", status)
		}
		status, _, _ = s.callInvalid(t, "not a UUID", "GET", "/v1/optimizations/not-a-uuid/result", nil, nil)
		if status != http.StatusUnprocessableEntity {
			t.Errorf("uuid: %d", status)
		}
		status, _, _ = s.callInvalid(t, "invalid JSON", "POST", "/v1/optimizations", `{"depot": `, map[string]string{"Idempotency-Key": "openapi-bad-json-01"})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("invalid JSON: %d", status)
		}
		status, _, _ = s.callInvalid(t, "unknown field in an order", "POST", "/v1/optimizations",
			func() map[string]any {
				b := requests.TenOrders(1)
				b["orders"].([]map[string]any)[0]["colour"] = "red"
				return b
			}(),
			map[string]string{"Idempotency-Key": "openapi-extra-field-01"})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("unknown field: %d", status)
		}
		status, _, _ = s.callInvalid(t, "both vehicles and fleet", "POST", "/v1/optimizations",
			func() map[string]any {
				b := requests.TenOrders(1)
				b["vehicles"] = []any{map[string]any{"id": "v1", "capacity": 10}}
				return b
			}(),
			map[string]string{"Idempotency-Key": "openapi-both-fleets-01"})
		if status != http.StatusUnprocessableEntity {
			t.Errorf("vehicles and fleet: %d", status)
		}
		status, _, _ = s.call(t, "PUT", "/v1/optimizations", nil, nil)
		if status != http.StatusMethodNotAllowed {
			t.Errorf("wrong method: %d", status)
		}
		status, _, _ = s.call(t, "GET", "/v2/optimizations", nil, nil)
		if status != http.StatusNotFound {
			t.Errorf("unknown route: %d", status)
		}
	})
}
