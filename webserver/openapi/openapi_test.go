package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/openapi"
	"routeopt.io/routeopt/webserver/schema"
)

// load reads the document as GET /openapi.json serves it.
func load(t *testing.T) *openapi3.T {
	t.Helper()
	rec := httptest.NewRecorder()
	openapi.DocumentHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, openapi.DocumentPath, nil))
	doc, err := openapi3.NewLoader().LoadFromData(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("loading the document: %v", err)
	}
	return doc
}

func TestDocumentIsValid(t *testing.T) {
	doc := load(t)
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Version != "1.0.0" {
		t.Errorf("info.version %q, want 1.0.0, the public API's version", doc.Info.Version)
	}
}

// TestDocumentCoversEndpoints checks every endpoint of the public API and
// routeopt's API-key extension, the event webhooks and the error
// responses of each (docs/API.md, "Endpoints").
func TestDocumentCoversEndpoints(t *testing.T) {
	doc := load(t)
	want := map[string][]string{
		"POST /v1/optimizations":                           {"202", "401", "403", "413", "422", "429", "500", "503"},
		"GET /v1/optimizations":                            {"200", "401", "403", "422", "429", "500", "503"},
		"GET /v1/optimizations/{optimization_id}":          {"200", "401", "403", "404", "422", "429", "500", "503"},
		"GET /v1/optimizations/{optimization_id}/result":   {"200", "401", "403", "404", "409", "422", "429", "500", "503"},
		"POST /v1/optimizations/{optimization_id}/cancel":  {"200", "401", "403", "404", "409", "422", "429", "500", "503"},
		"POST /v1/optimizations/{optimization_id}/exports": {"201", "401", "403", "404", "409", "413", "422", "429", "500", "503"},
		"GET /v1/webhooks":                                 {"200", "401", "403", "429", "500", "503"},
		"POST /v1/webhooks":                                {"201", "401", "403", "409", "413", "422", "429", "500", "503"},
		"DELETE /v1/webhooks/{webhook_id}":                 {"204", "401", "403", "404", "422", "429", "500", "503"},
		"GET /v1/me":                                       {"200", "401", "429", "500", "503"},
		// API keys: a routeopt extension.
		"GET /v1/api-keys":             {"200", "401", "403", "429", "500", "503"},
		"POST /v1/api-keys":            {"201", "401", "403", "409", "413", "422", "429", "500", "503"},
		"DELETE /v1/api-keys/{key_id}": {"204", "401", "403", "404", "422", "429", "500", "503"},
		// The download link of an export: signed, no API key.
		"GET /v1/exports/{export_id}": {"200", "403", "404", "409", "410", "500", "503"},
	}
	// Operations that take no API key.
	public := map[string]bool{"GET /v1/exports/{export_id}": true}
	seen := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			codes, ok := want[key]
			if !ok {
				t.Errorf("%s is not an endpoint of the API", key)
				continue
			}
			seen++
			if public[key] {
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s needs no API key, but does not say so (security: [])", key)
				}
			} else if op.Security != nil && len(*op.Security) == 0 || op.Security == nil && len(doc.Security) == 0 {
				t.Errorf("%s has no security requirement", key)
			}
			for _, code := range codes {
				r := op.Responses.Status(atoi(code))
				if r == nil {
					t.Errorf("%s: no %s response", key, code)
					continue
				}
				if r.Value.Headers["X-Request-ID"] == nil {
					t.Errorf("%s %s: no X-Request-ID header", key, code)
				}
			}
			if n := op.Responses.Len(); n != len(codes) {
				t.Errorf("%s documents %d responses, want %d", key, n, len(codes))
			}
		}
	}
	if seen != len(want) {
		t.Errorf("%d operations documented, want %d", seen, len(want))
	}
	create := doc.Paths.Find("/v1/optimizations").Post
	key := create.Parameters.GetByInAndName("header", "Idempotency-Key")
	if key == nil || !key.Required || *key.Schema.Value.MaxLength != 128 || key.Schema.Value.MinLength != 8 {
		t.Errorf("Idempotency-Key: %+v", key)
	}
	for _, ev := range []string{"optimization.completed", "optimization.failed", "optimization.cancelled"} {
		item := doc.Webhooks[ev]
		if item == nil || item.Post == nil || item.Post.Parameters.GetByInAndName("header", "Service-Signature") == nil {
			t.Errorf("webhook %s is not described with its Service-Signature header", ev)
		}
	}
	if s := doc.Components.SecuritySchemes["bearerAuth"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("bearerAuth security scheme: %+v", s)
	}
	for name, hdr := range map[string]string{"Unauthorized": "WWW-Authenticate", "RateLimited": "Retry-After", "Unavailable": "Retry-After"} {
		if doc.Components.Responses[name].Value.Headers[hdr] == nil {
			t.Errorf("response %s has no %s header", name, hdr)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestSchemas pins down how the validator reads the request and response
// schemas: the 3.1 nullable types, bounds, patterns, the vehicles/fleet rule,
// unknown fields.
func TestSchemas(t *testing.T) {
	doc := load(t)
	valid := `{"name": null, "depot": {"label": "Depot", "latitude": 52.52, "longitude": 13.405},
	  "orders": [{"id": "A-1", "latitude": 52.53, "longitude": 13.38, "time_window_start": "09:00", "time_window_end": "12:00", "address": null}],
	  "fleet": {"count": 2, "capacity": 8}, "vehicles": null, "options": {"solver_seconds": null}}`
	constrained := `{"depot": {"latitude": 52.52, "longitude": 13.405},
	  "orders": [{"id": "A-1", "latitude": 52.53, "longitude": 13.38, "time_windows": [{"start": "09:00", "end": "10:00"}],
	    "skills": ["fridge"], "loads": {"weight_kg": 120}, "priority": 100}],
	  "fleet": {"count": 2, "capacity": 8, "skills": ["fridge"], "capacities": {"weight_kg": 1000},
	    "breaks": [{"start": "12:00", "end": "13:00", "minutes": 30}], "max_duration_minutes": 480,
	    "max_distance_km": 250.5, "max_stops": 40, "start": {"address": "Yard Street 1"}, "end": null, "open_end": true}}`
	route := `{"vehicle_ref": "van-1", "driver_name": null, "depart_s": 28800, "return_s": 36000, "distance_m": 1200, "load": 1, "capacity": 8,
	  "loads": {"weight_kg": 120}, "capacities": {"weight_kg": 1000}, "start": {"latitude": 52.5, "longitude": 13.4, "address": ""},
	  "end": {"latitude": 52.4, "longitude": 13.3, "address": "Home Street 1"}, "breaks": [{"start_s": 43200, "end_s": 45000, "after_seq": 0}], "stops": []}`
	order := func(m map[string]any) map[string]any { return m["orders"].([]any)[0].(map[string]any) }
	fleet := func(m map[string]any) map[string]any { return m["fleet"].(map[string]any) }
	tests := []struct {
		schema string
		body   string
		patch  func(m map[string]any)
		ok     bool
	}{
		{"OptimizationIn", valid, nil, true},
		{"OptimizationIn", valid, func(m map[string]any) { m["typo"] = 1 }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["vehicles"] = []any{map[string]any{"id": "v", "capacity": 1}} }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["fleet"] = nil }, false},
		{"OptimizationIn", valid, func(m map[string]any) {
			m["fleet"] = nil
			m["vehicles"] = []any{map[string]any{"id": "v", "capacity": 1, "shift_start": "07:30"}}
		}, true},
		{"OptimizationIn", valid, func(m map[string]any) { m["fleet"].(map[string]any)["count"] = 101 }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["fleet"].(map[string]any)["count"] = "2" }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["fleet"].(map[string]any)["capacity"] = 0 }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["orders"].([]any)[0].(map[string]any)["time_window_end"] = "24:00" }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["orders"].([]any)[0].(map[string]any)["demand"] = nil }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["orders"].([]any)[0].(map[string]any)["id"] = strings.Repeat("é", 80) }, true},
		{"OptimizationIn", valid, func(m map[string]any) { m["orders"].([]any)[0].(map[string]any)["id"] = strings.Repeat("é", 81) }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["orders"] = []any{} }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["options"] = map[string]any{"strategy": "fastest"} }, false},
		{"OptimizationIn", valid, func(m map[string]any) { m["depot"].(map[string]any)["extra"] = true }, false},
		{"OptimizationIn", constrained, nil, true},
		{"OptimizationIn", constrained, func(m map[string]any) { order(m)["loads"] = map[string]any{"": 1} }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { order(m)["loads"] = map[string]any{} }, false},
		{"OptimizationIn", constrained, func(m map[string]any) {
			order(m)["loads"] = map[string]any{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}
		}, false},
		{"OptimizationIn", constrained, func(m map[string]any) { order(m)["priority"] = nil }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { order(m)["time_windows"] = []any{} }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { order(m)["skills"] = []any{""} }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { fleet(m)["capacities"] = map[string]any{"weight_kg": 0} }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { fleet(m)["breaks"].([]any)[0].(map[string]any)["minutes"] = 481 }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { fleet(m)["max_distance_km"] = 0 }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { fleet(m)["open_end"] = nil }, false},
		{"OptimizationIn", constrained, func(m map[string]any) { fleet(m)["start"] = map[string]any{"city": "Berlin"} }, false},
		{"OptimizationIn", constrained, func(m map[string]any) {
			m["vehicles"] = []any{map[string]any{"id": "v", "capacity": 1, "capacities": map[string]any{"weight_kg": 1}, "end": nil, "max_stops": 500}}
			m["fleet"] = nil
		}, true},
		{"Route", route, nil, true},
		{"Route", route, func(m map[string]any) { m["end"] = nil }, true},
		{"Route", route, func(m map[string]any) { m["start"] = nil }, false},
		{"Route", route, func(m map[string]any) { m["breaks"] = []any{map[string]any{"start_s": 1, "end_s": 2}} }, false},
		{"Unassigned", `{"order_ref": "A-1", "reason": "skills_missing", "message": "no vehicle has the skill fridge"}`, nil, true},
		{"Unassigned", `{"order_ref": "A-1", "reason": "route_limit", "message": "every vehicle is at max_stops"}`, nil, true},
		{"HTTPValidationError", `{"detail": [{"type": "missing", "loc": ["body", "orders", 0, "id"], "msg": "Field required", "input": {}}]}`, nil, true},
		{"HTTPValidationError", `{"detail": [{"type": "missing", "loc": ["cookie"], "msg": "Field required", "input": {}}]}`, nil, false},
		{"Error", `{"error": {"code": "not_found", "message": "x", "fields": null}}`, nil, true},
		{"Error", `{"error": {"code": "not_found", "message": "x"}}`, nil, false},
		{"Optimization", `{"id": "74664201-cd11-59b0-af6c-dddd4df97de2", "name": null, "status": "failed", "stage": "matrix", "progress": 40,
		  "strategy": "optimized", "orders": 10, "vehicles": 2, "error_code": "matrix_unavailable", "error_message": "down",
		  "created_at": "2026-11-22T09:30:00Z", "finished_at": null, "links": {"self": "https://x.test/v1/optimizations/1", "result": "https://x.test/r", "web": "https://x.test/w"}}`, nil, true},
		{"Optimization", `{"id": "74664201-cd11-59b0-af6c-dddd4df97de2", "name": null, "status": "done", "stage": "matrix", "progress": 40,
		  "strategy": "optimized", "orders": 10, "vehicles": 2, "error_code": null, "error_message": null,
		  "created_at": "2026-11-22T09:30:00Z", "finished_at": null, "links": {"self": "https://x.test/v1/optimizations/1", "result": "https://x.test/r", "web": "https://x.test/w"}}`, nil, false},
		{"WebhookEndpointCreated", `{"id": "74664201-cd11-59b0-af6c-dddd4df97de2", "url": "https://hooks.example.com/x", "created_at": "2026-11-22T09:30:00Z",
		  "last_status": null, "failure_count": 0, "disabled": false, "secret": "whsec_svc_abc"}`, nil, true},
		{"WebhookEndpoint", `{"id": "74664201-cd11-59b0-af6c-dddd4df97de2", "url": "https://hooks.example.com/x", "created_at": "2026-11-22T09:30:00Z",
		  "last_status": 500, "failure_count": 3, "disabled": false, "secret": "whsec_svc_abc"}`, nil, false},
		{"APIKeyIn", `{"name": "dispatch app", "scopes": ["optimizations:read", "keys:write"]}`, nil, true},
		{"APIKeyIn", `{"name": "dispatch app", "scopes": ["optimizations:read", "optimizations:read"]}`, nil, false},
		{"APIKeyIn", `{"name": "dispatch app", "scopes": []}`, nil, false},
		{"APIKeyIn", `{"name": "dispatch app", "scopes": ["keys:read"]}`, nil, false},
		{"APIKeyIn", `{"name": "", "scopes": ["keys:write"]}`, nil, false},
		{"APIKeyIn", `{"scopes": ["keys:write"]}`, nil, false},
		{"APIKeyIn", `{"name": "x", "scopes": ["keys:write"], "expires": null}`, nil, false},
		{"APIKeyCreated", `{"id": "3f9a0c1d2e4b5a69", "name": "x", "prefix": "svc_sk_7Hq2", "scopes": ["keys:write"], "created_at": "2026-11-22T09:30:00Z",
		  "last_used_at": null, "key": "svc_sk_0123456789012345678901234567890123456789abc"}`, nil, true},
		{"APIKey", `{"id": "3f9a0c1d2e4b5a69", "name": "x", "prefix": "svc_sk_7Hq2", "scopes": ["keys:write"], "created_at": "2026-11-22T09:30:00Z",
		  "last_used_at": "2026-11-22T09:31:00Z", "key": "svc_sk_0123456789012345678901234567890123456789abc"}`, nil, false},
		{"APIKey", `{"id": "3F9A0C1D2E4B5A69", "name": "x", "prefix": "svc_sk_7Hq2", "scopes": [], "created_at": "2026-11-22T09:30:00Z", "last_used_at": null}`, nil, false},
	}
	for i, tc := range tests {
		var v map[string]any
		if err := json.Unmarshal([]byte(tc.body), &v); err != nil {
			t.Fatal(err)
		}
		if tc.patch != nil {
			tc.patch(v)
		}
		var value any = v
		s := doc.Components.Schemas[tc.schema].Value
		err := s.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors())
		if (err == nil) != tc.ok {
			raw, _ := json.Marshal(v)
			t.Errorf("case %d: %s %s: valid=%v, want %v: %v", i, tc.schema, raw, err == nil, tc.ok, err)
		}
	}
}

func TestHandlers(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(openapi.DocumentPath, openapi.DocumentHandler())
	mux.Handle(openapi.DocsPath, openapi.DocsHandler())
	mux.Handle(openapi.DocsPath+"/", openapi.DocsHandler())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get(openapi.DocumentPath)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !json.Valid([]byte(body)) {
		t.Fatalf("%s: %d %s", openapi.DocumentPath, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, body = get(openapi.DocsPath)
	if resp.StatusCode != 200 || !strings.Contains(body, "swagger-ui") || !strings.Contains(body, openapi.DocumentPath) {
		t.Fatalf("%s: %d %s", openapi.DocsPath, resp.StatusCode, body)
	}
	if strings.Contains(body, "://") && (strings.Contains(body, "src=\"http") || strings.Contains(body, "href=\"http")) {
		t.Errorf("the UI page loads assets from another host:\n%s", body)
	}
	for _, asset := range []string{"swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css"} {
		if !strings.Contains(body, openapi.DocsPath+"/"+asset) {
			t.Errorf("the UI page does not load %s from %s/", asset, openapi.DocsPath)
		}
		if resp, b := get(openapi.DocsPath + "/" + asset); resp.StatusCode != 200 || len(b) < 1000 {
			t.Errorf("%s: %d, %d bytes", asset, resp.StatusCode, len(b))
		}
	}
}

// TestDocumentMatchesCode ties the document to the constants the handlers
// and the request validation use, so a change on one side shows here.
func TestDocumentMatchesCode(t *testing.T) {
	doc := load(t)
	schemas := doc.Components.Schemas
	codes := schemas["Error"].Value.Properties["error"].Value.Properties["code"].Value.Enum
	for _, code := range []string{
		webserver.CodeBadRequest, webserver.CodeUnauthorized, webserver.CodeInsufficientScope, webserver.CodeNotFound,
		webserver.CodeMethodNotAllowed, webserver.CodeResultNotReady, webserver.CodeInvalidState,
		webserver.CodePayloadTooLarge, webserver.CodeRateLimited, webserver.CodeUnavailable, webserver.CodeInternal,
		webserver.CodeInvalidSignature, webserver.CodeLinkExpired,
		webserver.CodeWebhookLimitReached, webserver.CodeAPIKeyLimitReached,
	} {
		if !slices.Contains(codes, any(code)) {
			t.Errorf("error code %q is not in the document's Error.code enum", code)
		}
	}
	scopes := schemas["Scope"].Value.Enum
	if len(scopes) != len(apikey.AllScopes) {
		t.Errorf("document scopes %v, code %v", scopes, apikey.AllScopes)
	}
	for _, s := range apikey.AllScopes {
		if !slices.Contains(scopes, any(s)) {
			t.Errorf("scope %q is not in the document", s)
		}
	}
	if p := schemas["HHMM"].Value.Pattern; p != schema.TimePattern {
		t.Errorf("HHMM pattern %q, code %q", p, schema.TimePattern)
	}
	stop := schemas["Stop"].Value.Properties
	for _, f := range []string{"time_window_start", "time_window_end"} {
		if p := stop[f].Value.Pattern; p != schema.TimePattern {
			t.Errorf("Stop.%s pattern %q, code %q", f, p, schema.TimePattern)
		}
	}
	if p := schemas["KeyID"].Value.Pattern; p != schema.KeyIDPattern {
		t.Errorf("KeyID pattern %q, code %q", p, schema.KeyIDPattern)
	}
	keyIn := schemas["APIKeyIn"].Value.Properties
	if m := keyIn["scopes"].Value.MaxItems; m == nil || int(*m) != len(apikey.AllScopes) {
		t.Errorf("APIKeyIn.scopes maxItems %v, code %d scopes", m, len(apikey.AllScopes))
	}
	if m := keyIn["name"].Value.MaxLength; m == nil || int(*m) != schema.MaxAPIKeyName {
		t.Errorf("APIKeyIn.name maxLength %v, code %d", m, schema.MaxAPIKeyName)
	}
	limit := doc.Components.Responses["APIKeyLimitReached"].Value.Content.Get("application/json").Schema.Value.AllOf[1].Value.
		Properties["error"].Value.Properties["fields"].Value.Properties["limit"].Value.Enum
	if len(limit) != 1 || fmt.Sprint(limit[0]) != fmt.Sprint(apikey.MaxPerCompany) {
		t.Errorf("APIKeyLimitReached limit %v, code %d", limit, apikey.MaxPerCompany)
	}
	formats := schemas["ExportIn"].Value.Properties["format"].Value.Enum
	if fmt.Sprint(formats) != fmt.Sprint(schema.ExportFormats) {
		t.Errorf("ExportIn.format enum %v, code %v", formats, schema.ExportFormats)
	}
	key := doc.Components.Parameters["IdempotencyKey"].Value.Schema.Value
	if key.MinLength != schema.MinIdempotencyKey || key.MaxLength == nil || *key.MaxLength != schema.MaxIdempotencyKey {
		t.Errorf("Idempotency-Key length %d to %v, code %d to %d", key.MinLength, key.MaxLength, schema.MinIdempotencyKey, schema.MaxIdempotencyKey)
	}
	pageSize := doc.Components.Parameters["PageSize"].Value.Schema.Value
	if m := pageSize.Max; m == nil || *m != schema.MaxPageSize || fmt.Sprint(pageSize.Default) != fmt.Sprint(schema.DefaultPageSize) {
		t.Errorf("page_size maximum %v default %v, code %d and %d", m, pageSize.Default, schema.MaxPageSize, schema.DefaultPageSize)
	}
	if m := schemas["OptimizationList"].Value.Properties["page_size"].Value.Max; m == nil || *m != schema.MaxPageSize {
		t.Errorf("OptimizationList.page_size maximum %v, code %d", m, schema.MaxPageSize)
	}
	in := schemas["OptimizationIn"].Value.Properties
	if m := in["orders"].Value.MaxItems; m == nil || *m != schema.MaxOrders {
		t.Errorf("orders maxItems %v, code %d", m, schema.MaxOrders)
	}
	if m := in["vehicles"].Value.MaxItems; m == nil || *m != schema.MaxVehicles {
		t.Errorf("vehicles maxItems %v, code %d", m, schema.MaxVehicles)
	}
	if m := schemas["FleetIn"].Value.Properties["count"].Value.Max; m == nil || *m != schema.MaxFleet {
		t.Errorf("fleet count maximum %v, code %d", m, schema.MaxFleet)
	}
	if m := schemas["VehicleIn"].Value.Properties["capacity"].Value.Max; m == nil || *m != schema.MaxQuantity {
		t.Errorf("capacity maximum %v, code %v", m, schema.MaxQuantity)
	}
	for _, b := range []struct {
		field string
		got   *uint64
		want  int
	}{
		{"OrderIn.time_windows maxItems", schemas["OrderIn"].Value.Properties["time_windows"].Value.MaxItems, schema.MaxTimeWindows},
		{"OrderIn.skills maxItems", schemas["OrderIn"].Value.Properties["skills"].Value.MaxItems, schema.MaxSkills},
		{"OrderIn.skills[] maxLength", schemas["OrderIn"].Value.Properties["skills"].Value.Items.Value.MaxLength, schema.MaxNameLength},
		{"OrderIn.loads maxProperties", schemas["OrderIn"].Value.Properties["loads"].Value.MaxProps, schema.MaxDimensions},
		{"OrderIn.loads names maxLength", schemas["OrderIn"].Value.Properties["loads"].Value.PropertyNames.Value.MaxLength, schema.MaxNameLength},
		{"VehicleIn.skills maxItems", schemas["VehicleIn"].Value.Properties["skills"].Value.MaxItems, schema.MaxSkills},
		{"VehicleIn.capacities maxProperties", schemas["VehicleIn"].Value.Properties["capacities"].Value.MaxProps, schema.MaxDimensions},
		{"VehicleIn.breaks maxItems", schemas["VehicleIn"].Value.Properties["breaks"].Value.MaxItems, schema.MaxBreaks},
	} {
		if b.got == nil || int(*b.got) != b.want {
			t.Errorf("%s %v, code %d", b.field, b.got, b.want)
		}
	}
	for _, b := range []struct {
		field string
		got   *float64
		want  float64
	}{
		{"OrderIn.priority maximum", schemas["OrderIn"].Value.Properties["priority"].Value.Max, schema.MaxPriority},
		{"BreakIn.minutes maximum", schemas["BreakIn"].Value.Properties["minutes"].Value.Max, schema.MaxBreakMinutes},
		{"VehicleIn.max_duration_minutes maximum", schemas["VehicleIn"].Value.Properties["max_duration_minutes"].Value.Max, schema.MaxDurationMinutes},
		{"VehicleIn.max_distance_km maximum", schemas["VehicleIn"].Value.Properties["max_distance_km"].Value.Max, schema.MaxDistanceKm},
		{"VehicleIn.max_stops maximum", schemas["VehicleIn"].Value.Properties["max_stops"].Value.Max, schema.MaxStops},
	} {
		if b.got == nil || *b.got != b.want {
			t.Errorf("%s %v, code %v", b.field, b.got, b.want)
		}
	}
	// A fleet's constraints are a vehicle's, for each of its vehicles.
	for _, name := range []string{"skills", "capacities", "breaks", "max_duration_minutes", "max_distance_km", "max_stops", "start", "end", "open_end"} {
		v, f := schemas["VehicleIn"].Value.Properties[name], schemas["FleetIn"].Value.Properties[name]
		if v == nil || f == nil || !reflect.DeepEqual(v.Value, f.Value) {
			t.Errorf("VehicleIn.%s and FleetIn.%s differ", name, name)
		}
	}
	defaults := map[string]any{
		"OrderIn.demand": schema.DefaultDemand, "OrderIn.service_minutes": schema.DefaultServiceMinutes,
		"OrderIn.priority": 0, "VehicleIn.open_end": false, "FleetIn.open_end": false,
		"FleetIn.shift_start": schema.DefaultShiftStart, "FleetIn.shift_end": schema.DefaultShiftEnd,
		"VehicleIn.shift_start": schema.DefaultShiftStart, "VehicleIn.shift_end": schema.DefaultShiftEnd,
		"FleetIn.name_prefix": schema.DefaultNamePrefix, "OptionsIn.strategy": schema.DefaultStrategy,
		"OptionsIn.objective": schema.DefaultObjective, "ExportIn.format": schema.DefaultExportFormat,
	}
	for field, want := range defaults {
		name, prop, _ := strings.Cut(field, ".")
		got := schemas[name].Value.Properties[prop].Value.Default
		if got != want && fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s default %v, code %v", field, got, want)
		}
	}
}
