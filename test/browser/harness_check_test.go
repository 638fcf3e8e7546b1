package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHarnessSeesViolations proves the end-of-test check and the axe check
// can fail: a page that breaks its own CSP, writes console.error, loads an
// image from another origin and has an unlabelled input must give one
// problem for each.
func TestHarnessSeesViolations(t *testing.T) {
	requireChromium(t)
	t.Parallel()
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(tilePNG)
	}))
	defer outside.Close()
	// localhost and 127.0.0.1 are different origins for the browser.
	outsideURL := strings.Replace(outside.URL, "127.0.0.1", "localhost", 1) + "/pixel.png"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = fmt.Fprint(w, `console.error("harness self-test error"); document.body.dataset.ready = "1";`)
		default:
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; img-src *")
			w.Header().Set("Content-Type", "text/html")
			_, _ = fmt.Fprintf(w, `<!doctype html><html lang="en"><title>t</title><body>
<script>document.title = "inline ran";</script>
<img src=%q alt="">
<input type="text" id="unlabelled">
<script src="/app.js"></script></body></html>`, outsideURL)
		}
	}))
	defer site.Close()

	p := newPage(t, site.URL)
	p.navigate("/")
	p.waitJS("the page's script", `document.body.dataset.ready === "1"`)
	p.waitJS("the image", `document.images[0].complete`)
	got := strings.Join(p.problems(), "\n")
	for _, want := range []string{
		"a request left the origin " + site.URL + ": GET " + outsideURL,
		"harness self-test error",
		"Content Security Policy",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the check missed %q; it found:\n%s", want, got)
		}
	}
	if title := eval[string](p, `document.title`); title == "inline ran" {
		t.Error("the inline script ran despite the CSP")
	}
	if got := strings.Join(axeProblems(t, p), "\n"); !strings.Contains(got, "critical violation label") || !strings.Contains(got, "#unlabelled") {
		t.Errorf("axe missed the unlabelled input; it found:\n%s", got)
	}
}
