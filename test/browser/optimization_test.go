package browser

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOptimizationPage opens a completed optimization from the list and
// checks the page against GET .../result: the KPIs, the map (one path per
// route, one marker per stop, the depot, the legend), every route's table
// row for row and the unassigned orders.
func TestOptimizationPage(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Page Test GmbH")
	o := c.create(t, smallProblem("Tuesday deliveries"))
	c.waitStatus(t, o.ID, "completed")
	res := c.result(t, o.ID)
	if len(res.Unassigned) == 0 || res.KPIs.LateStops == 0 || len(routesWithStops(res)) < 2 {
		t.Fatalf("the problem should give 2 routes, a late stop and an unassigned order; the result has %d routes, %d late, %d unassigned",
			len(routesWithStops(res)), res.KPIs.LateStops, len(res.Unassigned))
	}

	p := openPage(t, d)
	p.navigate("/portal/")
	p.signIn(c.key)
	p.click(fmt.Sprintf(`tr[data-id=%q] [data-col=name] a`, o.ID))
	p.waitJS("the optimization's page", fmt.Sprintf(`location.pathname === "/portal/optimizations/%s"`, o.ID))
	p.waitText("#opt-state", "completed")
	if got := p.text("h1"); got != "Tuesday deliveries" {
		t.Errorf("h1 says %q, want the name", got)
	}
	checkResultPage(t, p, res)
	p.waitVisible("#export-xlsx")
	p.waitVisible("#export-csv")
	if visible(p, "#cancel") {
		t.Error("#cancel is shown for a completed optimization")
	}
}

// routesWithStops are the routes the page draws and tabulates.
func routesWithStops(r result) []route {
	var out []route
	for _, rt := range r.Routes {
		if len(rt.Stops) > 0 {
			out = append(out, rt)
		}
	}
	return out
}

// checkResultPage checks the KPIs, the map, the route tables and the
// unassigned table of a completed optimization's page against its result.
func checkResultPage(t *testing.T, p *page, res result) {
	t.Helper()
	routes := routesWithStops(res)
	stops := 0
	for _, rt := range routes {
		stops += len(rt.Stops)
	}

	// The map: one path per route, one marker per stop, one depot.
	p.waitCount("#route-map .route-path", len(routes))
	p.waitCount("#route-map .stop-marker", stops)
	if n := p.count("#route-map .depot-marker"); n != 1 {
		t.Errorf("%d .depot-marker, want 1", n)
	}
	markers := eval[[]string](p, `Array.from(document.querySelectorAll("#route-map .stop-marker")).map(m => m.dataset.route + "/" + m.dataset.seq)`)
	var want []string
	for i, rt := range routes {
		for _, s := range rt.Stops {
			want = append(want, fmt.Sprintf("%d/%d", i, s.Seq))
		}
	}
	if strings.Join(sorted(markers), " ") != strings.Join(sorted(want), " ") {
		t.Errorf("stop markers (route/seq) %v, want %v", markers, want)
	}
	if colors := eval[[]string](p, `Array.from(document.querySelectorAll("#route-map .route-path")).map(e => getComputedStyle(e).stroke)`); len(unique(colors)) != len(routes) {
		t.Errorf("route colours %v: want %d distinct ones", colors, len(routes))
	}
	if n := p.count("#map-legend li[data-route]"); n != len(routes) {
		t.Errorf("the legend has %d entries, want one per route (%d)", n, len(routes))
	}
	legend := p.text("#map-legend")
	for _, rt := range routes {
		if !strings.Contains(legend, rt.VehicleRef) {
			t.Errorf("the legend %q does not name %s", legend, rt.VehicleRef)
		}
	}

	// The KPIs.
	kpi := func(name string) string { return p.text(fmt.Sprintf(`#kpis dd[data-kpi=%s]`, name)) }
	for name, v := range map[string]int{
		"orders_assigned":   res.KPIs.OrdersAssigned,
		"orders_unassigned": res.KPIs.OrdersUnassigned,
		"vehicles_used":     res.KPIs.VehiclesUsed,
		"late_stops":        res.KPIs.LateStops,
	} {
		if got := kpi(name); got != strconv.Itoa(v) {
			t.Errorf("KPI %s shows %q, want %d", name, got, v)
		}
	}
	if got := kpi("distance_m"); !matchesNumber(got, `^(\d+(?:\.\d+)?) km$`, res.KPIs.DistanceM/1000) {
		t.Errorf("KPI distance_m shows %q, want %.1f km", got, res.KPIs.DistanceM/1000)
	}
	if got := kpi("drive_seconds"); !matchesDuration(got, res.KPIs.DriveSeconds) {
		t.Errorf("KPI drive_seconds shows %q, want %s (h:mm)", got, hmm(res.KPIs.DriveSeconds))
	}
	if got := kpi("avg_utilization"); !matchesNumber(got, `^(\d+(?:\.\d+)?) ?%$`, res.KPIs.AvgUtilization*100) {
		t.Errorf("KPI avg_utilization shows %q, want %.0f%%", got, res.KPIs.AvgUtilization*100)
	}

	// One section per route with stops, in the result's order, and its
	// table row for row.
	refs := eval[[]string](p, `Array.from(document.querySelectorAll("section.route")).map(s => s.dataset.vehicleRef)`)
	var wantRefs []string
	for _, rt := range routes {
		wantRefs = append(wantRefs, rt.VehicleRef)
	}
	if strings.Join(refs, "|") != strings.Join(wantRefs, "|") {
		t.Errorf("route sections %v, want %v", refs, wantRefs)
	}
	for _, rt := range routes {
		sec := fmt.Sprintf(`section.route[data-vehicle-ref=%q]`, rt.VehicleRef)
		// The section's text outside its table: the heading and summary.
		heading := eval[string](p, fmt.Sprintf(`(() => {
			const s = document.querySelector(%s).cloneNode(true);
			s.querySelectorAll("table").forEach(t => t.remove());
			return s.textContent.replace(/\s+/g, " ").trim();
		})()`, jsString(sec)))
		if !strings.Contains(heading, rt.VehicleRef) || !strings.Contains(heading, fmt.Sprintf("%d stop", len(rt.Stops))) ||
			!strings.Contains(heading, fmt.Sprintf("%.1f km", rt.DistanceM/1000)) {
			t.Errorf("route heading %q should name %s, its %d stops and %.1f km", heading, rt.VehicleRef, len(rt.Stops), rt.DistanceM/1000)
		}
		rows := p.rows(sec + " table.stops tbody tr[data-seq]")
		if len(rows) != len(rt.Stops) {
			t.Errorf("%s: %d rows, want %d", rt.VehicleRef, len(rows), len(rt.Stops))
			continue
		}
		for i, s := range rt.Stops {
			wantRow := map[string]string{
				"seq":       strconv.Itoa(s.Seq),
				"arrival":   clock(s.ArrivalS),
				"window":    window(s.TimeWindowStart, s.TimeWindowEnd),
				"order_ref": s.OrderRef,
				"customer":  orDash(s.Customer),
				"address":   s.Address,
				"late":      "On time",
			}
			if rows[i].Data["seq"] != strconv.Itoa(s.Seq) {
				t.Errorf("%s row %d: data-seq %q, want %d", rt.VehicleRef, i+1, rows[i].Data["seq"], s.Seq)
			}
			if s.LateS > 0 {
				// "Late 12 min": whole minutes, rounded either way.
				got := rows[i].Cols["late"]
				if m := regexp.MustCompile(`^Late (\d+) min$`).FindStringSubmatch(got); m == nil || !closeTo(m[1], float64(s.LateS)/60, 1) {
					t.Errorf("%s seq %d: late %q, want Late %d min", rt.VehicleRef, s.Seq, got, s.LateS/60)
				}
				delete(wantRow, "late")
			}
			for col, w := range wantRow {
				if got := rows[i].Cols[col]; got != w {
					t.Errorf("%s seq %d: %s %q, want %q", rt.VehicleRef, s.Seq, col, got, w)
				}
			}
		}
	}

	// The unassigned orders, with reasons.
	if len(res.Unassigned) > 0 {
		rows := p.rows("table#unassigned tbody tr[data-order-ref]")
		if len(rows) != len(res.Unassigned) {
			t.Errorf("table#unassigned has %d rows, want %d", len(rows), len(res.Unassigned))
		}
		for i := range min(len(rows), len(res.Unassigned)) {
			u := res.Unassigned[i]
			got := rows[i]
			if got.Data["orderRef"] != u.OrderRef || got.Cols["order_ref"] != u.OrderRef || got.Cols["message"] != u.Message ||
				!strings.Contains(got.Cols["reason"], u.Reason) && !strings.Contains(strings.ToLower(got.Cols["reason"]), strings.ReplaceAll(u.Reason, "_", " ")) {
				t.Errorf("unassigned row %d: %+v, want %+v", i+1, got, u)
			}
		}
	} else if n := p.count("table#unassigned"); n != 0 {
		t.Error("table#unassigned is shown with no unassigned orders")
	}
}

// clock is a time of day as the contract and the driver exports show it:
// HH:MM, minutes cut (not rounded), hours past 24 kept.
func clock(s int) string { return fmt.Sprintf("%02d:%02d", s/3600, s/60%60) }

// hmm is a duration as h:mm.
func hmm(s float64) string {
	m := int(math.Round(s / 60))
	return fmt.Sprintf("%d:%02d", m/60, m%60)
}

// matchesDuration accepts a duration shown as h:mm, rounded or cut to the
// minute (the contract says h:mm, not which).
func matchesDuration(got string, s float64) bool {
	cut := int(s) / 60
	return got == hmm(s) || got == fmt.Sprintf("%d:%02d", cut/60, cut%60)
}

// matchesNumber tells whether got matches re and its first group, with as
// many decimals as it shows, is v rounded to that many.
func matchesNumber(got, re string, v float64) bool {
	m := regexp.MustCompile(re).FindStringSubmatch(got)
	if m == nil {
		return false
	}
	decimals := 0
	if i := strings.IndexByte(m[1], '.'); i >= 0 {
		decimals = len(m[1]) - i - 1
	}
	return closeTo(m[1], v, 0.5*math.Pow(10, -float64(decimals)))
}

// window is a stop's time window as the contract shows it: "09:00–12:00",
// or "—" without one.
func window(start, end *string) string {
	if start == nil && end == nil {
		return "—"
	}
	return orEmpty(start) + "–" + orEmpty(end)
}

// orEmpty and orDash read optional strings of the result.
func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "—"
	}
	return *s
}

func unique(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// TestFailedOptimization shows a failed optimization's error code and
// message with an explanation in plain words, and no export or cancel.
func TestFailedOptimization(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Failed Test GmbH")
	o := c.create(t, failingProblem("Depot without coordinates"))
	o = c.waitStatus(t, o.ID, "failed")
	if o.ErrorCode == nil || o.ErrorMessage == nil {
		t.Fatalf("failed without error_code and error_message: %+v", o)
	}

	p := openPage(t, d)
	p.navigate("/portal/optimizations/" + o.ID)
	p.signIn(c.key)
	p.waitText("#opt-state", "failed")
	p.waitVisible("#opt-error")
	if got := p.text("#opt-error code"); got != *o.ErrorCode {
		t.Errorf("#opt-error code says %q, want %s", got, *o.ErrorCode)
	}
	text := p.text("#opt-error")
	if !strings.Contains(text, *o.ErrorMessage) {
		t.Errorf("#opt-error %q does not give the error_message %q", text, *o.ErrorMessage)
	}
	words := strings.NewReplacer(*o.ErrorCode, "", *o.ErrorMessage, "").Replace(text)
	if len(strings.Fields(words)) < 6 {
		t.Errorf("#opt-error %q has no explanation in words beyond the code and the message", text)
	}
	for _, sel := range []string{"#export-csv", "#export-xlsx", "#cancel"} {
		if visible(p, sel) {
			t.Errorf("%s is shown for a failed optimization", sel)
		}
	}
}

// TestCancel cancels a running (or queued) optimization from its page:
// the dialog (dismissed first, which keeps it), the confirmation, the state
// the page shows and the API's.
func TestCancel(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Cancel Test GmbH")
	o := c.create(t, slowProblem("Big Friday"))

	p := openPage(t, d)
	p.navigate("/portal/optimizations/" + o.ID)
	p.signIn(c.key)
	p.waitVisible("#cancel")
	if state := p.text("#opt-state"); state != "queued" && state != "running" {
		t.Fatalf("#opt-state says %q before the cancel, want queued or running", state)
	}
	p.click("#cancel")
	p.waitJS("the cancel dialog to open", `document.querySelector("dialog#cancel-dialog").open`)
	p.click("#cancel-dismiss")
	p.waitJS("the cancel dialog to close", `!document.querySelector("dialog#cancel-dialog").open`)
	for _, r := range p.Requests() {
		if strings.HasSuffix(r.URL, "/cancel") {
			t.Fatalf("the dismissed dialog sent %s %s", r.Method, r.URL)
		}
	}

	p.click("#cancel")
	p.waitJS("the cancel dialog to open", `document.querySelector("dialog#cancel-dialog").open`)
	p.click("#cancel-confirm")
	p.waitText("#opt-state", "cancelled")
	var got optimization
	c.must(t, 200, "GET", "/v1/optimizations/"+o.ID, nil, &got)
	if got.Status != "cancelled" {
		t.Errorf("the API says %s after the cancel, want cancelled", got.Status)
	}
	if visible(p, "#cancel") {
		t.Error("#cancel is still shown after the cancel")
	}
	var posted bool
	for _, r := range p.Requests() {
		posted = posted || r.Method == "POST" && strings.HasSuffix(r.URL, "/v1/optimizations/"+o.ID+"/cancel")
	}
	if !posted {
		t.Error("the page did not POST .../cancel")
	}
}

// visible tells whether an element exists and is rendered.
func visible(p *page, sel string) bool {
	p.t.Helper()
	return eval[bool](p, fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.checkVisibility(); })()`, jsString(sel)))
}
