package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// actionTimeout bounds one step on a page (a click, a wait for an element);
// the page's own polling runs every 3 s, so a few rounds fit.
const actionTimeout = 30 * time.Second

var chrome struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

// browserContext starts the one Chromium the package's tests share, each
// test in a browser context (a separate profile: cookies, storage and
// downloads) of its own.
func browserContext(t testing.TB) context.Context {
	t.Helper()
	requireChromium(t)
	chrome.once.Do(func() {
		profile, err := os.MkdirTemp(workDir, "chromium-profile-")
		if err != nil {
			chrome.err = err
			return
		}
		// Chromium keeps its singleton socket in a directory of its own
		// under TMPDIR and leaves it behind when the tests end the browser:
		// under workDir it goes with the rest of the run.
		tmp := filepath.Join(workDir, "tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			chrome.err = err
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(chromiumPath),
			chromedp.UserDataDir(profile),
			chromedp.Env("TMPDIR="+tmp),
			chromedp.WindowSize(1280, 900),
			// The sandbox needs user namespaces a container rarely has.
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			// The machine has no network: nothing but the page may try it.
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("headless", true),
		)
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(allocCtx)
		// The first Run starts the browser; no timeout on it (it would end
		// the browser's life with it).
		if err := chromedp.Do(ctx); err != nil {
			cancel()
			cancelAlloc()
			chrome.err = fmt.Errorf("start chromium (%s): %w", chromiumPath, err)
			return
		}
		chrome.ctx = ctx
		chrome.cancel = func() { cancel(); cancelAlloc() }
	})
	if chrome.err != nil {
		t.Fatal(chrome.err)
	}
	return chrome.ctx
}

func stopBrowser() {
	if chrome.cancel != nil {
		chrome.cancel()
	}
}

// page is one browser tab of a test, in a browser context of its own, with
// a record of every request it made and everything it wrote to the console.
// When the test ends it saves a full-page screenshot among the test's
// artifacts and checks that no request left the allowed origins and that
// the console holds no error (CSP violations are console errors).
type page struct {
	t      *testing.T
	ctx    context.Context
	origin string // the dev server's scheme://host:port

	mu           sync.Mutex
	requests     []request
	byID         map[network.RequestID]int
	console      []consoleEntry
	allowOrigins []string
	mustUse      []string
	expected     []*regexp.Regexp
}

type request struct {
	URL, Method, Type string
	Headers           network.Headers
	ReferrerPolicy    string
	// Failed is the network error of a request that failed (a download
	// shows as net::ERR_ABORTED); Blocked says who refused it (csp, ...).
	Failed, Blocked string
}

type consoleEntry struct {
	Level, Source, Text string
}

func (e consoleEntry) String() string {
	return fmt.Sprintf("[%s %s] %s", e.Source, e.Level, e.Text)
}

// openPage opens a tab for the test on the dev server d; the test fails
// when the page breaks a rule of check.
func openPage(t *testing.T, d *devServer) *page {
	t.Helper()
	p := newPage(t, d.URL)
	t.Cleanup(func() {
		for _, problem := range p.problems() {
			t.Error(problem)
		}
	})
	return p
}

// newPage opens a tab whose origin is base's; the test's end saves a
// screenshot and closes it.
func newPage(t *testing.T, base string) *page {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := &page{t: t, origin: u.Scheme + "://" + u.Host, byID: map[network.RequestID]int{}}
	ctx, cancel := chromedp.NewContext(browserContext(t), chromedp.WithNewBrowserContext(), chromedp.WithListener(p.listen))
	// Opens the tab; the tab lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	p.ctx = ctx
	t.Cleanup(func() {
		p.screenshot()
		cancel()
	})
	return p
}

// listen records requests and console output; it runs on chromedp's read
// loop, so it only appends under the lock.
func (p *page) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.byID[ev.RequestID] = len(p.requests)
		p.requests = append(p.requests, request{URL: ev.Request.URL, Method: ev.Request.Method, Type: string(ev.Type), Headers: ev.Request.Headers, ReferrerPolicy: string(ev.Request.ReferrerPolicy)})
	case *network.EventLoadingFailed:
		if i, ok := p.byID[ev.RequestID]; ok {
			p.requests[i].Failed, p.requests[i].Blocked = ev.ErrorText, string(ev.BlockedReason)
		}
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			if a.Description != "" {
				parts = append(parts, a.Description)
			} else {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			}
		}
		p.console = append(p.console, consoleEntry{Level: string(ev.Type), Source: "console-api", Text: strings.Join(parts, " ")})
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
			text += " " + ex.Description
		}
		p.console = append(p.console, consoleEntry{Level: "exception", Source: "javascript", Text: text})
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		text := e.Text
		if e.URL != "" {
			text += " (" + e.URL + ")"
		}
		p.console = append(p.console, consoleEntry{Level: string(e.Level), Source: string(e.Source), Text: text})
	}
}

// allowOrigin lets requests go to another origin too, and requires that at
// least one does (the tile server of the tile test).
func (p *page) allowOrigin(origin string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allowOrigins = append(p.allowOrigins, origin)
	p.mustUse = append(p.mustUse, origin)
}

// expectConsole accepts console errors matching re, which the test causes
// on purpose (for example the browser's "Failed to load resource: ... 401"
// for a refused key).
func (p *page) expectConsole(re string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expected = append(p.expected, regexp.MustCompile(re))
}

// Requests returns a copy of the requests so far.
func (p *page) Requests() []request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]request(nil), p.requests...)
}

// problems lists the requests that left the allowed origins or that the
// browser blocked, the allowed outside origins never used, and the
// console's errors.
func (p *page) problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	used := map[string]bool{}
	for _, r := range p.requests {
		u, err := url.Parse(r.URL)
		if err != nil {
			out = append(out, fmt.Sprintf("request to an unparsable URL %q", r.URL))
			continue
		}
		switch u.Scheme {
		case "data", "blob", "about":
			continue // never leaves the browser
		}
		if r.Blocked != "" {
			out = append(out, fmt.Sprintf("the browser blocked %s %s (%s: %s)", r.Method, r.URL, r.Blocked, r.Failed))
		}
		origin := u.Scheme + "://" + u.Host
		used[origin] = true
		if origin != p.origin && !contains(p.allowOrigins, origin) {
			out = append(out, fmt.Sprintf("a request left the origin %s: %s %s (%s)", p.origin, r.Method, r.URL, r.Type))
		}
	}
	for _, o := range p.mustUse {
		if !used[o] {
			out = append(out, fmt.Sprintf("no request went to %s, which the page should have used", o))
		}
	}
	for _, e := range p.console {
		if !isError(e) {
			continue
		}
		expected := false
		for _, re := range p.expected {
			expected = expected || re.MatchString(e.Text)
		}
		if !expected {
			out = append(out, fmt.Sprintf("console error: %s", e))
		}
	}
	return out
}

func isError(e consoleEntry) bool {
	switch e.Level {
	case "error", "assert", "exception":
		return true
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// screenshot saves a full-page PNG named after the test in its artifact
// directory (kept with go test -artifacts), whether the test passed or not.
func (p *page) screenshot() {
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Logf("no screenshot: %v", err)
		return
	}
	path := filepath.Join(p.t.ArtifactDir(), unsafeName.ReplaceAllString(p.t.Name(), "_")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Errorf("save the screenshot: %v", err)
		return
	}
	p.t.Logf("screenshot: %s", path)
}

// do runs actions on the tab, failing the test with what it was doing.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v%s", what, err, p.diagnose())
	}
}

// diagnose describes the page for a failure message: where it is and what
// it says, so that a timeout explains itself.
func (p *page) diagnose() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 1500) : ""`))
	return fmt.Sprintf("\npage %s shows:\n%s", loc, text)
}

// navigate opens a path of the dev server.
func (p *page) navigate(path string) {
	p.t.Helper()
	p.do("open "+path, chromedp.Navigate(p.origin+path))
}

// waitVisible waits for an element to be visible.
func (p *page) waitVisible(sel string) {
	p.t.Helper()
	p.do("wait for "+sel+" to be visible", chromedp.WaitVisible(chromedp.CSS(sel)))
}

// click clicks an element once it is visible.
func (p *page) click(sel string) {
	p.t.Helper()
	p.do("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// waitJS waits until the JavaScript expression is truthy.
func (p *page) waitJS(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(actionTimeout)))
	if err != nil {
		p.t.Fatalf("wait for %s (%s): %v%s", what, expr, err, p.diagnose())
	}
}

// waitCount waits until exactly n elements match sel.
func (p *page) waitCount(sel string, n int) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("%d of %s", n, sel), fmt.Sprintf(`document.querySelectorAll(%s).length === %d`, jsString(sel), n))
}

// waitText waits until an element's text (whitespace collapsed) contains want.
func (p *page) waitText(sel, want string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("%s to say %q", sel, want), fmt.Sprintf(
		`(() => { const e = document.querySelector(%s); return !!e && e.textContent.replace(/\s+/g, " ").includes(%s); })()`,
		jsString(sel), jsString(want)))
}

// waitTextIs waits until an element's text (whitespace collapsed and
// trimmed) is want.
func (p *page) waitTextIs(sel, want string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("%s to say exactly %q", sel, want), fmt.Sprintf(
		`(() => { const e = document.querySelector(%s); return !!e && e.textContent.replace(/\s+/g, " ").trim() === %s; })()`,
		jsString(sel), jsString(want)))
}

// text is an element's text content, whitespace collapsed and trimmed; it
// waits for the element to exist.
func (p *page) text(sel string) string {
	p.t.Helper()
	p.do("wait for "+sel, chromedp.WaitReady(chromedp.CSS(sel)))
	return eval[string](p, fmt.Sprintf(`document.querySelector(%s).textContent.replace(/\s+/g, " ").trim()`, jsString(sel)))
}

// count is the number of elements matching sel now.
func (p *page) count(sel string) int {
	p.t.Helper()
	return eval[int](p, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel)))
}

// eval evaluates a JavaScript expression on the page and decodes its value.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v%s", expr, err, p.diagnose())
	}
	return v
}

// row is one table row: its data-col cells' text and its data-* attributes.
type row struct {
	Cols map[string]string `json:"cols"`
	Data map[string]string `json:"data"`
}

// rows reads the rows matching sel.
func (p *page) rows(sel string) []row {
	p.t.Helper()
	return eval[[]row](p, fmt.Sprintf(`Array.from(document.querySelectorAll(%s)).map(tr => {
		const cols = {};
		tr.querySelectorAll("[data-col]").forEach(c => { cols[c.dataset.col] = c.textContent.replace(/\s+/g, " ").trim(); });
		return {cols, data: Object.assign({}, tr.dataset)};
	})`, jsString(sel)))
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// signIn types the key into the sign-in form of the current page and
// submits it, then waits for the signed-in header.
func (p *page) signIn(key string) {
	p.t.Helper()
	p.submitKey(key)
	p.waitVisible("#company-name")
}

// submitKey types a key into form#sign-in (emptied first) and submits it.
func (p *page) submitKey(key string) {
	p.t.Helper()
	p.do("sign in",
		chromedp.WaitVisible(chromedp.CSS("form#sign-in input#api-key")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("form#sign-in input#api-key").value = ""`),
		chromedp.SendKeys(chromedp.CSS("form#sign-in input#api-key"), key),
		chromedp.Click(chromedp.CSS(`form#sign-in button[type=submit]`)),
	)
}

// storedKey is the key the portal keeps in sessionStorage, or nil.
func (p *page) storedKey() *string {
	p.t.Helper()
	return eval[*string](p, `sessionStorage.getItem("routeopt.apiKey")`)
}

// download clicks sel with downloads allowed into a directory of the
// test's own and returns the downloaded file once the browser finished it.
func (p *page) download(sel string) (name string, data []byte) {
	p.t.Helper()
	dir := p.t.TempDir()
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior:         cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName,
		BrowserContextID: chromedp.FromContext(p.ctx).BrowserContextID,
		DownloadPath:     dir,
		EventsEnabled:    ptr(true),
	})
	if err != nil {
		p.t.Fatalf("allow downloads: %v", err)
	}
	type begin struct{ guid, name string }
	began := make(chan begin, 8)
	done := make(chan cdpbrowser.EventDownloadProgress, 64)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := chromedp.ListenBrowser(lctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpbrowser.EventDownloadWillBegin:
			select {
			case began <- begin{ev.GUID, ev.SuggestedFilename}:
			default:
			}
		case *cdpbrowser.EventDownloadProgress:
			if ev.State != cdpbrowser.DownloadProgressStateInProgress {
				select {
				case done <- *ev:
				default:
				}
			}
		}
	}); err != nil {
		p.t.Fatalf("listen for downloads: %v", err)
	}
	p.click(sel)
	var b begin
	select {
	case b = <-began:
	case <-ctx.Done():
		p.t.Fatalf("clicking %s started no download%s", sel, p.diagnose())
	}
	for {
		select {
		case ev := <-done:
			if ev.GUID != b.guid {
				continue
			}
			if ev.State != cdpbrowser.DownloadProgressStateCompleted {
				p.t.Fatalf("download of %s ended %s", b.name, ev.State)
			}
			data, err := os.ReadFile(filepath.Join(dir, b.guid))
			if err != nil {
				p.t.Fatal(err)
			}
			return b.name, data
		case <-ctx.Done():
			p.t.Fatalf("download of %s did not complete: %v", b.name, ctx.Err())
		}
	}
}
