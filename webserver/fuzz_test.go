package webserver

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/exportlink"
	"routeopt.io/routeopt/webserver/optcache"
	"routeopt.io/routeopt/webserver/schema"
)

// The fuzz targets here drive the whole handler, middleware included, over
// controller-runtime's fake client: the integration tests use a real API
// server, a fuzzer needs thousands of requests a second. Each asserts the
// answer's documented shape (a record, a 422 detail list, or the error
// envelope; never a 5xx) and, where one exists, a round trip.

const (
	fuzzTenant    = "fuzz"
	fuzzPublicURL = "https://routes.example.com"
)

// fuzzAPI is one API server over a fake cluster holding a key with every
// scope and one completed optimization with a stored result.
type fuzzAPI struct {
	handler http.Handler
	client  client.Client
	key     string
	opt     *v1alpha1.Optimization
}

// fuzzResolver answers every name with a public address, except names
// under internal.test, which resolve to a private one.
type fuzzResolver struct{}

func (fuzzResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(strings.TrimSuffix(host, "."), "internal.test") {
		return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

func newFuzzAPI(tb testing.TB) *fuzzAPI {
	tb.Helper()
	c := fakeClientBuilder(tb).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetUID() == "" {
				obj.SetUID(types.UID(uuid.NewString())) // as the API server does
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	ctx := context.Background()
	key, _, err := apikey.Create(ctx, c, apikey.Spec{Namespace: v1alpha1.DefaultOperatorNamespace, Tenant: fuzzTenant, Name: "fuzz", Scopes: apikey.AllScopes})
	if err != nil {
		tb.Fatal(err)
	}
	opt := completedOptimization(tb, ctx, c)
	policy, err := webhook.NewPolicy(nil, fuzzResolver{})
	if err != nil {
		tb.Fatal(err)
	}
	srv := New(c, c, c, logr.Discard(), Options{PublicURL: fuzzPublicURL, WebhookPolicy: policy, ExportLinkTTL: 24 * time.Hour})
	srv.index = optcache.NewIndex()
	srv.index.Upsert(opt)
	return &fuzzAPI{handler: srv.Handler(), client: c, key: key, opt: opt}
}

// completedOptimization stores a completed two-order optimization and its
// result (the stored form without a manifest).
func completedOptimization(tb testing.TB, ctx context.Context, c client.Client) *v1alpha1.Optimization {
	tb.Helper()
	lat, lon, lat1, lon1, lat2, lon2 := 52.52, 13.405, 52.5301, 13.3849, 52.5163, 13.3777
	customer, name := "Ada", "Tuesday deliveries"
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Name: "74664201-cd11-59b0-af6c-dddd4df97de2", Namespace: v1alpha1.TenantNamespace(fuzzTenant)},
		Spec: v1alpha1.OptimizationSpec{
			Name:  &name,
			Depot: v1alpha1.Depot{Latitude: &lat, Longitude: &lon},
			Orders: []v1alpha1.Order{
				{ID: "A-1", Latitude: &lat1, Longitude: &lon1, Customer: &customer},
				{ID: "A-2", Latitude: &lat2, Longitude: &lon2},
			},
			Fleet: &v1alpha1.Fleet{Count: 1, Capacity: 10},
		},
	}
	opt.Status.State = v1alpha1.StateCompleted // the fake client stores status on create
	if err := c.Create(ctx, opt); err != nil {
		tb.Fatal(err)
	}
	result, err := v1alpha1.EncodeResult(&v1alpha1.Result{
		ID: opt.Name, Status: v1alpha1.StateCompleted,
		Routes: []v1alpha1.Route{{VehicleRef: "van-1", Polyline: "_p~iF~ps|U_ulLnnqC_mqNvxq`@", Stops: []v1alpha1.Stop{
			{Seq: 1, OrderRef: "A-1", Latitude: lat1, Longitude: lon1},
			{Seq: 2, OrderRef: "A-2", Latitude: lat2, Longitude: lon2},
		}}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: opt.ResultConfigMapName(), Namespace: opt.Namespace},
		BinaryData: map[string][]byte{v1alpha1.ResultDataKey: result},
	}
	if err := c.Create(ctx, cm); err != nil {
		tb.Fatal(err)
	}
	return opt
}

// do serves one request with the API key, unless header sets Authorization.
func (a *fuzzAPI) do(method, target string, body []byte, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a.key)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, req)
	return rec
}

// validHeaderValue reports whether net/http would deliver v as a header
// value: no control characters but tab, and no leading or trailing
// white space (it trims that).
func validHeaderValue(v string) bool {
	if strings.Trim(v, " \t") != v {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f })
}

// pathSegment is s escaped as one path segment, or false when net/http
// would route it as something else (a slash, a dot segment, nothing).
func pathSegment(s string) (string, bool) {
	if s == "" || s == "." || s == ".." || strings.Contains(s, "/") {
		return "", false
	}
	return url.PathEscape(s), true
}

// answer decodes a JSON answer and checks its documented shape: a 422
// lists details whose loc starts with one of locs; any other error is the
// envelope with a code and a message. A 5xx is always a failure.
func answer(t *testing.T, rec *httptest.ResponseRecorder, locs ...string) map[string]any {
	t.Helper()
	if rec.Header().Get("X-Request-ID") == "" {
		t.Fatalf("status %d without X-Request-ID", rec.Code)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("status %d with a body that is not a JSON object: %v: %s", rec.Code, err, rec.Body.Bytes())
	}
	switch {
	case rec.Code >= 500:
		t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
	case rec.Code == http.StatusUnprocessableEntity:
		detail, ok := out["detail"].([]any)
		if !ok || len(detail) == 0 {
			t.Fatalf("422 without details: %v", out)
		}
		for _, d := range detail {
			e, ok := d.(map[string]any)
			loc, _ := e["loc"].([]any)
			if !ok || len(loc) == 0 || !slices.Contains(locs, fmtLoc(loc[0])) || e["type"] == "" || e["msg"] == "" {
				t.Fatalf("detail %v, want one at %q with a type and a message", d, locs)
			}
			if _, has := e["input"]; !has {
				t.Fatalf("detail without input %v", d)
			}
		}
	case rec.Code >= 400:
		e, _ := out["error"].(map[string]any)
		if code, _ := e["code"].(string); code == "" {
			t.Fatalf("status %d without an error code: %s", rec.Code, rec.Body.Bytes())
		}
		if msg, _ := e["message"].(string); msg == "" {
			t.Fatalf("status %d without a message: %s", rec.Code, rec.Body.Bytes())
		}
	}
	return out
}

// errorCode is an error envelope's code.
func errorCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

const fuzzOptimizationBody = `{"depot":{"latitude":52.5,"longitude":13.4},"orders":[{"id":"a","latitude":52.5,"longitude":13.4}],"fleet":{"count":1,"capacity":10}}`

// FuzzCreateOptimization drives POST /v1/optimizations with arbitrary
// bodies: every answer is 202 with a queued record or 422 with a
// well-formed detail list, as the body decoder decides.
func FuzzCreateOptimization(f *testing.F) {
	for _, seed := range []string{
		fuzzOptimizationBody,
		`{"depot":{"address":"Main street 1"},"orders":[{"id":"a","address":"x"}],"vehicles":[{"id":"v","capacity":"5"}]}`,
		`{"depot":`, `[]`, ``, `null`, `{"orders":[{"id":1}]}`,
	} {
		f.Add([]byte(seed))
	}
	a := newFuzzAPI(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, body []byte) {
		key := "fuzz-key-" + strconv.FormatInt(n.Add(1), 10)
		rec := a.do(http.MethodPost, "/v1/optimizations", body, http.Header{"Idempotency-Key": {key}})
		out := answer(t, rec, "body")
		_, details := schema.DecodeOptimizationIn(body)
		switch {
		case rec.Code == http.StatusAccepted && details == nil:
			if id, _ := out["id"].(string); id == "" || out["status"] != "queued" {
				t.Fatalf("202 without a queued record: %v", out)
			}
		case rec.Code == http.StatusUnprocessableEntity && details != nil:
		case rec.Code == http.StatusRequestEntityTooLarge && details == nil && errorCode(out) == CodePayloadTooLarge:
		default:
			t.Fatalf("status %d for a body with %d details: %s", rec.Code, len(details), rec.Body.Bytes())
		}
	})
}

// FuzzIdempotencyKey: a create is accepted exactly when its key has 8 to
// 128 bytes; the same request again answers the same record, and the same
// key with another request is idempotency_key_reused.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{"readme-walkthrough-1", "short", strings.Repeat("k", 128), strings.Repeat("k", 129), "ключ-ключ-1", "a\tb\tc\td\te", "\x80\x81\x82\x83\x84\x85\x86\x87"} {
		f.Add(s)
	}
	a := newFuzzAPI(f)
	other := []byte(strings.Replace(fuzzOptimizationBody, `"capacity":10`, `"capacity":11`, 1))
	f.Fuzz(func(t *testing.T, key string) {
		if !validHeaderValue(key) {
			return // net/http refuses or trims it before any handler runs
		}
		header := http.Header{"Idempotency-Key": {key}}
		rec := a.do(http.MethodPost, "/v1/optimizations", []byte(fuzzOptimizationBody), header)
		out := answer(t, rec, "header")
		if valid := len(key) >= 8 && len(key) <= 128; valid != (rec.Code == http.StatusAccepted) {
			t.Fatalf("key of %d bytes: status %d: %s", len(key), rec.Code, rec.Body.Bytes())
		}
		if rec.Code != http.StatusAccepted {
			return
		}
		again := answer(t, a.do(http.MethodPost, "/v1/optimizations", []byte(fuzzOptimizationBody), header), "header")
		if again["id"] != out["id"] {
			t.Fatalf("the same request with key %q created %v, then %v", key, out["id"], again["id"])
		}
		rec = a.do(http.MethodPost, "/v1/optimizations", other, header)
		reused := answer(t, rec, "header")
		detail, _ := reused["detail"].([]any)
		if rec.Code != http.StatusUnprocessableEntity || len(detail) != 1 || detail[0].(map[string]any)["type"] != "idempotency_key_reused" {
			t.Fatalf("another request with key %q: status %d: %s", key, rec.Code, rec.Body.Bytes())
		}
	})
}

// FuzzAuthorization: /v1/me answers 200 exactly for "Bearer <key>" (the
// scheme in any case, white space around the key ignored), and 401 with
// WWW-Authenticate and the unauthorized envelope for anything else.
func FuzzAuthorization(f *testing.F) {
	a := newFuzzAPI(f)
	for _, s := range []string{"Bearer " + a.key, "bearer " + a.key, "BEARER  " + a.key, "Bearer", "Bearer ", "Basic " + a.key, a.key, "Bearer svc_sk_", "Bearer " + a.key + "x", "Token " + a.key, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, auth string) {
		if !validHeaderValue(auth) {
			return
		}
		rec := a.do(http.MethodGet, "/v1/me", nil, http.Header{"Authorization": {auth}})
		out := answer(t, rec)
		scheme, rest, _ := strings.Cut(auth, " ")
		if valid := strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(rest) == a.key; valid {
			company, _ := out["company"].(map[string]any)
			if rec.Code != http.StatusOK || company["id"] != fuzzTenant {
				t.Fatalf("Authorization %q: status %d: %s", auth, rec.Code, rec.Body.Bytes())
			}
			return
		}
		if rec.Code != http.StatusUnauthorized || errorCode(out) != CodeUnauthorized || rec.Header().Get("WWW-Authenticate") != "Bearer" {
			t.Fatalf("Authorization %q: status %d: %s", auth, rec.Code, rec.Body.Bytes())
		}
	})
}

// FuzzRequestHeaders: X-Request-ID is echoed when it has 1 to 200 bytes and
// replaced by 24 hex digits otherwise; whatever Accept-Encoding says, the
// answer is the same document, compressed (gzip or zstd) only as it asks.
func FuzzRequestHeaders(f *testing.F) {
	for _, s := range [][2]string{
		{"req-1", "gzip"}, {"", ""}, {strings.Repeat("r", 200), "gzip;q=0"}, {strings.Repeat("r", 201), "identity"},
		{"ä\u2028", "br, gzip;q=0.5, *;q=0"}, {"x", "GZIP"}, {"x", "gzip;q=1.5"}, {"x", "*"}, {"x", "deflate, x-gzip"},
	} {
		f.Add(s[0], s[1])
	}
	a := newFuzzAPI(f)
	plain := a.do(http.MethodGet, "/openapi.json", nil, nil)
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" {
		f.Fatalf("GET /openapi.json: %d %q", plain.Code, plain.Header().Get("Content-Encoding"))
	}
	f.Fuzz(func(t *testing.T, requestID, acceptEncoding string) {
		if !validHeaderValue(requestID) || !validHeaderValue(acceptEncoding) {
			return
		}
		header := http.Header{}
		if requestID != "" {
			header.Set("X-Request-ID", requestID)
		}
		if acceptEncoding != "" {
			header.Set("Accept-Encoding", acceptEncoding)
		}
		rec := a.do(http.MethodGet, "/openapi.json", nil, header)
		got := rec.Header().Get("X-Request-ID")
		if len(requestID) >= 1 && len(requestID) <= 200 {
			if got != requestID {
				t.Fatalf("X-Request-ID %q answered as %q", requestID, got)
			}
		} else if _, err := hex.DecodeString(got); err != nil || len(got) != 24 {
			t.Fatalf("X-Request-ID %q replaced by %q, want 24 hex digits", requestID, got)
		}
		body := rec.Body.Bytes()
		switch enc := rec.Header().Get("Content-Encoding"); enc {
		case "":
		case "gzip":
			if !strings.Contains(strings.ToLower(acceptEncoding), "gzip") {
				t.Fatalf("gzip answered to Accept-Encoding %q", acceptEncoding)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		case "zstd":
			if !strings.Contains(strings.ToLower(acceptEncoding), "zstd") {
				t.Fatalf("zstd answered to Accept-Encoding %q", acceptEncoding)
			}
			zr, err := zstd.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, err = io.ReadAll(zr)
			zr.Close()
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("Content-Encoding %q", enc)
		}
		if rec.Code != http.StatusOK || !bytes.Equal(body, plain.Body.Bytes()) {
			t.Fatalf("Accept-Encoding %q: status %d and another document", acceptEncoding, rec.Code)
		}
	})
}

// FuzzListQuery: GET /v1/optimizations with any query answers 200 with the
// page and page_size it read (within bounds, and an empty page past the
// last) or 422 with details at ["query", ...].
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{
		"", "page=1&page_size=25", "page=2", "page_size=100", "page_size=101", "page=0", "page=-1&page_size=0",
		"page=%201%20", "page=1_0", "page=1.0", "page=1&page=2", "page_size=", "page=99999999999999999999999",
		"page=288230376151711745&page_size=64", "page;size=1", "page=%zz",
	} {
		f.Add(s)
	}
	a := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/optimizations", nil)
		req.URL.RawQuery = rawQuery
		req.Header.Set("Authorization", "Bearer "+a.key)
		rec := httptest.NewRecorder()
		a.handler.ServeHTTP(rec, req)
		out := answer(t, rec, "query")
		q := req.URL.Query()
		page, size, details := schema.PageQuery(q)
		if details != nil {
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("query %q: status %d: %s", rawQuery, rec.Code, rec.Body.Bytes())
			}
			return
		}
		if rec.Code != http.StatusOK || out["page"] != float64(page) || out["page_size"] != float64(size) || out["total"] != float64(1) {
			t.Fatalf("query %q: status %d: %s", rawQuery, rec.Code, rec.Body.Bytes())
		}
		items, _ := out["items"].([]any)
		want := 0
		if page == 1 {
			want = 1 // the only optimization
		}
		if len(items) != want {
			t.Fatalf("query %q: %d items on page %d of 1", rawQuery, len(items), page)
		}
	})
}

// FuzzResultPath: GET /v1/optimizations/{id}/result answers the stored
// result for any spelling of its id that pydantic reads as that UUID (the
// polyline only with include_path true), 404 for any other UUID, and 422
// at ["path", ...] or ["query", ...] otherwise.
func FuzzResultPath(f *testing.F) {
	a := newFuzzAPI(f)
	for _, s := range [][2]string{
		{a.opt.Name, "true"}, {strings.ToUpper(a.opt.Name), "0"}, {"{" + a.opt.Name + "}", "yes"}, {"urn:uuid:" + a.opt.Name, ""},
		{strings.ReplaceAll(a.opt.Name, "-", ""), "off"}, {uuid.NewString(), "true"}, {"not-a-uuid", "maybe"}, {"%", "1"}, {"é", "t"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, id, includePath string) {
		segment, ok := pathSegment(id)
		if !ok {
			return
		}
		rec := a.do(http.MethodGet, "/v1/optimizations/"+segment+"/result?include_path="+url.QueryEscape(includePath), nil, nil)
		out := answer(t, rec, "path", "query")
		canonical, pathDetails := schema.ParseUUIDParam("optimization_id", id)
		include, queryDetails := schema.QueryBool("include_path", includePath, true, false)
		switch {
		case pathDetails != nil || queryDetails != nil:
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("id %q, include_path %q: status %d", id, includePath, rec.Code)
			}
		case canonical != a.opt.Name:
			if rec.Code != http.StatusNotFound || errorCode(out) != CodeNotFound {
				t.Fatalf("id %q: status %d: %s", id, rec.Code, rec.Body.Bytes())
			}
		default:
			routes, _ := out["routes"].([]any)
			if rec.Code != http.StatusOK || out["id"] != a.opt.Name || len(routes) != 1 {
				t.Fatalf("id %q: status %d: %s", id, rec.Code, rec.Body.Bytes())
			}
			if line, _ := routes[0].(map[string]any)["polyline"].(string); (line != "") != include {
				t.Fatalf("include_path %q: polyline %q", includePath, line)
			}
		}
	})
}

// FuzzCreateExport: POST /v1/optimizations/{id}/exports answers 201 with a
// record of the arguments the body decoder read, whose download link
// serves the file, or 422 as the decoder decides.
func FuzzCreateExport(f *testing.F) {
	for _, s := range [][2]string{
		{``, ""}, {`{"format":"csv"}`, "application/json"}, {`{"format":"xlsx","include_driver_instructions":false}`, ""},
		{`{"format":"pdf"}`, ""}, {`format=csv`, "application/x-www-form-urlencoded"}, {`{"format":"csv"}`, "application/vnd.api+json; charset=utf-8"},
		{`{"include_driver_instructions":"no"}`, "text/plain"}, {`null`, "application/json"}, {`{`, ""},
	} {
		f.Add([]byte(s[0]), s[1])
	}
	a := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		if !validHeaderValue(contentType) {
			return
		}
		header := http.Header{}
		if contentType != "" {
			header.Set("Content-Type", contentType)
		}
		rec := a.do(http.MethodPost, "/v1/optimizations/"+a.opt.Name+"/exports", body, header)
		out := answer(t, rec, "body")
		if rec.Code == http.StatusUnprocessableEntity {
			return
		}
		if rec.Code != http.StatusCreated {
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
		decoded := body
		if !isJSONContentType(contentType) && len(body) > 0 {
			decoded, _ = json.Marshal(string(body))
		}
		in, details := schema.DecodeExportIn(decoded)
		if details != nil || out["format"] != in.Format || out["include_driver_instructions"] != in.IncludeDriverInstructions || out["optimization_id"] != a.opt.Name {
			t.Fatalf("body %q (%s): export %v; the decoder read %+v, %+v", body, contentType, out, in, details)
		}
		link, _ := out["download_url"].(string)
		target, ok := strings.CutPrefix(link, fuzzPublicURL)
		if !ok {
			t.Fatalf("download_url %q is not under %s", link, fuzzPublicURL)
		}
		req := httptest.NewRequest(http.MethodGet, target, nil)
		dl := httptest.NewRecorder()
		a.handler.ServeHTTP(dl, req)
		if dl.Code != http.StatusOK || dl.Body.Len() == 0 {
			t.Fatalf("download %s: status %d: %s", link, dl.Code, dl.Body.Bytes())
		}
	})
}

// FuzzDownloadExport: an export link verifies only as it was given: the
// file is served for exactly the signed parameters, each once, and the
// signature as encoded; any other query or export id is 403
// invalid_signature (the link does not expire while the fuzzer runs).
func FuzzDownloadExport(f *testing.F) {
	a := newFuzzAPI(f)
	rec := a.do(http.MethodPost, "/v1/optimizations/"+a.opt.Name+"/exports", []byte(`{"format":"csv"}`), nil)
	var created ExportRecord
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || rec.Code != http.StatusCreated {
		f.Fatalf("creating the export: %d %s", rec.Code, rec.Body.Bytes())
	}
	link, err := url.Parse(created.DownloadURL)
	if err != nil {
		f.Fatal(err)
	}
	genuine := link.Query()
	sig := genuine.Get("signature")
	for _, s := range []string{
		link.RawQuery,
		link.RawQuery + "&format=xlsx",
		link.RawQuery + "&utm_source=sms",
		strings.Replace(link.RawQuery, "signature="+sig, "signature="+respell(sig), 1),
		strings.Replace(link.RawQuery, "format=csv", "format=xlsx", 1),
		strings.Replace(link.RawQuery, "tenant="+fuzzTenant, "tenant=%66uzz", 1),
		"format=csv&" + link.RawQuery,
		"",
	} {
		f.Add(created.ID, s)
	}
	f.Add(strings.ToUpper(created.ID), link.RawQuery)
	f.Fuzz(func(t *testing.T, exportID, rawQuery string) {
		segment, ok := pathSegment(exportID)
		if !ok {
			return
		}
		req := httptest.NewRequest(http.MethodGet, exportlink.Path+segment, nil)
		req.URL.RawQuery = rawQuery
		rec := httptest.NewRecorder()
		a.handler.ServeHTTP(rec, req)
		q := req.URL.Query()
		exact := exportID == created.ID && len(q) == len(genuine)
		for name, want := range genuine {
			exact = exact && slices.Equal(q[name], want)
		}
		if exact {
			if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
				t.Fatalf("the link itself: status %d: %s", rec.Code, rec.Body.Bytes())
			}
			return
		}
		out := answer(t, rec)
		if rec.Code != http.StatusForbidden || errorCode(out) != CodeInvalidSignature {
			t.Fatalf("export %q with query %q: status %d, want 403 invalid_signature: %s", exportID, rawQuery, rec.Code, rec.Body.Bytes())
		}
	})
}

// respell spells a 32-byte base64url signature another way: its last
// character carries two padding bits, which lenient decoders ignore.
func respell(sig string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	return sig[:len(sig)-1] + string(alphabet[last^1])
}

// FuzzCreateWebhook: POST /v1/webhooks answers 201 with the URL and a new
// signing secret exactly when the body decodes and the URL is a public
// https one; the endpoint then deletes (204), so slots never run out.
func FuzzCreateWebhook(f *testing.F) {
	for _, s := range []string{
		`{"url":"https://hooks.example.com/routeopt"}`, `{"url":"http://hooks.example.com/"}`, `{"url":"https://10.0.0.1/"}`,
		`{"url":"https://svc.internal.test/x"}`, `{"url":"https://user:pw@hooks.example.com/"}`, `{"url":"https://[::1]:8443/"}`,
		`{"url":"https://0x7f.1/"}`, `{"url":"https://hooks.example.com/#frag"}`, `{"url":"https://hooks.example.com:0/"}`,
		`{"url":""}`, `{}`, `{"url":"https://hooks.example.com/","secret":"x"}`, `{"url":"https://xn--bcher-kva.example/"}`,
	} {
		f.Add([]byte(s))
	}
	a := newFuzzAPI(f)
	policy, _ := webhook.NewPolicy(nil, fuzzResolver{})
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := a.do(http.MethodPost, "/v1/webhooks", body, nil)
		out := answer(t, rec, "body")
		in, details := schema.DecodeWebhookIn(body)
		accepted := details == nil && policy.CheckURL(context.Background(), in.URL) == nil
		if accepted != (rec.Code == http.StatusCreated) {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body.Bytes())
		}
		if !accepted {
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("body %q: status %d, want 422: %s", body, rec.Code, rec.Body.Bytes())
			}
			return
		}
		secret, _ := out["secret"].(string)
		id, _ := out["id"].(string)
		if out["url"] != in.URL || !strings.HasPrefix(secret, webhook.SecretPrefix) || id == "" {
			t.Fatalf("record %v for %q", out, in.URL)
		}
		if del := a.do(http.MethodDelete, "/v1/webhooks/"+id, nil, nil); del.Code != http.StatusNoContent {
			t.Fatalf("deleting webhook %s: status %d: %s", id, del.Code, del.Body.Bytes())
		}
	})
}

// FuzzCreateAPIKey: POST /v1/api-keys answers 201 with a new key exactly
// when the body decodes; the new key authenticates with the scopes asked
// for, and then revokes (204), so the company's keys never run out.
func FuzzCreateAPIKey(f *testing.F) {
	for _, s := range []string{
		`{"name":"dispatch app","scopes":["optimizations:read"]}`, `{"name":" x ","scopes":["keys:write","exports:write"]}`,
		`{"name":"x","scopes":[]}`, `{"name":"","scopes":["keys:write"]}`, `{"name":"x","scopes":["root"]}`, `{"name":"x"}`,
		`{"name":"<script>","scopes":["webhooks:read","webhooks:read"]}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	a := newFuzzAPI(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := a.do(http.MethodPost, "/v1/api-keys", body, nil)
		out := answer(t, rec, "body")
		in, details := schema.DecodeAPIKeyIn(body, apikey.AllScopes)
		if (details == nil) != (rec.Code == http.StatusCreated) {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body.Bytes())
		}
		if details != nil {
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("body %q: status %d, want 422: %s", body, rec.Code, rec.Body.Bytes())
			}
			return
		}
		key, _ := out["key"].(string)
		id, _ := out["id"].(string)
		if out["name"] != in.Name || !strings.HasPrefix(key, apikey.Prefix) || id != apikey.ID(key) {
			t.Fatalf("record %v for %+v", out, in)
		}
		me := a.do(http.MethodGet, "/v1/me", nil, http.Header{"Authorization": {"Bearer " + key}})
		var who struct{ Scopes []string }
		if err := json.Unmarshal(me.Body.Bytes(), &who); err != nil || me.Code != http.StatusOK || !sameSet(who.Scopes, in.Scopes) {
			t.Fatalf("the new key: /v1/me status %d: %s; want scopes %q", me.Code, me.Body.Bytes(), in.Scopes)
		}
		if del := a.do(http.MethodDelete, "/v1/api-keys/"+id, nil, nil); del.Code != http.StatusNoContent {
			t.Fatalf("revoking key %s: status %d: %s", id, del.Code, del.Body.Bytes())
		}
	})
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// fmtLoc is a loc element as text ("" for an index).
func fmtLoc(v any) string {
	s, _ := v.(string)
	return s
}
