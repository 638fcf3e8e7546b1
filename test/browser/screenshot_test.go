package browser

import (
	"routeopt.io/routeopt/test/e2e/framework"

	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write docs/img/portal-plan.png, the README's picture of the portal")

// TestREADMEScreenshot solves the README's plan (200 orders, 8 routes, see
// cityPlan) and checks that its page draws 8 route paths and 200 stop
// markers. With -update-screenshot it writes docs/img/portal-plan.png: the
// page at 1280 px wide from the top through the map to the first rows of
// the route tables.
//
//	go test ./test/browser -run TestREADMEScreenshot -update-screenshot
func TestREADMEScreenshot(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Spree Logistik GmbH")
	o := c.create(t, cityPlan())
	c.waitStatus(t, o.ID, "completed")
	res := c.result(t, o.ID)
	routes := routesWithStops(res)
	if len(routes) != 8 || res.KPIs.OrdersAssigned != 200 {
		t.Fatalf("the plan has %d routes and %d assigned orders, want 8 and 200 (unassigned: %+v)", len(routes), res.KPIs.OrdersAssigned, res.Unassigned)
	}

	p := openPage(t, d)
	p.do("size the window", chromedp.EmulateViewport(1280, 1000))
	p.navigate("/portal/optimizations/" + o.ID)
	p.signIn(c.key)
	p.waitText("#opt-state", "completed")
	p.waitCount("#route-map .route-path", 8)
	p.waitCount("#route-map .stop-marker", 200)
	p.waitCount("#map-legend li[data-route]", 8)
	p.waitCount("section.route", 8)
	if !*updateScreenshot {
		return
	}

	// From the top of the page to a little below the first route table's
	// header: the state, the KPIs, the map, its legend and the tables' start.
	bottom := eval[float64](p, `(() => {
		const first = document.querySelector("section.route table.stops tbody tr:nth-child(4)") || document.querySelector("section.route");
		return first.getBoundingClientRect().bottom + window.scrollY + 12;
	})()`)
	p.do("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); document.activeElement && document.activeElement.blur()`))
	ctx, cancel := context.WithTimeout(p.ctx, actionTimeout)
	defer cancel()
	shot, err := chromedp.Call(ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Format:                cdppage.CaptureScreenshotFormatPng,
		Clip:                  &cdppage.Viewport{X: 0, Y: 0, Width: 1280, Height: bottom, Scale: 1},
		CaptureBeyondViewport: ptr(true),
	})
	if err != nil {
		t.Fatalf("capture the page: %v", err)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "img", "portal-plan.png")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, shot.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (1280x%.0f)", path, bottom)
}
