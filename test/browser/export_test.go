package browser

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestExport downloads the CSV and the Excel driver sheets with the page's
// buttons and checks them against the result: every stop's vehicle,
// sequence, planned arrival and order ref in the CSV, every order ref in
// the workbook.
func TestExport(t *testing.T) {
	requireChromium(t)
	t.Parallel()
	x := openCompleted(t, "Export Test GmbH")
	p, res := x.p, x.res

	name, data := p.download("#export-csv")
	if !strings.HasSuffix(name, ".csv") {
		t.Errorf("the CSV download is named %q", name)
	}
	records, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff")))).ReadAll()
	if err != nil || len(records) < 2 {
		t.Fatalf("the CSV does not parse (%v): %q", err, data)
	}
	col := map[string]int{}
	for i, h := range records[0] {
		col[h] = i
	}
	for _, h := range []string{"Vehicle", "Seq", "Planned arrival", "Order ref"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("the CSV has no %q column: %q", h, records[0])
		}
	}
	var got, want []string
	for _, rec := range records[1:] {
		got = append(got, strings.Join([]string{rec[col["Vehicle"]], rec[col["Seq"]], rec[col["Planned arrival"]], rec[col["Order ref"]]}, " "))
	}
	for _, rt := range res.Routes {
		for _, s := range rt.Stops {
			want = append(want, strings.Join([]string{rt.VehicleRef, strconv.Itoa(s.Seq), clock(s.ArrivalS), s.OrderRef}, " "))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the CSV's stops (vehicle seq arrival order):\n%s\nwant the result's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	name, data = p.download("#export-xlsx")
	if !strings.HasSuffix(name, ".xlsx") {
		t.Errorf("the Excel download is named %q", name)
	}
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the workbook does not open: %v", err)
	}
	defer func() { _ = f.Close() }()
	// Route sheets list the stops, the Unassigned sheet the rest; in each
	// the "Order ref" column starts below its header row (after a title).
	var refs, unassignedRefs []string
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatalf("sheet %s: %v", sheet, err)
		}
		for i, r := range rows {
			refCol := slices.Index(r, "Order ref")
			if refCol < 0 {
				continue
			}
			for _, r := range rows[i+1:] {
				if refCol < len(r) && r[refCol] != "" {
					if sheet == "Unassigned" {
						unassignedRefs = append(unassignedRefs, r[refCol])
					} else {
						refs = append(refs, r[refCol])
					}
				}
			}
			break
		}
	}
	var wantRefs, wantUnassigned []string
	for _, rt := range res.Routes {
		for _, s := range rt.Stops {
			wantRefs = append(wantRefs, s.OrderRef)
		}
	}
	for _, u := range res.Unassigned {
		wantUnassigned = append(wantUnassigned, u.OrderRef)
	}
	slices.Sort(refs)
	slices.Sort(wantRefs)
	if !slices.Equal(refs, wantRefs) {
		t.Errorf("the workbook's route sheets list %v, want the result's stops %v", refs, wantRefs)
	}
	if !slices.Equal(unassignedRefs, wantUnassigned) {
		t.Errorf("the workbook's Unassigned sheet lists %v, want %v", unassignedRefs, wantUnassigned)
	}

	// The page went through the exports API, for each format.
	posts := 0
	for _, r := range p.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.URL, "/v1/optimizations/"+x.o.ID+"/exports") {
			posts++
		}
	}
	if posts != 2 {
		t.Errorf("the page sent %d POST .../exports, want 2", posts)
	}
}
