package portal_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/portal"
)

const cspNoTiles = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func newHandler(t *testing.T, opts portal.Options) http.Handler {
	t.Helper()
	h, err := portal.New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	return h
}

func do(h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// checkSecurityHeaders asserts the contract's headers on one answer.
func checkSecurityHeaders(t *testing.T, what string, rec *httptest.ResponseRecorder, wantCSP string) {
	t.Helper()
	want := map[string]string{
		"Content-Security-Policy": wantCSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	}
	for k, v := range want {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
}

var pages = []string{
	"/portal/",
	"/portal/optimizations/0b7c2a8e-4c1d-4d8e-9a55-3f1c2b6d7e8f",
	"/portal/api-keys",
	"/portal/?page=3",
}

func TestPagesAnswerTheShell(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for _, p := range pages {
		rec := do(h, http.MethodGet, p)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d, want 200", p, rec.Code)
		}
		checkShell(t, "GET "+p, rec)
	}
}

func TestUnknownPagesAnswerTheShellWith404(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for _, p := range []string{"/portal/nope", "/portal/optimizations/", "/portal/optimizations/a/b", "/portal/api-keys/", "/portal/assets"} {
		rec := do(h, http.MethodGet, p)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
			continue
		}
		// The script shows "Page not found" inside the usual layout.
		checkShell(t, "GET "+p, rec)
	}
}

// checkShell asserts an answer is the page shell, loading only our own
// script and styles, with nothing inline the CSP would block.
func checkShell(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s: Content-Type = %q", what, ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control = %q, want no-store", what, cc)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<html lang="en">`,
		`<link rel="stylesheet" href="/portal/assets/styles.css">`,
		`<link rel="icon" type="image/svg+xml" href="/portal/assets/favicon.svg">`,
		`<script type="module" src="/portal/assets/app.js"></script>`,
		`<div id="app">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("%s: shell lacks %s:\n%s", what, want, body)
		}
	}
	if n := strings.Count(body, "<script"); n != 1 {
		t.Errorf("%s: %d script tags, want exactly the module script", what, n)
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<style") {
		t.Errorf("%s: inline style in the shell (the CSP blocks it)", what)
	}
	if strings.Contains(body, "routeopt-map-tile") {
		t.Errorf("%s: tile meta tags without a tile URL", what)
	}
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for _, c := range []struct{ method, target string }{
		{"GET", "/portal/"},
		{"HEAD", "/portal/"},
		{"GET", "/portal/nope"},
		{"GET", "/portal"},
		{"GET", "/portal/assets/app.js"},
		{"GET", "/portal/assets/styles.css"},
		{"GET", "/portal/assets/missing.js"},
		{"POST", "/portal/"},
		{"DELETE", "/portal/assets/app.js"},
	} {
		checkSecurityHeaders(t, c.method+" "+c.target, do(h, c.method, c.target), cspNoTiles)
	}
}

func TestTileLayerAddsMetaTagsAndImageOrigin(t *testing.T) {
	for _, c := range []struct {
		url, origin string
	}{
		{"https://tile.example.com/{z}/{x}/{y}.png", "https://tile.example.com"},
		{"http://127.0.0.1:8090/tiles/{z}/{x}/{y}{r}.png?style=light", "http://127.0.0.1:8090"},
		{"https://{s}.tile.example.org/{z}/{x}/{y}.png", "https://*.tile.example.org"},
	} {
		attribution := `© "OpenStreetMap" <contributors> & friends`
		h := newHandler(t, portal.Options{MapTileURL: c.url, MapTileAttribution: attribution})
		rec := do(h, http.MethodGet, "/portal/")
		wantCSP := strings.Replace(cspNoTiles, "img-src 'self'", "img-src 'self' "+c.origin, 1)
		checkSecurityHeaders(t, c.url, rec, wantCSP)
		body := rec.Body.String()
		wantURL := `<meta name="routeopt-map-tile-url" content="` + strings.ReplaceAll(c.url, "&", "&amp;") + `">`
		if !strings.Contains(body, wantURL) {
			t.Errorf("%s: shell lacks %s:\n%s", c.url, wantURL, body)
		}
		// html/template escapes the attribution: it cannot end the attribute or add markup.
		wantAttr := `<meta name="routeopt-map-tile-attribution" content="© &#34;OpenStreetMap&#34; &lt;contributors&gt; &amp; friends">`
		if !strings.Contains(body, wantAttr) {
			t.Errorf("%s: shell lacks %s:\n%s", c.url, wantAttr, body)
		}
		// Assets carry the same policy, so Leaflet's images load from the tiles' origin.
		checkSecurityHeaders(t, c.url+" asset", do(h, http.MethodGet, "/portal/assets/app.js"), wantCSP)
	}
}

func TestValidateTileURL(t *testing.T) {
	good := map[string]string{
		"https://tile.example.com/{z}/{x}/{y}.png":          "https://tile.example.com",
		"HTTPS://Tile.Example.com/{z}/{x}/{y}.png":          "https://Tile.Example.com",
		"http://localhost:8080/{z}/{y}/{x}":                 "http://localhost:8080",
		"https://{s}.tiles.example.net/{z}/{x}/{y}{r}.png":  "https://*.tiles.example.net",
		"https://tiles.example.net/x?z={z}&x={x}&y={y}&k=1": "https://tiles.example.net",
	}
	for raw, want := range good {
		got, err := portal.ValidateTileURL(raw)
		if err != nil || got != want {
			t.Errorf("ValidateTileURL(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                       "empty",
		"https://tile.example.com/{z}/{x}.png":   "lacks the placeholder {y}",
		"ftp://tile.example.com/{z}/{x}/{y}.png": "http:// or https://",
		"tile.example.com/{z}/{x}/{y}.png":       "http:// or https://",
		"https://user:pw@tile.example.com/{z}/{x}/{y}.png":                       "user name or password",
		"https:///{z}/{x}/{y}.png":                                               "no host",
		"https://tile.example.com/{z}/{x}/{y}/{q}":                               "unknown placeholder {q}",
		"https://tile.example.com/{z}/{x}/{y}.png}":                              "unbalanced",
		"https://tile.example.com/{z}/{x}/{y} .png":                              "white space",
		"https://[::1]/{z}/{x}/{y}.png":                                          "DNS name or IPv4",
		"https://t{z}.example.com/{z}/{x}/{y}.png":                               "leading {s}.",
		"https://a.{s}.example.com/{z}/{x}/{y}.png":                              "leading {s}.",
		"https://tile.example.com:99999/{z}/{x}/{y}":                             "port",
		"https://tile.example.com/" + strings.Repeat("a", 2100) + "/{z}/{x}/{y}": "longer than 2048",
	}
	for raw, want := range bad {
		_, err := portal.ValidateTileURL(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateTileURL(%q) = %v, want an error containing %q", raw, err, want)
		}
	}
}

func TestInvalidOptionsFailClearly(t *testing.T) {
	for _, c := range []struct {
		opts portal.Options
		want string
	}{
		{portal.Options{MapTileURL: "https://tile.example.com/{z}/{x}.png"}, "{y}"},
		{portal.Options{MapTileAttribution: "© someone"}, "needs a map tile URL"},
		{portal.Options{MapTileURL: "https://t.example.com/{z}/{x}/{y}", MapTileAttribution: "two\nlines"}, "one line"},
		{portal.Options{MapTileURL: "https://t.example.com/{z}/{x}/{y}", MapTileAttribution: strings.Repeat("x", 301)}, "longer than 300"},
	} {
		h, err := portal.New(c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) error = %v, want one containing %q", c.opts, err, c.want)
			continue
		}
		// The handler still explains itself rather than serve a broken page.
		rec := do(h, http.MethodGet, "/portal/")
		if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("New(%+v): GET /portal/ = %d %q, want 500 naming the problem", c.opts, rec.Code, rec.Body.String())
		}
		checkSecurityHeaders(t, "misconfigured", rec, cspNoTiles)
	}
}

func TestRedirectToTheListPage(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for target, want := range map[string]string{"/portal": "/portal/", "/portal?page=2": "/portal/?page=2"} {
		rec := do(h, http.MethodGet, target)
		if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != want {
			t.Errorf("GET %s = %d Location %q, want 301 %s", target, rec.Code, rec.Header().Get("Location"), want)
		}
	}
}

// distFiles lists the built files, as the binary embeds them.
func distFiles(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(os.DirFS("dist"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path.Join("dist", p))
		out[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAssetsAreServedWithTheirContentType(t *testing.T) {
	h := newHandler(t, portal.Options{})
	wantType := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".png": "image/png",
		".txt": "text/plain; charset=utf-8",
		".svg": "image/svg+xml",
	}
	files := distFiles(t)
	for _, need := range []string{"app.js", "styles.css", "favicon.svg"} {
		if _, ok := files[need]; !ok {
			t.Fatalf("dist/%s is missing", need)
		}
	}
	for name, body := range files {
		target := "/portal/assets/" + name
		rec := do(h, http.MethodGet, target)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d", target, rec.Code)
			continue
		}
		if want := wantType[path.Ext(name)]; rec.Header().Get("Content-Type") != want {
			t.Errorf("GET %s: Content-Type = %q, want %q", target, rec.Header().Get("Content-Type"), want)
		}
		if rec.Body.String() != string(body) {
			t.Errorf("GET %s: body differs from dist/%s", target, name)
		}
		cc := rec.Header().Get("Cache-Control")
		if !strings.Contains(name, "/") {
			if cc != "no-cache" {
				t.Errorf("GET %s: Cache-Control = %q, want no-cache (the name has no hash)", target, cc)
			}
		} else if !regexp.MustCompile(`-[A-Z0-9]{8}\.`).MatchString(name) {
			t.Errorf("dist/%s has no content hash in its name, but is served as immutable", name)
		} else if cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control = %q, want immutable (content-hashed name)", target, cc)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", target)
			continue
		}
		if again := do(h, http.MethodGet, target, "If-None-Match", etag); again.Code != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match = %d, want 304", target, again.Code)
		}
	}
}

// TestBuildIsComplete checks that what the shell, app.js and styles.css
// reference was built, so a partial dist cannot be committed.
func TestBuildIsComplete(t *testing.T) {
	files := distFiles(t)
	refs := regexp.MustCompile(`(?:from|import)\s*\(?"\./(chunks/[^"]+)"|url\("?\./(assets/[^")]+)"?\)`)
	for _, from := range []string{"app.js", "styles.css"} {
		for _, m := range refs.FindAllStringSubmatch(string(files[from]), -1) {
			ref := m[1] + m[2]
			if _, ok := files[ref]; !ok {
				t.Errorf("dist/%s references %s, which was not built", from, ref)
			}
		}
	}
	if !regexp.MustCompile(`import\("\./chunks/leaflet`).Match(files["app.js"]) {
		t.Error("app.js does not load Leaflet lazily from a chunk (code splitting is off?)")
	}
	if !strings.Contains(string(files["styles.css"]), ".map-") {
		t.Error("styles.css lacks the map's styles (src/map/map.css not imported?)")
	}
}

func TestUnknownAssetsAre404(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for _, p := range []string{"/portal/assets/", "/portal/assets/chunks/", "/portal/assets/chunks", "/portal/assets/nope.js", "/portal/assets/../portal.go", "/portal/assets/app.js/x"} {
		rec := do(h, http.MethodGet, p)
		if rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
		if strings.Contains(rec.Body.String(), "<a href") {
			t.Errorf("GET %s: looks like a directory listing: %s", p, rec.Body.String())
		}
	}
}

func TestHeadMatchesGet(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for _, p := range append(pages, "/portal/nope", "/portal/assets/app.js", "/portal/assets/styles.css", "/portal") {
		get, head := do(h, http.MethodGet, p), do(h, http.MethodHead, p)
		if get.Code != head.Code {
			t.Errorf("%s: GET %d, HEAD %d", p, get.Code, head.Code)
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Cache-Control", "Location", "ETag", "Content-Security-Policy"} {
			if get.Header().Get(k) != head.Header().Get(k) {
				t.Errorf("%s: %s: GET %q, HEAD %q", p, k, get.Header().Get(k), head.Header().Get(k))
			}
		}
		if head.Body.Len() != 0 {
			t.Errorf("HEAD %s sent a body of %d bytes", p, head.Body.Len())
		}
	}
}

func TestOtherMethodsAre405(t *testing.T) {
	h := newHandler(t, portal.Options{})
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
		rec := do(h, m, "/portal/")
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s /portal/ = %d Allow %q, want 405 with Allow: GET, HEAD", m, rec.Code, rec.Header().Get("Allow"))
		}
	}
}

func TestIsPage(t *testing.T) {
	for p, want := range map[string]bool{
		"/portal/": true, "/portal/api-keys": true, "/portal/optimizations/x": true,
		"/portal": false, "/portal/optimizations/": false, "/portal/optimizations/x/y": false,
		"/portal/assets/app.js": false, "/portal/api-keys/": false,
	} {
		if got := portal.IsPage(p); got != want {
			t.Errorf("IsPage(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestMountedInTheAPIServer checks the portal through the REST server's
// router, as routeopt api and dev serve it: no API key needed.
func TestMountedInTheAPIServer(t *testing.T) {
	srv := webserver.New(nil, nil, nil, logr.Discard(), webserver.Options{MapTileURL: "https://tile.example.com/{z}/{x}/{y}.png", MapTileAttribution: "© tiles"})
	h := srv.Handler()
	wantCSP := strings.Replace(cspNoTiles, "img-src 'self'", "img-src 'self' https://tile.example.com", 1)
	for _, p := range pages {
		rec := do(h, http.MethodGet, p)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `content="https://tile.example.com/{z}/{x}/{y}.png"`) {
			t.Errorf("GET %s through the server = %d:\n%s", p, rec.Code, rec.Body.String())
		}
		checkSecurityHeaders(t, "server GET "+p, rec, wantCSP)
	}
	rec := do(h, http.MethodGet, "/portal")
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/portal/" {
		t.Errorf("GET /portal through the server = %d Location %q", rec.Code, rec.Header().Get("Location"))
	}
	rec = do(h, http.MethodGet, "/portal/assets/app.js")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("GET /portal/assets/app.js through the server = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if b, _ := io.ReadAll(rec.Body); len(b) == 0 {
		t.Error("empty app.js through the server")
	}
	if rec = do(h, http.MethodGet, "/portal/nope"); rec.Code != http.StatusNotFound {
		t.Errorf("GET /portal/nope through the server = %d, want 404", rec.Code)
	}
}
