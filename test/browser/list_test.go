package browser

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestList signs in and checks the list against the API: every row's name,
// state, progress, orders, distance and unassigned, newest first, 20 to a
// page, and the pagination controls.
func TestList(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "List Test GmbH")

	// 23 optimizations: a failed one, a cancelled one, one with an
	// unassigned order, and 20 tiny ones, created a few at a time.
	failed := c.create(t, failingProblem("Failing depot"))
	cancelled := c.create(t, slowProblem("Cancelled early"))
	var o optimization
	c.must(t, 200, "POST", "/v1/optimizations/"+cancelled.ID+"/cancel", nil, &o)
	// A name with markup shows as text, never as elements.
	withUnassigned := c.create(t, smallProblem(`<b>Tuesday</b> & "deliveries"`))
	for i := range 20 {
		c.create(t, tinyProblem(fmt.Sprintf("Filler %02d", i+1)))
	}
	c.waitStatus(t, failed.ID, "failed")
	c.waitStatus(t, cancelled.ID, "cancelled")
	c.waitStatus(t, withUnassigned.ID, "completed")
	waitFor(t, 90*time.Second, "every optimization to finish", func() (bool, string) {
		var l optimizationList
		c.must(t, 200, "GET", "/v1/optimizations?page_size=100", nil, &l)
		for _, o := range l.Items {
			if o.Status == "queued" || o.Status == "running" {
				return false, o.ID + " is " + o.Status
			}
		}
		return l.Total == 23, fmt.Sprintf("%d optimizations", l.Total)
	})
	pages := [2]optimizationList{}
	for i := range pages {
		c.must(t, 200, "GET", fmt.Sprintf("/v1/optimizations?page=%d&page_size=20", i+1), nil, &pages[i])
	}
	if len(pages[0].Items) != 20 || len(pages[1].Items) != 3 {
		t.Fatalf("the API's pages hold %d and %d, want 20 and 3", len(pages[0].Items), len(pages[1].Items))
	}
	results := map[string]*result{}
	for _, pg := range pages {
		for i, o := range pg.Items {
			if o.Status == "completed" {
				r := c.result(t, o.ID)
				results[o.ID] = &r
			}
			if i > 0 && o.CreatedAt > pg.Items[i-1].CreatedAt {
				t.Fatalf("the API's list is not newest first: %s after %s", o.CreatedAt, pg.Items[i-1].CreatedAt)
			}
		}
	}

	p := openPage(t, d)
	p.navigate("/portal/")
	p.signIn(c.key)
	if got := p.text("#company-name"); got != "List Test GmbH" {
		t.Errorf("#company-name says %q, want List Test GmbH", got)
	}

	// The markup in a name stays text: checked on the page that shows it
	// (page 2, unless a filler shares its created_at second).
	checkMarkup := func(pg optimizationList) {
		for _, o := range pg.Items {
			if o.ID != withUnassigned.ID {
				continue
			}
			if n := p.count(fmt.Sprintf(`tr[data-id=%q] [data-col=name] b`, o.ID)); n != 0 {
				t.Errorf("the name's markup became %d <b> element(s)", n)
			}
		}
	}
	checkListPage(t, p, pages[0].Items, results)
	checkMarkup(pages[0])
	p.waitText("#page-info", "Page 1 of 2")
	checkDisabled(t, p, "#prev-page", true)
	checkDisabled(t, p, "#next-page", false)

	p.click("#next-page")
	checkListPage(t, p, pages[1].Items, results)
	checkMarkup(pages[1])
	p.waitText("#page-info", "Page 2 of 2")
	checkDisabled(t, p, "#prev-page", false)
	checkDisabled(t, p, "#next-page", true)

	p.click("#prev-page")
	checkListPage(t, p, pages[0].Items, results)
}

// checkListPage waits until table#optimizations shows exactly items, in
// their order (the API's: newest first), each as the API describes it.
func checkListPage(t *testing.T, p *page, items []optimization, results map[string]*result) {
	t.Helper()
	var last string
	deadline := time.Now().Add(actionTimeout)
	for {
		rows := p.rows("table#optimizations tbody tr[data-id]")
		last = diffListRows(rows, items, results)
		if last == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("table#optimizations does not match the API:\n%s", last)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Each name links to the optimization's page.
	hrefs := eval[[]string](p, `Array.from(document.querySelectorAll("table#optimizations tbody tr[data-id] [data-col=name] a")).map(a => a.getAttribute("href"))`)
	for i, o := range items {
		if i >= len(hrefs) || hrefs[i] != "/portal/optimizations/"+o.ID {
			t.Errorf("row %d links to %v, want /portal/optimizations/%s", i+1, at(hrefs, i), o.ID)
		}
	}
}

func at(list []string, i int) any {
	if i < len(list) {
		return list[i]
	}
	return nil
}

var oneDecimalKm = regexp.MustCompile(`^(\d+\.\d)( km)?$`)

// diffListRows describes how the rows differ from the API's items, or "".
func diffListRows(rows []row, items []optimization, results map[string]*result) string {
	var out []string
	if len(rows) != len(items) {
		out = append(out, fmt.Sprintf("%d rows, want %d", len(rows), len(items)))
	}
	for i := range min(len(rows), len(items)) {
		r, o := rows[i], items[i]
		if r.Data["id"] != o.ID {
			out = append(out, fmt.Sprintf("row %d is %s, want %s (newest first)", i+1, r.Data["id"], o.ID))
			continue
		}
		name := o.ID[:8]
		if o.Name != nil {
			name = *o.Name
		}
		want := map[string]string{
			"name":       name,
			"state":      o.Status,
			"progress":   fmt.Sprintf("%d%%", o.Progress),
			"orders":     strconv.Itoa(o.Orders),
			"distance":   "—",
			"unassigned": "—",
		}
		if res := results[o.ID]; res != nil {
			want["unassigned"] = strconv.Itoa(res.KPIs.OrdersUnassigned)
			got := r.Cols["distance"]
			if m := oneDecimalKm.FindStringSubmatch(got); m == nil || !closeTo(m[1], res.KPIs.DistanceM/1000, 0.05) {
				out = append(out, fmt.Sprintf("row %d (%s): distance %q, want %.1f km (one decimal)", i+1, o.ID, got, res.KPIs.DistanceM/1000))
			}
			delete(want, "distance")
		}
		for col, w := range want {
			if got := r.Cols[col]; got != w {
				out = append(out, fmt.Sprintf("row %d (%s): %s %q, want %q", i+1, o.ID, col, got, w))
			}
		}
		if r.Cols["age"] == "" {
			out = append(out, fmt.Sprintf("row %d (%s): no age", i+1, o.ID))
		}
	}
	return strings.Join(out, "\n")
}

// closeTo tells whether the decimal text is within tol of v.
func closeTo(text string, v, tol float64) bool {
	f, err := strconv.ParseFloat(text, 64)
	return err == nil && math.Abs(f-v) <= tol+1e-9
}

// checkDisabled checks a button's disabled property.
func checkDisabled(t *testing.T, p *page, sel string, want bool) {
	t.Helper()
	if got := eval[bool](p, fmt.Sprintf(`document.querySelector(%s).disabled`, jsString(sel))); got != want {
		t.Errorf("%s disabled = %v, want %v", sel, got, want)
	}
}
