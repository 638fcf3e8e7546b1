package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// completed is a completed optimization of a company of the test's own,
// open in a signed-in tab.
type completed struct {
	c   *apiClient
	o   optimization
	res result
	p   *page
}

// openCompleted solves smallProblem for a new company and opens its page.
// prepare, when set, runs on the tab before it navigates (a viewport size).
func openCompleted(t *testing.T, company string, prepare ...chromedp.Action[chromedp.Void]) completed {
	t.Helper()
	d := sharedDev(t)
	c := d.newCompany(t, company)
	o := c.create(t, smallProblem("Tuesday deliveries"))
	c.waitStatus(t, o.ID, "completed")
	res := c.result(t, o.ID)
	p := openPage(t, d)
	if len(prepare) > 0 {
		p.do("prepare the tab", prepare...)
	}
	p.navigate("/portal/optimizations/" + o.ID)
	p.signIn(c.key)
	p.waitText("#opt-state", "completed")
	p.waitCount("#route-map .route-path", len(routesWithStops(res)))
	return completed{c: c, o: o, res: res, p: p}
}

// TestMapInteraction zooms with the buttons and the keyboard (the scale bar
// follows), fits back, pans with the arrow keys, and reaches the map and
// its buttons with Tab, each showing a focus ring.
func TestMapInteraction(t *testing.T) {
	requireChromium(t)
	t.Parallel()
	p := openCompleted(t, "Map Test GmbH").p

	scale := func() string { return p.text("#route-map .map-scale") }
	fitted := scale()
	if fitted == "" {
		t.Fatal("the scale bar .map-scale is empty")
	}
	p.click("#route-map button.map-zoom-in")
	p.waitJS("the scale bar to change after zoom in", fmt.Sprintf(`document.querySelector("#route-map .map-scale").textContent.replace(/\s+/g, " ").trim() !== %s`, jsString(fitted)))
	zoomed := scale()
	p.click("#route-map button.map-fit")
	p.waitTextIs("#route-map .map-scale", fitted)
	p.click("#route-map button.map-zoom-out")
	p.waitJS("the scale bar to change after zoom out", fmt.Sprintf(`document.querySelector("#route-map .map-scale").textContent.replace(/\s+/g, " ").trim() !== %s`, jsString(fitted)))
	if got := scale(); got == zoomed {
		t.Errorf("zoom out and zoom in give the same scale %q", got)
	}
	p.click("#route-map button.map-fit")
	p.waitTextIs("#route-map .map-scale", fitted)

	// Tab from the top of the page reaches the map and each of its buttons,
	// and each shows that it has the focus.
	p.do("focus the top of the page", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`))
	want := map[string]string{
		"map":      `#route-map [tabindex="0"]`,
		"zoom in":  "#route-map button.map-zoom-in",
		"zoom out": "#route-map button.map-zoom-out",
		"fit":      "#route-map button.map-fit",
	}
	reached := map[string]bool{}
	for i := 0; i < 80 && len(reached) < len(want); i++ {
		p.do("press Tab", chromedp.KeyEvent(kb.Tab))
		for name, sel := range want {
			if reached[name] {
				continue
			}
			if eval[bool](p, fmt.Sprintf(`document.activeElement === document.querySelector(%s)`, jsString(sel))) {
				reached[name] = true
				if !eval[bool](p, `(() => { const s = getComputedStyle(document.activeElement); return (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none"; })()`) {
					t.Errorf("the %s has the focus but no visible focus ring", name)
				}
			}
		}
	}
	for name, sel := range want {
		if !reached[name] {
			t.Errorf("Tab never reached the %s (%s)", name, sel)
		}
	}

	// With the map focused: + zooms, an arrow pans, 0 fits.
	p.do("focus the map", chromedp.Focus(chromedp.CSS(`#route-map [tabindex="0"]`)))
	p.do("press +", chromedp.KeyEvent("+"))
	p.waitJS("the scale bar to change after +", fmt.Sprintf(`document.querySelector("#route-map .map-scale").textContent.replace(/\s+/g, " ").trim() !== %s`, jsString(fitted)))
	depotX := `document.querySelector("#route-map .depot-marker").getBoundingClientRect().x`
	before := eval[float64](p, depotX)
	p.do("press ArrowLeft", chromedp.KeyEvent(kb.ArrowLeft))
	p.waitJS("the map to pan", fmt.Sprintf(`Math.abs(%s - %v) > 5`, depotX, before))
	p.do("press 0", chromedp.KeyEvent("0"))
	p.waitTextIs("#route-map .map-scale", fitted)
}
