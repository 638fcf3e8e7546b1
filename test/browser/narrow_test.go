package browser

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestNarrow opens an optimization on a 375x812 phone screen: the page does
// not scroll sideways, the map fits, the tables scroll inside labelled,
// focusable wrappers, and every control can be scrolled to and is there to
// click (inside the screen, not covered).
func TestNarrow(t *testing.T) {
	requireChromium(t)
	t.Parallel()
	p := openCompleted(t, "Narrow Test GmbH",
		chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile, chromedp.EmulatePortrait)).p
	p.waitVisible("section.route table.stops")

	if w := eval[int](p, `window.innerWidth`); w != 375 {
		t.Errorf("the layout viewport is %d px wide on a 375 px screen (meta viewport?)", w)
	}
	if w := eval[int](p, `document.documentElement.scrollWidth`); w > 375 {
		t.Errorf("the page scrolls sideways: scrollWidth %d > 375", w)
	}
	if w := eval[float64](p, `document.querySelector("#route-map").getBoundingClientRect().width`); w < 300 || w > 375 {
		t.Errorf("the map is %.0f px wide on a 375 px screen", w)
	}
	// Tables wider than the screen scroll inside a wrapper that a keyboard
	// can focus and a screen reader can name.
	bad := eval[[]string](p, `Array.from(document.querySelectorAll("main table")).filter(t => {
		const w = t.parentElement;
		return !(w.getAttribute("tabindex") === "0" && (w.hasAttribute("aria-label") || w.hasAttribute("aria-labelledby")) && getComputedStyle(w).overflowX !== "visible");
	}).map(t => t.id || t.className || t.outerHTML.slice(0, 60))`)
	for _, b := range bad {
		t.Errorf("table %q is not in a focusable, labelled, scrolling wrapper", b)
	}

	for _, sel := range []string{
		"#sign-out", `nav a[href="/portal/api-keys"]`, "#export-xlsx", "#export-csv",
		"#route-map [tabindex=\"0\"]", "#route-map button.map-zoom-in", "#route-map button.map-zoom-out", "#route-map button.map-fit",
		"#map-legend li[data-route]", `section.route:last-of-type [tabindex="0"]:has(> table.stops)`,
	} {
		p.do("scroll to "+sel, chromedp.ScrollIntoView(chromedp.CSS(sel)))
		problem := eval[string](p, fmt.Sprintf(`(() => {
			const e = document.querySelector(%s);
			const r = e.getBoundingClientRect();
			if (r.width === 0 || r.height === 0) return "has no size";
			if (r.left < 0 || r.right > window.innerWidth + 0.5) return "sticks out of the screen: " + r.left + " to " + r.right;
			const x = Math.min(Math.max(r.left + r.width / 2, 0), window.innerWidth - 1), y = Math.min(Math.max(r.top + r.height / 2, 0), window.innerHeight - 1);
			const hit = document.elementFromPoint(x, y);
			if (!hit || !(e === hit || e.contains(hit) || hit.contains(e))) return "is covered by " + (hit ? hit.outerHTML.slice(0, 80) : "nothing");
			return "";
		})()`, jsString(sel)))
		if problem != "" {
			t.Errorf("at 375 px, %s %s", sel, problem)
		}
	}
	// The page still has no sideways scroll after the scrolling above.
	if w := eval[int](p, `document.documentElement.scrollWidth`); w > 375 {
		t.Errorf("the page scrolls sideways: scrollWidth %d > 375", w)
	}
}
