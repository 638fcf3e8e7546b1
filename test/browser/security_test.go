package browser

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSecurityHeaders checks, with plain HTTP, the headers of the portal's
// pages and assets: a CSP naming no outside origin and forbidding inline
// script, framing, sniffing and referrers; and a shell without inline
// script or style.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	d := sharedDev(t)

	resp := get(t, d.URL+"/portal")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/portal/" {
		t.Errorf("GET /portal: %d to %q, want 301 to /portal/", resp.StatusCode, resp.Header.Get("Location"))
	}

	for _, path := range []string{"/portal/", "/portal/optimizations/0b6f2d8e-3a41-4c1e-9d5f-2f0a7c9e1b23", "/portal/api-keys", "/portal/assets/app.js", "/portal/assets/styles.css"} {
		resp := get(t, d.URL+path)
		body := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
			continue
		}
		checkCSP(t, path, resp.Header.Get("Content-Security-Policy"), nil)
		for header, want := range map[string]string{
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "no-referrer",
			"X-Frame-Options":        "DENY",
		} {
			if got := resp.Header.Get(header); got != want {
				t.Errorf("GET %s: %s %q, want %q", path, header, got, want)
			}
		}
		if !strings.HasPrefix(path, "/portal/assets/") {
			if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
				t.Errorf("GET %s: Cache-Control %q, want no-store on the shell", path, cc)
			}
			checkShell(t, path, body)
			if strings.Contains(body, "routeopt-map-tile-url") {
				t.Errorf("GET %s: the shell names a tile URL although none is configured", path)
			}
		}
	}
}

// checkCSP checks a Content-Security-Policy: every directive of the
// contract, nothing but 'self' and 'none' (and the allowed image origins
// in img-src), no unsafe-* keyword.
func checkCSP(t *testing.T, path, policy string, imgOrigins []string) {
	t.Helper()
	directives := map[string][]string{}
	for _, d := range strings.Split(policy, ";") {
		if f := strings.Fields(d); len(f) > 0 {
			directives[f[0]] = f[1:]
		}
	}
	want := map[string][]string{
		"default-src":     {"'none'"},
		"script-src":      {"'self'"},
		"style-src":       {"'self'"},
		"img-src":         append([]string{"'self'"}, imgOrigins...),
		"connect-src":     {"'self'"},
		"font-src":        {"'self'"},
		"base-uri":        {"'none'"},
		"form-action":     {"'self'"},
		"frame-ancestors": {"'none'"},
	}
	for name, sources := range want {
		if !slices.Equal(directives[name], sources) {
			t.Errorf("GET %s: CSP %s %v, want %v (policy %q)", path, name, directives[name], sources, policy)
		}
	}
	for name, sources := range directives {
		for _, s := range sources {
			allowedImage := name == "img-src" && slices.Contains(imgOrigins, s)
			if s != "'self'" && s != "'none'" && !allowedImage {
				t.Errorf("GET %s: CSP %s allows %s", path, name, s)
			}
		}
	}
}

var (
	scriptTag   = regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`)
	styleAttr   = regexp.MustCompile(`(?i)<[^>]+\sstyle\s*=`)
	styleTag    = regexp.MustCompile(`(?i)<style\b`)
	handlerAttr = regexp.MustCompile(`(?i)<[^>]+\son[a-z]+\s*=`)
)

// checkShell checks that the HTML shell has no inline script, inline
// style or event handler attribute.
func checkShell(t *testing.T, path, html string) {
	t.Helper()
	for _, m := range scriptTag.FindAllStringSubmatch(html, -1) {
		if !strings.Contains(m[1], "src=") || strings.TrimSpace(m[2]) != "" {
			t.Errorf("GET %s: inline script %q", path, m[0])
		}
	}
	for _, re := range []*regexp.Regexp{styleAttr, styleTag, handlerAttr} {
		if m := re.FindString(html); m != "" {
			t.Errorf("GET %s: inline style or handler %q", path, m)
		}
	}
}

func get(t *testing.T, url string) *http.Response {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestKeyHandling signs in and uses the pages, then checks what the
// browser did with the key: kept in sessionStorage only, sent only as a
// Bearer header to the same origin, never in a URL or the console, every
// request under the no-referrer policy; signing out forgets it.
func TestKeyHandling(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Key Handling GmbH")
	o := c.create(t, tinyProblem("One stop"))
	c.waitStatus(t, o.ID, "completed")

	p := openPage(t, d)
	p.navigate("/portal/")
	p.signIn(c.key)
	p.click(`tr[data-id="` + o.ID + `"] [data-col=name] a`)
	p.waitText("#opt-state", "completed")
	p.waitCount("#route-map .stop-marker", 1)
	p.click(`nav a[href="/portal/api-keys"]`)
	p.waitVisible("table#api-keys")
	if got := p.storedKey(); got == nil || *got != c.key {
		t.Errorf("sessionStorage routeopt.apiKey = %v, want the key", deref(got))
	}
	if n := eval[int](p, `localStorage.length`); n != 0 {
		t.Errorf("localStorage holds %d items, want none", n)
	}
	if cookies := eval[string](p, `document.cookie`); cookies != "" {
		t.Errorf("the page set cookies %q", cookies)
	}

	apiCalls := 0
	for _, r := range p.Requests() {
		if strings.Contains(r.URL, c.key) || strings.Contains(r.URL, c.key[len("svc_sk_"):]) {
			t.Errorf("the key is in a request URL: %s %s", r.Method, r.URL)
		}
		for name, v := range r.Headers {
			value := fmt.Sprint(v)
			switch strings.ToLower(name) {
			case "referer":
				if value != "" {
					t.Errorf("%s %s sent Referer %q; the policy is no-referrer", r.Method, r.URL, value)
				}
			case "authorization":
				if value != "Bearer "+c.key || !strings.HasPrefix(r.URL, d.URL+"/v1/") {
					t.Errorf("%s %s sent Authorization %q", r.Method, r.URL, value)
				}
			}
		}
		// Documents are the test's own navigations, typed as a user would.
		if r.Type != "Document" && r.ReferrerPolicy != "no-referrer" {
			t.Errorf("%s %s went with referrer policy %q, want no-referrer", r.Method, r.URL, r.ReferrerPolicy)
		}
		if strings.HasPrefix(r.URL, d.URL+"/v1/") {
			apiCalls++
			if !slices.ContainsFunc(keys(r.Headers), func(h string) bool { return strings.EqualFold(h, "authorization") }) {
				t.Errorf("%s %s went without the Bearer header", r.Method, r.URL)
			}
		}
	}
	if apiCalls < 4 {
		t.Errorf("only %d API calls were recorded; the check above saw too little", apiCalls)
	}
	p.mu.Lock()
	for _, e := range p.console {
		if strings.Contains(e.Text, c.key) {
			t.Errorf("the key was written to the console: %s", e)
		}
	}
	p.mu.Unlock()

	p.click("button#sign-out")
	p.waitVisible("form#sign-in")
	if got := p.storedKey(); got != nil {
		t.Errorf("sign-out left the key in sessionStorage: %q", *got)
	}
	p.navigate("/portal/api-keys")
	p.waitVisible("form#sign-in")
	if n := p.count("#company-name"); n != 0 {
		t.Error("after sign-out a reload shows the signed-in header")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
