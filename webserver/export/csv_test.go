package export

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"routeopt.io/routeopt/api/v1alpha1"
)

// readCSV checks the BOM and the CRLF line ends, and parses the rest with
// encoding/csv (strict: no lazy quotes, every record as long as the header).
func readCSV(t *testing.T, data []byte) [][]string {
	t.Helper()
	body, ok := bytes.CutPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	if !ok {
		t.Fatalf("no UTF-8 BOM: % x", data[:min(len(data), 8)])
	}
	if !bytes.HasSuffix(body, []byte("\r\n")) {
		t.Errorf("the last record does not end with CRLF")
	}
	if i := bytes.IndexByte(body, '\n'); i < 1 || body[i-1] != '\r' {
		t.Errorf("the header does not end with CRLF")
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv: %v", err)
	}
	return rows
}

// checkCSV checks every cell against the result: one row per stop, routes
// in the result's order, stops in driving order.
func checkCSV(t *testing.T, rows [][]string, opt *v1alpha1.Optimization, res *v1alpha1.Result, driver bool) {
	t.Helper()
	header := append([]string{"Vehicle"}, plainHeader...)
	if driver {
		header = append([]string{"Vehicle", "Driver"}, driverHeader...)
	}
	if !slices.Equal(rows[0], header) {
		t.Fatalf("header %q, want %q", rows[0], header)
	}
	col := func(name string) int { return slices.Index(header, name) }
	orders := ordersByID(opt)
	n := 1
	for _, r := range res.Routes {
		for _, s := range r.Stops {
			if n >= len(rows) {
				t.Fatalf("only %d rows", len(rows))
			}
			row := rows[n]
			o := orders[s.OrderRef]
			want := map[string]string{
				"Vehicle":         wantText(r.VehicleRef),
				"Seq":             strconv.Itoa(s.Seq),
				"Planned arrival": hhmmTest(s.ArrivalS),
				"Time window":     wantWindow(o),
				"Order ref":       wantText(s.OrderRef),
				"Address":         wantText(s.Address),
				"Service (min)":   strconv.FormatFloat(*o.ServiceMinutes, 'f', -1, 64),
				"Latitude":        strconv.FormatFloat(s.Latitude, 'f', -1, 64),
				"Longitude":       strconv.FormatFloat(s.Longitude, 'f', -1, 64),
			}
			if driver {
				want["Driver"] = wantText(*r.DriverName)
				want["Customer"] = wantText(*o.Customer)
				want["Phone"] = wantText(*o.Phone)
				want["Notes"] = wantText(*o.Notes)
			}
			for name, w := range want {
				if got := row[col(name)]; got != w {
					t.Errorf("row %d %s: got %q, want %q", n+1, name, got, w)
				}
			}
			// Numbers parse back exactly.
			if lat, err := strconv.ParseFloat(row[col("Latitude")], 64); err != nil || lat != s.Latitude {
				t.Errorf("row %d latitude %q does not round-trip %v", n+1, row[col("Latitude")], s.Latitude)
			}
			n++
		}
	}
	if n != len(rows) {
		t.Errorf("%d rows, want %d (header and one per stop)", len(rows), n)
	}
}

func TestCSVMatchesResult(t *testing.T) {
	opt, res := fixture(500, 20, 5)
	for _, driver := range []bool{true, false} {
		t.Run(fmt.Sprintf("driver=%v", driver), func(t *testing.T) {
			data := render(t, opt, res, Options{Format: CSV, IncludeDriverInstructions: driver})
			rows := readCSV(t, data)
			if len(rows) != 501 {
				t.Fatalf("%d rows, want 501", len(rows))
			}
			checkCSV(t, rows, opt, res, driver)
			if !driver {
				for _, o := range opt.Spec.Orders {
					if bytes.Contains(data, []byte(*o.Customer)) || bytes.Contains(data, []byte(*o.Phone)) {
						t.Fatalf("customer data %q in the csv without driver instructions", *o.Customer)
					}
				}
			}
		})
	}
}

// Hostile customer text round-trips exactly through encoding/csv, except
// for the neutralising quote (and CR line breaks read as LF).
func TestCSVHostileText(t *testing.T) {
	opt, res := hostileFixture()
	data := render(t, opt, res, Options{Format: CSV, IncludeDriverInstructions: true})
	rows := readCSV(t, data)
	checkCSV(t, rows, opt, res, true)

	// Literal expectations, not derived from wantText: customer column.
	customer := slices.Index(rows[0], "Customer")
	want := map[string]string{
		hostile[0]:                         "'" + hostile[0],
		"+1":                               "'+1",
		"-2":                               "'-2",
		"@SUM(1+1)*cmd|' /C calc'!A0":      "'@SUM(1+1)*cmd|' /C calc'!A0",
		"\t=1+1":                           "'\t=1+1",
		"\r=1+1":                           "'\n=1+1",
		"=1":                               "'=1",
		"first\r\nsecond":                  "first\nsecond",
		"line one\nline two\n":             "line one\nline two\n",
		"a,b,,c":                           "a,b,,c",
		`She said "ring twice", then left`: `She said "ring twice", then left`,
		"مرحبا، التسليم إلى الباب الخلفي":                     "مرحبا، التسليم إلى الباب الخلفي",
		"שלום, נא להתקשר לפני ההגעה":                          "שלום, נא להתקשר לפני ההגעה",
		"📦🚚 👩‍👩‍👧‍👦 ✅ 🇩🇪":                                     "📦🚚 👩‍👩‍👧‍👦 ✅ 🇩🇪",
		"e\u0301 n\u0303 Z\u0351\u0337a\u0320l\u0360g\u0315o": "e\u0301 n\u0303 Z\u0351\u0337a\u0320l\u0360g\u0315o",
		"\u202Egnp.exe":                   "\u202Egnp.exe",
		"  leading and trailing spaces  ": "  leading and trailing spaces  ",
		"O'Brien's \"Pub\"; <b>&amp;</b>": "O'Brien's \"Pub\"; <b>&amp;</b>",
		"_x0041_ is not an A":             "_x0041_ is not an A",
		"+49 30 1234567":                  "'+49 30 1234567",
	}
	if len(want) != len(hostile) {
		t.Fatalf("the test lists %d expectations for %d hostile strings", len(want), len(hostile))
	}
	for i, h := range hostile {
		if got := rows[1+i][customer]; got != want[h] {
			t.Errorf("customer %q: got %q, want %q", h, got, want[h])
		}
	}
	// The vehicle and driver columns are neutralised too.
	if got := rows[1][0]; got != "'=cmd|' /C calc'!A0" {
		t.Errorf("vehicle %q", got)
	}
	if got := rows[1][1]; got != "'@Driver \"Bob\", the 🚚" {
		t.Errorf("driver %q", got)
	}
	// No field of the file starts a formula.
	for i, row := range rows[1:] {
		for j, f := range row {
			if f != "" && strings.ContainsRune("=+-@\t\r", rune(f[0])) && j != slices.Index(rows[0], "Latitude") && j != slices.Index(rows[0], "Longitude") {
				t.Errorf("row %d field %d starts a formula: %q", i+2, j, f)
			}
		}
	}
}

// A stop's customer and time window are the result's own: the sheet shows
// them even where the spec says otherwise (a stop carries the order's as
// the solve saw it). Its phone, notes and service minutes, which the result
// does not carry, come from the order.
func TestStopsReadTheResult(t *testing.T) {
	opt, res := fixture(6, 1, 0)
	s := &res.Routes[0].Stops[0]
	o := ordersByID(opt)[s.OrderRef]
	s.Customer, s.TimeWindowStart, s.TimeWindowEnd = ptr("From the result"), ptr("10:00"), nil
	o.Customer, o.TimeWindowStart, o.TimeWindowEnd = ptr("From the spec"), ptr("07:00"), ptr("08:00")
	o.Phone, o.Notes, o.ServiceMinutes = ptr("+49 30 7654321"), ptr("Spec notes"), ptr(12.5)
	rows := readCSV(t, render(t, opt, res, Options{Format: CSV, IncludeDriverInstructions: true}))
	col := func(name string) string { return rows[1][slices.Index(rows[0], name)] }
	for name, want := range map[string]string{
		"Customer": "From the result", "Time window": "from 10:00",
		"Phone": "'+49 30 7654321", "Notes": "Spec notes", "Service (min)": "12.5",
	} {
		if got := col(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
}
