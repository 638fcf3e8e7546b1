package integration

import (
	"routeopt.io/routeopt/test/requests"

	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/exportkey"
)

const (
	xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	csvType  = "text/csv; charset=utf-8"
)

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// completed creates an optimization through the API and waits until it is
// completed.
func completed(t *testing.T, s *system, key string) *v1alpha1.Optimization {
	t.Helper()
	opt := createViaREST(t, s, key, requests.TenOrders(1))
	waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	return opt
}

// createExport calls endpoint 6; body nil sends no body.
func (s *system) createExport(t *testing.T, id string, body any) (int, map[string]any) {
	t.Helper()
	status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+id+"/exports", body, nil)
	return status, rec
}

// mustExport creates an export and fails the test unless it is a 201.
func (s *system) mustExport(t *testing.T, id string, body any) map[string]any {
	t.Helper()
	status, rec := s.createExport(t, id, body)
	if status != http.StatusCreated {
		t.Fatalf("create export: %d %v", status, rec)
	}
	return rec
}

// download is an answer to a download link.
type download struct {
	status int
	header http.Header
	body   []byte
}

// code is the error code of an error answer.
func (d download) code(t *testing.T) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(d.body, &v); err != nil {
		t.Fatalf("%d answer is not JSON: %s", d.status, d.body)
	}
	return errorCode(t, v)
}

// fetch follows a download link as a browser would, with no API key, on
// the server at base (the link's own host is the public URL, which the
// tests do not serve). The request and the answer are checked against the
// OpenAPI document like every call of the tests. headers are added.
func (s *system) fetch(t *testing.T, base, link string, headers map[string]string) download {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	newRequest := func() *http.Request {
		req, err := http.NewRequest(http.MethodGet, base+u.RequestURI(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		return req
	}
	check := checkRequest(t, s, newRequest(), "")
	resp, err := http.DefaultClient.Do(newRequest())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	check.response(t, resp.StatusCode, resp.Header, body)
	return download{status: resp.StatusCode, header: resp.Header, body: body}
}

// withQuery returns link with the query parameter name set to value.
func withQuery(t *testing.T, link, name, value string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// withExportID returns link pointing at another export id.
func withExportID(t *testing.T, link, id string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/v1/exports/" + id
	return u.String()
}

func queryOf(t *testing.T, link, name string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(name)
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("not a timestamp: %v", v)
	}
	return at
}

// storedExportsOf reads the exports annotation of an optimization.
func storedExportsOf(t *testing.T, opt *v1alpha1.Optimization) []map[string]any {
	t.Helper()
	cur := &v1alpha1.Optimization{}
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(opt), cur); err != nil {
		t.Fatal(err)
	}
	raw := cur.Annotations[v1alpha1.ExportsAnnotation]
	var out []map[string]any
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("annotation %s: %v: %q", v1alpha1.ExportsAnnotation, err, raw)
	}
	return out
}

func TestExportCreate(t *testing.T) {
	s := startSystem(t, "inprocess")
	opt := completed(t, s, "export-create-key-01")
	path := "/v1/optimizations/" + opt.Name + "/exports"

	before := time.Now().Add(-time.Second)
	first := s.mustExport(t, opt.Name, nil)
	t.Run("the record", func(t *testing.T) {
		id, _ := first["id"].(string)
		if !uuidPattern.MatchString(id) {
			t.Errorf("id %q is not a random UUID", id)
		}
		if first["optimization_id"] != opt.Name || first["format"] != "xlsx" || first["include_driver_instructions"] != true {
			t.Errorf("record %v, want xlsx with driver instructions of %s", first, opt.Name)
		}
		created, expires := parseTime(t, first["created_at"]), parseTime(t, first["expires_at"])
		if created.Before(before.Truncate(time.Second)) || created.After(time.Now()) {
			t.Errorf("created_at %s is not now", created)
		}
		if d := expires.Sub(created); d != webserver.DefaultExportLinkTTL {
			t.Errorf("the link lives %s, want %s", d, webserver.DefaultExportLinkTTL)
		}
		link, _ := first["download_url"].(string)
		if !strings.HasPrefix(link, "https://routes.example.test/v1/exports/"+id+"?") {
			t.Errorf("download_url %q is not under the public URL", link)
		}
		for name, want := range map[string]string{
			"tenant": s.tenantID(), "optimization_id": opt.Name, "optimization_uid": string(opt.UID),
			"format": "xlsx", "include_driver_instructions": "true", "expires": strconv.FormatInt(expires.Unix(), 10),
		} {
			if got := queryOf(t, link, name); got != want {
				t.Errorf("download_url %s=%q, want %q", name, got, want)
			}
		}
		if queryOf(t, link, "key_id") == "" || len(queryOf(t, link, "signature")) < 40 {
			t.Errorf("download_url %q has no key id or signature", link)
		}
	})

	t.Run("the same arguments give the same record", func(t *testing.T) {
		for _, body := range []any{nil, map[string]any{}, map[string]any{"format": "xlsx"}, map[string]any{"format": "xlsx", "include_driver_instructions": true}} {
			again := s.mustExport(t, opt.Name, body)
			for _, f := range []string{"id", "download_url", "expires_at", "created_at"} {
				if again[f] != first[f] {
					t.Errorf("body %v: %s %v, want %v", body, f, again[f], first[f])
				}
			}
		}
	})

	t.Run("other arguments give other records", func(t *testing.T) {
		seen := map[any]bool{first["id"]: true}
		for _, body := range []map[string]any{
			{"format": "csv"},
			{"include_driver_instructions": false},
			{"format": "csv", "include_driver_instructions": false},
		} {
			rec := s.mustExport(t, opt.Name, body)
			if seen[rec["id"]] || rec["download_url"] == first["download_url"] {
				t.Errorf("body %v gave an export already given: %v", body, rec)
			}
			seen[rec["id"]] = true
			wantFormat := body["format"]
			if wantFormat == nil {
				wantFormat = "xlsx"
			}
			wantInclude := body["include_driver_instructions"]
			if wantInclude == nil {
				wantInclude = true
			}
			if rec["format"] != wantFormat || rec["include_driver_instructions"] != wantInclude {
				t.Errorf("body %v: record %v", body, rec)
			}
			if again := s.mustExport(t, opt.Name, body); again["id"] != rec["id"] {
				t.Errorf("body %v again: id %v, want %v", body, again["id"], rec["id"])
			}
		}
		stored := storedExportsOf(t, opt)
		if len(stored) != 4 {
			t.Errorf("the optimization keeps %d exports, want 4: %v", len(stored), stored)
		}
		raw, _ := json.Marshal(stored)
		if sig := queryOf(t, first["download_url"].(string), "signature"); strings.Contains(string(raw), sig) {
			t.Error("the annotation holds a link's signature")
		}
	})

	t.Run("before completion 409 names the state", func(t *testing.T) {
		busy := createViaREST(t, s, "export-create-busy-1", bigBody(30))
		status, body := s.createExport(t, busy.Name, nil)
		if status != http.StatusConflict || errorCode(t, body) != webserver.CodeResultNotReady {
			t.Fatalf("export of a new optimization: %d %v", status, body)
		}
		e := body["error"].(map[string]any)
		state, _ := e["fields"].(map[string]any)["status"].(string)
		if (state != "queued" && state != "running") || !strings.Contains(e["message"].(string), state) {
			t.Errorf("409 does not name the state: %v", e)
		}
		if status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+busy.Name+"/cancel", nil, nil); status != http.StatusOK {
			t.Fatalf("cancel: %d %v", status, rec)
		}
		waitForState(t, s, busy.Name, v1alpha1.StateCancelled)
		status, body = s.createExport(t, busy.Name, map[string]any{"format": "csv"})
		if status != http.StatusConflict || errorCode(t, body) != webserver.CodeResultNotReady ||
			!strings.Contains(body["error"].(map[string]any)["message"].(string), "cancelled") {
			t.Errorf("export of a cancelled optimization: %d %v", status, body)
		}
	})

	t.Run("403 without exports:write", func(t *testing.T) {
		readWrite := s.withKey(t, apikey.ScopeOptimizationsRead, apikey.ScopeOptimizationsWrite)
		status, body := readWrite.createExport(t, opt.Name, nil)
		if status != http.StatusForbidden || errorCode(t, body) != webserver.CodeInsufficientScope ||
			body["error"].(map[string]any)["fields"].(map[string]any)["required_scope"] != apikey.ScopeExportsWrite {
			t.Errorf("%d %v", status, body)
		}
	})

	t.Run("404 for another company's id and an unknown one", func(t *testing.T) {
		other := startSystem(t, "inprocess")
		for _, id := range []string{opt.Name, "00000000-0000-4000-8000-000000000000"} {
			status, body := other.createExport(t, id, nil)
			if status != http.StatusNotFound || errorCode(t, body) != webserver.CodeNotFound {
				t.Errorf("%s: %d %v", id, status, body)
			}
		}
	})

	t.Run("422 for a bad body or id", func(t *testing.T) {
		cases := []struct {
			why, path, body, loc, typ string
		}{
			{"format pdf", path, `{"format": "pdf"}`, `["body","format"]`, "literal_error"},
			{"unknown field", path, `{"format": "csv", "colour": "red"}`, `["body","colour"]`, "extra_forbidden"},
			{"include_driver_instructions not a boolean", path, `{"include_driver_instructions": "perhaps"}`, `["body","include_driver_instructions"]`, "bool_parsing"},
			{"not an object", path, `["csv"]`, `["body"]`, "model_attributes_type"},
			{"not a UUID", "/v1/optimizations/not-a-uuid/exports", `{}`, `["path","optimization_id"]`, "uuid_parsing"},
		}
		for _, tc := range cases {
			status, body, _ := s.callInvalid(t, tc.why, "POST", tc.path, tc.body, nil)
			if status != http.StatusUnprocessableEntity {
				t.Errorf("%s: %d %v", tc.why, status, body)
				continue
			}
			d := body["detail"].([]any)[0].(map[string]any)
			loc, _ := json.Marshal(d["loc"])
			if string(loc) != tc.loc || d["type"] != tc.typ {
				t.Errorf("%s: detail %v, want %s at %s", tc.why, d, tc.typ, tc.loc)
			}
		}
		if got := storedExportsOf(t, opt); len(got) != 4 {
			t.Errorf("refused requests changed the exports: %v", got)
		}
	})
}

func TestExportDownload(t *testing.T) {
	s := startSystem(t, "inprocess")
	opt := completed(t, s, "export-download-key-01")
	xlsx := s.mustExport(t, opt.Name, nil)["download_url"].(string)
	csvRec := s.mustExport(t, opt.Name, map[string]any{"format": "csv"})
	csvLink := csvRec["download_url"].(string)

	t.Run("xlsx without an API key", func(t *testing.T) {
		d := s.fetch(t, s.url, xlsx, nil)
		if d.status != http.StatusOK {
			t.Fatalf("%d %s", d.status, d.body)
		}
		checkDownloadHeaders(t, d, xlsxType, ".xlsx")
		if !bytes.HasPrefix(d.body, []byte("PK")) {
			t.Fatalf("the workbook is not a zip archive: %q", clip(d.body))
		}
		zr, err := zip.NewReader(bytes.NewReader(d.body), int64(len(d.body)))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		if !strings.Contains(strings.Join(names, " "), "xl/workbook.xml") {
			t.Errorf("the archive is not a workbook: %v", names)
		}
		// The link works until it expires, as often as needed.
		if again := s.fetch(t, s.url, xlsx, nil); again.status != http.StatusOK || !bytes.HasPrefix(again.body, []byte("PK")) {
			t.Errorf("second download: %d", again.status)
		}
	})

	t.Run("csv without an API key", func(t *testing.T) {
		d := s.fetch(t, s.url, csvLink, nil)
		if d.status != http.StatusOK {
			t.Fatalf("%d %s", d.status, d.body)
		}
		checkDownloadHeaders(t, d, csvType, ".csv")
		if !bytes.HasPrefix(d.body, []byte("\uFEFF")) {
			t.Fatalf("the csv does not start with the UTF-8 byte order mark: %q", clip(d.body))
		}
		lines := strings.Split(strings.TrimPrefix(string(d.body), "\uFEFF"), "\n")
		if len(lines) < 11 || strings.Count(lines[0], ",") < 3 || strings.ContainsAny(lines[0], "0123456789") {
			t.Errorf("the csv has no header row and a row per stop: %q", clip(d.body))
		}
		if !strings.Contains(string(d.body), "A-1") {
			t.Errorf("the csv does not list the orders: %q", clip(d.body))
		}
	})

	t.Run("a changed link is 403", func(t *testing.T) {
		sig := queryOf(t, xlsx, "signature")
		flipped := []byte(sig)
		if flipped[0] == 'A' {
			flipped[0] = 'B'
		} else {
			flipped[0] = 'A'
		}
		expires, _ := strconv.ParseInt(queryOf(t, xlsx, "expires"), 10, 64)
		for name, link := range map[string]string{
			"export id":             withExportID(t, xlsx, "7b0c64ae-6d1f-4e55-9a57-0f3f3b7a9d10"),
			"another export's id":   withExportID(t, xlsx, csvRec["id"].(string)),
			"optimization id":       withQuery(t, xlsx, "optimization_id", "00000000-0000-4000-8000-000000000000"),
			"optimization uid":      withQuery(t, xlsx, "optimization_uid", "00000000-0000-4000-8000-000000000000"),
			"format":                withQuery(t, xlsx, "format", "csv"),
			"include flag":          withQuery(t, xlsx, "include_driver_instructions", "false"),
			"include flag spelling": withQuery(t, xlsx, "include_driver_instructions", "True"),
			"expiry":                withQuery(t, xlsx, "expires", strconv.FormatInt(expires+3600, 10)),
			"signature":             withQuery(t, xlsx, "signature", string(flipped)),
			"signature of another":  withQuery(t, xlsx, "signature", queryOf(t, csvLink, "signature")),
			"no signature":          withQuery(t, xlsx, "signature", ""),
			"unknown key id":        withQuery(t, xlsx, "key_id", "000000000000"),
			"tenant":                withQuery(t, xlsx, "tenant", "someone-else"),
		} {
			d := s.fetch(t, s.url, link, nil)
			if d.status != http.StatusForbidden || d.code(t) != webserver.CodeInvalidSignature {
				t.Errorf("%s: %d %s", name, d.status, d.body)
			}
			if d.header.Get("Cache-Control") != "private, no-store" {
				t.Errorf("%s: Cache-Control %q", name, d.header.Get("Cache-Control"))
			}
		}
	})

	t.Run("a link binds its company", func(t *testing.T) {
		other := startSystem(t, "inprocess")
		theirs := completed(t, other, "export-download-key-02")
		theirLink := other.mustExport(t, theirs.Name, nil)["download_url"].(string)
		// Company A's signature on company B's export, and company A's
		// link moved to company B; B's API key changes nothing.
		moved := withQuery(t, xlsx, "tenant", other.tenantID())
		crossed := withQuery(t, theirLink, "signature", queryOf(t, xlsx, "signature"))
		stolen := withQuery(t, withQuery(t, withQuery(t, theirLink, "signature", queryOf(t, xlsx, "signature")), "expires", queryOf(t, xlsx, "expires")), "key_id", queryOf(t, xlsx, "key_id"))
		for name, link := range map[string]string{"A's link for tenant B": moved, "B's export with A's signature": crossed, "B's export with A's expiry and signature": stolen} {
			for _, key := range []string{"", other.apiKey} {
				hdr := map[string]string{}
				if key != "" {
					hdr["Authorization"] = "Bearer " + key
				}
				if d := other.fetch(t, other.url, link, hdr); d.status != http.StatusForbidden || d.code(t) != webserver.CodeInvalidSignature {
					t.Errorf("%s (key %v): %d %s", name, key != "", d.status, d.body)
				}
			}
		}
		// Each company's own link works on any replica.
		if d := other.fetch(t, s.url, theirLink, nil); d.status != http.StatusOK {
			t.Errorf("B's link: %d %s", d.status, d.body)
		}
		if d := s.fetch(t, other.url, xlsx, nil); d.status != http.StatusOK {
			t.Errorf("A's link: %d %s", d.status, d.body)
		}
	})

	t.Run("HEAD and neighbouring routes", func(t *testing.T) {
		u := mustURL(t, xlsx)
		head, err := http.Head(s.url + u.RequestURI())
		if err != nil {
			t.Fatal(err)
		}
		_ = head.Body.Close()
		if head.StatusCode != http.StatusOK || head.Header.Get("Content-Disposition") == "" || head.Header.Get("X-Request-ID") == "" {
			t.Errorf("HEAD of a link: %d %v, want GET's status and headers without the file", head.StatusCode, head.Header)
		}
		// Unknown routes under /v1 still need a key first.
		for _, p := range []string{"/v1/exports", "/v1/exports/", "/v1/exports/x/y", "/v1/exportsx"} {
			resp, err := http.Get(s.url + p)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s without a key: %d, want 401", p, resp.StatusCode)
			}
		}
		// The link is no API key: it opens nothing else.
		for _, p := range []string{"/v1/optimizations/" + opt.Name, "/v1/optimizations/" + opt.Name + "/result"} {
			resp, err := http.Get(s.url + p + "?" + u.RawQuery)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET %s with a link's query: %d, want 401", p, resp.StatusCode)
			}
		}
	})

	t.Run("a deleted or recreated optimization is 404", func(t *testing.T) {
		gone := completed(t, s, "export-download-key-03")
		link := s.mustExport(t, gone.Name, map[string]any{"format": "csv", "include_driver_instructions": false})["download_url"].(string)
		if d := s.fetch(t, s.url, link, nil); d.status != http.StatusOK {
			t.Fatalf("before deletion: %d %s", d.status, d.body)
		}
		saved := &v1alpha1.Optimization{}
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(gone), saved); err != nil {
			t.Fatal(err)
		}
		deleteOptimization(t, gone)
		if d := s.fetch(t, s.url, link, nil); d.status != http.StatusNotFound || d.code(t) != webserver.CodeNotFound {
			t.Errorf("after deletion: %d %s", d.status, d.body)
		}
		// The same Idempotency-Key makes an optimization of the same id
		// again, with another uid: the old link stays dead, even when the
		// new one carries the old export records (restored from a backup).
		again := completed(t, s, "export-download-key-03")
		if again.Name != gone.Name || again.UID == gone.UID {
			t.Fatalf("recreated %s/%s, was %s/%s", again.Name, again.UID, gone.Name, gone.UID)
		}
		restore, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
			v1alpha1.ExportsAnnotation: saved.Annotations[v1alpha1.ExportsAnnotation],
		}}})
		if err := k8sClient.Patch(context.Background(), again, client.RawPatch("application/merge-patch+json", restore)); err != nil {
			t.Fatal(err)
		}
		if d := s.fetch(t, s.url, link, nil); d.status != http.StatusNotFound || d.code(t) != webserver.CodeNotFound {
			t.Errorf("after recreation: %d %s", d.status, d.body)
		}
	})

	t.Run("a removed record is 404", func(t *testing.T) {
		target := completed(t, s, "export-download-key-04")
		link := s.mustExport(t, target.Name, nil)["download_url"].(string)
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"`+v1alpha1.ExportsAnnotation+`":null}}}`))
		if err := k8sClient.Patch(context.Background(), target, patch); err != nil {
			t.Fatal(err)
		}
		if d := s.fetch(t, s.url, link, nil); d.status != http.StatusNotFound || d.code(t) != webserver.CodeNotFound {
			t.Errorf("%d %s", d.status, d.body)
		}
	})
}

// startReplica starts another REST API replica of s (its own cache and
// export keys, default options) and returns its URL.
func (s *system) startReplica(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	url, _ := startAPI(ctx, t, cfg, s.namespace, nil)
	// Cleanups run last first: stop the replica before startAPI's waits for it.
	t.Cleanup(cancel)
	return url
}

func mustURL(t *testing.T, link string) *url.URL {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkDownloadHeaders checks a file's answer.
func checkDownloadHeaders(t *testing.T, d download, contentType, ext string) {
	t.Helper()
	if got := d.header.Get("Content-Type"); got != contentType {
		t.Errorf("Content-Type %q, want %q", got, contentType)
	}
	if cd := d.header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="integration-run-`) || !strings.Contains(cd, ext+`"`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if got := d.header.Get("Cache-Control"); got != "private, no-store" {
		t.Errorf("Cache-Control %q", got)
	}
	if got := d.header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", got)
	}
}

// deleteOptimization deletes opt, as retention does, and waits until it is gone.
func deleteOptimization(t *testing.T, opt *v1alpha1.Optimization) {
	t.Helper()
	if err := k8sClient.Delete(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the optimization to be gone", func() (bool, error) {
		err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(opt), &v1alpha1.Optimization{})
		return err != nil, client.IgnoreNotFound(err)
	})
}

func TestExportLinkExpiry(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess"}, func(o *webserver.Options) { o.ExportLinkTTL = 2 * time.Second })
	opt := completed(t, s, "export-expiry-key-01")
	first := s.mustExport(t, opt.Name, nil)
	expires := parseTime(t, first["expires_at"])
	if d := expires.Sub(parseTime(t, first["created_at"])); d != 2*time.Second {
		t.Fatalf("the link lives %s, want 2s", d)
	}
	if d := s.fetch(t, s.url, first["download_url"].(string), nil); d.status != http.StatusOK {
		t.Fatalf("before expiry: %d %s", d.status, d.body)
	}
	time.Sleep(time.Until(expires) + 100*time.Millisecond)

	d := s.fetch(t, s.url, first["download_url"].(string), nil)
	if d.status != http.StatusGone || d.code(t) != webserver.CodeLinkExpired {
		t.Fatalf("after expiry: %d %s", d.status, d.body)
	}
	// A changed expiry is still a bad signature, not a live link.
	if d := s.fetch(t, s.url, withQuery(t, first["download_url"].(string), "expires", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)), nil); d.status != http.StatusForbidden {
		t.Errorf("a pushed-back expiry: %d %s", d.status, d.body)
	}

	second := s.mustExport(t, opt.Name, nil)
	if second["id"] == first["id"] || second["download_url"] == first["download_url"] || !parseTime(t, second["expires_at"]).After(expires) {
		t.Errorf("after expiry the same arguments gave %v, want a new export after %v", second, first)
	}
	if d := s.fetch(t, s.url, second["download_url"].(string), nil); d.status != http.StatusOK {
		t.Errorf("the new link: %d %s", d.status, d.body)
	}
	// The expired export was dropped when the new one was written.
	if stored := storedExportsOf(t, opt); len(stored) != 1 || stored[0]["id"] != second["id"] {
		t.Errorf("stored exports %v, want only %v", stored, second["id"])
	}
}

func TestExportKeyRotation(t *testing.T) {
	fast := func(o *webserver.Options) { o.ExportKeyRefresh = 500 * time.Millisecond }
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess"}, fast)
	opt := completed(t, s, "export-rotation-key-1")
	// A second replica that keeps the keys it read for the default 10 s.
	replica := s.startReplica(t)

	oldLink := s.mustExport(t, opt.Name, nil)["download_url"].(string)
	oldKey := queryOf(t, oldLink, "key_id")
	if d := s.fetch(t, replica, oldLink, nil); d.status != http.StatusOK { // the replica has read the keys now
		t.Fatalf("before rotation: %d %s", d.status, d.body)
	}

	first, err := exportkey.Rotate(context.Background(), k8sClient, operatorNamespace, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if first.Previous != oldKey || first.Current == oldKey || first.Current == "" {
		t.Fatalf("rotation %+v, the links were signed with %s", first, oldKey)
	}
	sec := &corev1.Secret{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: exportkey.SecretName}, sec); err != nil {
		t.Fatal(err)
	}
	if sec.Type != exportkey.SecretType || len(sec.Data["current-key"]) != 32 || len(sec.Data["previous-key"]) != 32 ||
		string(sec.Data["current-key-id"]) != first.Current || string(sec.Data["previous-key-id"]) != oldKey {
		t.Errorf("the signing key Secret: type %q, ids %q %q", sec.Type, sec.Data["current-key-id"], sec.Data["previous-key-id"])
	}

	// New links use the new key (once the replica has read it again) and
	// old ones keep working.
	time.Sleep(time.Second) // past the refreshing replica's 500 ms
	newLink := s.mustExport(t, opt.Name, map[string]any{"format": "csv"})["download_url"].(string)
	if got := queryOf(t, newLink, "key_id"); got != first.Current {
		t.Fatalf("a new link after the rotation is signed with key %s, want %s", got, first.Current)
	}
	for name, base := range map[string]string{"refreshing replica": s.url, "replica with the old keys": replica} {
		// The replica that has not read the Secret since the rotation
		// reads it at once for a key id it does not know.
		if d := s.fetch(t, base, newLink, nil); d.status != http.StatusOK {
			t.Errorf("%s, new link: %d %s", name, d.status, d.body)
		}
		if d := s.fetch(t, base, oldLink, nil); d.status != http.StatusOK {
			t.Errorf("%s, old link after one rotation: %d %s", name, d.status, d.body)
		}
	}

	// The second rotation, as the platform team runs it.
	var out bytes.Buffer
	cmd := app.NewRootCommand()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"exportkey", "rotate", "--kubeconfig", kubeconfigPath, "--operator-namespace", operatorNamespace})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("routeopt exportkey rotate: %v", err)
	}
	if !strings.Contains(out.String(), first.Current) || !strings.Contains(out.String(), "Key "+oldKey) {
		t.Errorf("rotate printed %q: it should name the kept key %s and the dropped %s", out.String(), first.Current, oldKey)
	}
	waitFor(t, 5*time.Second, "the oldest link to stop working", func() (bool, error) {
		d := s.fetch(t, s.url, oldLink, nil)
		if d.status == http.StatusForbidden && d.code(t) == webserver.CodeInvalidSignature {
			return true, nil
		}
		return false, nil
	})
	if d := s.fetch(t, s.url, newLink, nil); d.status != http.StatusOK {
		t.Errorf("the link of the previous key after the second rotation: %d %s", d.status, d.body)
	}
	// The same arguments as the dead link give a new export with the current key.
	rec := s.mustExport(t, opt.Name, nil)
	if rec["download_url"] == oldLink || queryOf(t, rec["download_url"].(string), "key_id") == oldKey {
		t.Errorf("the export of a dropped key was given again: %v", rec)
	}
	// The other replica reads the keys again for a key id it does not
	// know, at most once a second.
	waitFor(t, 5*time.Second, "the other replica to serve the re-made link", func() (bool, error) {
		return s.fetch(t, replica, rec["download_url"].(string), nil).status == http.StatusOK, nil
	})
}

func TestExportConcurrentCreates(t *testing.T) {
	s := startSystem(t, "inprocess")
	opt := completed(t, s, "export-concurrent-k1")
	replica := s.startReplica(t)

	const n = 8
	type answer struct {
		status int
		rec    map[string]any
		err    error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		base := s.url
		if i%2 == 1 {
			base = replica
		}
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", base+"/v1/optimizations/"+opt.Name+"/exports", strings.NewReader(`{"format":"csv"}`))
			req.Header.Set("Authorization", "Bearer "+s.apiKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer func() { _ = resp.Body.Close() }()
			answers[i].status = resp.StatusCode
			answers[i].err = json.NewDecoder(resp.Body).Decode(&answers[i].rec)
		})
	}
	close(start)
	wg.Wait()
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusCreated {
			t.Fatalf("create %d: %d %v %v", i, a.status, a.err, a.rec)
		}
		for _, f := range []string{"id", "download_url", "expires_at"} {
			if a.rec[f] != answers[0].rec[f] {
				t.Errorf("create %d: %s %v, create 0: %v", i, f, a.rec[f], answers[0].rec[f])
			}
		}
	}
	if stored := storedExportsOf(t, opt); len(stored) != 1 {
		t.Errorf("%d exports stored, want 1: %v", len(stored), stored)
	}
}
