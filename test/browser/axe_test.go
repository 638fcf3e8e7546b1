package browser

import (
	"routeopt.io/routeopt/test/e2e/framework"

	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

var axeSource struct {
	once sync.Once
	src  string
	err  error
}

// axeScript is axe-core's source from the portal's npm project (make
// portal-deps installs it).
func axeScript(t *testing.T) string {
	t.Helper()
	axeSource.once.Do(func() {
		root, err := framework.RepoRoot()
		if err != nil {
			axeSource.err = err
			return
		}
		path := filepath.Join(root, "webserver", "portal", "web", "node_modules", "axe-core", "axe.min.js")
		b, err := os.ReadFile(path)
		if err != nil {
			axeSource.err = fmt.Errorf("axe-core is not installed (%v): run `make portal-deps`", err)
			return
		}
		axeSource.src = string(b)
	})
	if axeSource.err != nil {
		t.Fatal(axeSource.err)
	}
	return axeSource.src
}

type axeViolation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"`
	Help    string `json:"help"`
	HelpURL string `json:"helpUrl"`
	Nodes   []struct {
		Target  string `json:"target"`
		HTML    string `json:"html"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

// checkAxe fails the test on every serious or critical violation axeProblems
// finds.
func checkAxe(t *testing.T, p *page) {
	t.Helper()
	for _, problem := range axeProblems(t, p) {
		t.Error(problem)
	}
}

// axeProblems runs axe-core's WCAG 2.0 A/AA and 2.1 AA rules on the page as
// it is and describes every serious or critical violation (and logs the
// others). The source goes in through the DevTools protocol
// (Runtime.evaluate), which the page's CSP does not govern; the page itself
// can load no outside script.
func axeProblems(t *testing.T, p *page) []string {
	t.Helper()
	p.do("inject axe-core", chromedp.Evaluate[chromedp.Void](axeScript(t)))
	violations := eval[[]axeViolation](p, `axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"]}, resultTypes: ["violations"]})
		.then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", help: v.help, helpUrl: v.helpUrl,
			nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 200), summary: n.failureSummary || ""}))})))`)
	var out []string
	for _, v := range violations {
		if v.Impact != "serious" && v.Impact != "critical" {
			t.Logf("axe (%s, not failing): %s: %s", v.Impact, v.ID, v.Help)
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "axe %s violation %s: %s (%s)", v.Impact, v.ID, v.Help, v.HelpURL)
		for _, n := range v.Nodes {
			fmt.Fprintf(&b, "\n  at %s: %s\n    %s", n.Target, n.HTML, strings.ReplaceAll(n.Summary, "\n", "\n    "))
		}
		out = append(out, b.String())
	}
	return out
}

// TestAccessibility runs axe-core on every page: sign-in, the list, a
// completed optimization, a failed one, a running one with its cancel
// dialog open, and the keys page with a new key shown.
func TestAccessibility(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Accessibility GmbH")
	done := c.create(t, smallProblem("Tuesday deliveries"))
	failed := c.create(t, failingProblem("Depot without coordinates"))
	c.waitStatus(t, done.ID, "completed")
	c.waitStatus(t, failed.ID, "failed")

	t.Run("sign-in", func(t *testing.T) {
		p := openPage(t, d)
		p.navigate("/portal/")
		p.waitVisible("form#sign-in")
		checkAxe(t, p)
	})
	t.Run("list", func(t *testing.T) {
		p := openPage(t, d)
		p.navigate("/portal/")
		p.signIn(c.key)
		p.waitCount("table#optimizations tbody tr[data-id]", 2)
		p.waitJS("the distances", `Array.from(document.querySelectorAll("table#optimizations [data-col=distance]")).some(c => c.textContent.includes("km"))`)
		checkAxe(t, p)
	})
	t.Run("completed", func(t *testing.T) {
		p := openPage(t, d)
		p.navigate("/portal/optimizations/" + done.ID)
		p.signIn(c.key)
		p.waitVisible("section.route table.stops")
		p.waitVisible("#route-map .stop-marker")
		checkAxe(t, p)
	})
	t.Run("failed", func(t *testing.T) {
		p := openPage(t, d)
		p.navigate("/portal/optimizations/" + failed.ID)
		p.signIn(c.key)
		p.waitVisible("#opt-error")
		checkAxe(t, p)
	})
	t.Run("running", func(t *testing.T) {
		slow := c.create(t, slowProblem("Big Friday"))
		t.Cleanup(func() { c.do(t, "POST", "/v1/optimizations/"+slow.ID+"/cancel", nil, nil) })
		p := openPage(t, d)
		p.navigate("/portal/optimizations/" + slow.ID)
		p.signIn(c.key)
		p.waitVisible("#cancel")
		checkAxe(t, p)
		p.click("#cancel")
		p.waitJS("the cancel dialog to open", `document.querySelector("dialog#cancel-dialog").open`)
		checkAxe(t, p)
		p.click("#cancel-dismiss")
	})
	t.Run("keys", func(t *testing.T) {
		p := openPage(t, d)
		p.navigate("/portal/api-keys")
		p.signIn(c.key)
		p.waitVisible("table#api-keys tbody tr[data-key-id]")
		checkAxe(t, p)
		p.do("name a key", chromedp.SendKeys(chromedp.CSS("input#key-name"), "axe"))
		p.click(`form#create-key button[type=submit]`)
		p.waitVisible("#new-key-value")
		checkAxe(t, p)
	})
	t.Run("not-found", func(t *testing.T) {
		p := openPage(t, d)
		p.expectConsole(`status of 404 \(Not Found\)`)
		p.navigate("/portal/no-such-page")
		p.signIn(c.key)
		p.waitText("main", "not found")
		checkAxe(t, p)
	})
}
