package export

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
)

// hhmmS is seconds since midnight for "HH:MM".
func hhmmS(h, m int) int { return h*3600 + m*60 }

// fleetFixture is a small plan that uses every fleet constraint an export
// shows, written by hand: Van 1 starts at a hub of its own, returns to the
// depot and takes a break before its first stop, one between its stops and
// one after its last; Van 2 leaves the depot and ends at its last stop (an
// open route); Van 3 is unused and would end at a yard given by
// coordinates only. Orders need skills and carry loads in two named
// dimensions (one order in only one of them).
func fleetFixture() (*v1alpha1.Optimization, *v1alpha1.Result) {
	name := "Fleet day"
	depotLabel := "Depot Lichtenberg"
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Name: "8d6f6c2e-2f43-4a53-9a55-1b1c9d8e7f60", CreationTimestamp: metav1.NewTime(fixtureCreated)},
		Spec: v1alpha1.OptimizationSpec{
			Name:  &name,
			Depot: v1alpha1.Depot{Label: &depotLabel, Address: ptr("Frankfurter Allee 200, 10365 Berlin"), Latitude: ptr(52.5145), Longitude: ptr(13.4993)},
		},
	}
	brk := []v1alpha1.Break{{Start: "07:00", End: "08:00", Minutes: 15}, {Start: "10:00", End: "12:00", Minutes: 30}, {Start: "13:00", End: "15:00", Minutes: 20}}
	caps := []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 500}, {Name: "volume_l", Value: 1000}}
	opt.Spec.Vehicles = []v1alpha1.Vehicle{
		{ID: "Van 1", Capacity: 10, Driver: ptr("Anna Müller"), VehicleConstraints: v1alpha1.VehicleConstraints{
			Skills: []string{"fridge"}, Capacities: caps, Breaks: brk,
			Start: &v1alpha1.Location{Label: ptr("Hub Nord"), Address: ptr("Hamburger Straße 1, 13353 Berlin")},
		}},
		{ID: "Van 2", Capacity: 10, Driver: ptr("Jürgen Nowak"), VehicleConstraints: v1alpha1.VehicleConstraints{
			Capacities: caps, OpenEnd: ptr(true),
		}},
		{ID: "Van 3", Capacity: 10, VehicleConstraints: v1alpha1.VehicleConstraints{
			Capacities: caps, End: &v1alpha1.Location{Latitude: ptr(52.4), Longitude: ptr(13.5)},
		}},
	}
	loads := func(w, v float64) []v1alpha1.DimensionLoad {
		return []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: w}, {Name: "volume_l", Value: v}}
	}
	opt.Spec.Orders = []v1alpha1.Order{
		{ID: "F-1", Latitude: ptr(52.53), Longitude: ptr(13.38), Customer: ptr("Bäckerei Weber"), Phone: ptr("+49 30 1111111"), Notes: ptr("Back door"),
			Skills: []string{"fridge"}, Loads: loads(120, 400), TimeWindows: []v1alpha1.TimeWindow{{Start: "08:00", End: "09:00"}, {Start: "11:00", End: "12:00"}}},
		{ID: "F-2", Latitude: ptr(52.52), Longitude: ptr(13.41), ServiceMinutes: ptr(10.0), Skills: []string{"=tail-lift", "fridge"}, Loads: loads(80.5, 200)},
		{ID: "F-3", Latitude: ptr(52.50), Longitude: ptr(13.43), Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 40}}},
		{ID: "F-4", Latitude: ptr(52.49), Longitude: ptr(13.45), Customer: ptr("Café Nord"), Loads: loads(10, 20)},
		{ID: "F-5", Latitude: ptr(52.48), Longitude: ptr(13.47), Loads: loads(5, 5)},
		{ID: "F-6", Latitude: ptr(52.60), Longitude: ptr(13.20), Skills: []string{"crane"}, Loads: loads(1, 1)},
	}
	stop := func(seq int, o *v1alpha1.Order, address string, arrival, wait, service int, window [2]string) v1alpha1.Stop {
		s := v1alpha1.Stop{
			Seq: seq, OrderRef: o.ID, Address: address, Latitude: *o.Latitude, Longitude: *o.Longitude,
			ArrivalS: arrival, StartS: arrival + wait, DepartS: arrival + wait + service, WaitS: wait,
			LegDistanceM: 4000, LegTravelS: 600, Customer: o.Customer,
		}
		if window[0] != "" {
			s.TimeWindowStart, s.TimeWindowEnd = ptr(window[0]), ptr(window[1])
		}
		return s
	}
	o := opt.Spec.Orders
	depotPlace := &v1alpha1.Place{Latitude: 52.5145, Longitude: 13.4993, Address: "Frankfurter Allee 200, 10365 Berlin"}
	van1 := v1alpha1.Route{
		VehicleRef: "Van 1", DriverName: ptr("Anna Müller"), DepartS: hhmmS(7, 30), ReturnS: hhmmS(14, 5), DistanceM: 21500,
		Load: 2, Capacity: 10,
		Loads:      map[string]float64{"weight_kg": 200.5, "volume_l": 600},
		Capacities: map[string]float64{"weight_kg": 500, "volume_l": 1000},
		Start:      &v1alpha1.Place{Latitude: 52.5400, Longitude: 13.3600, Address: "Hamburger Straße 1, 13353 Berlin"},
		End:        v1alpha1.RouteEnd{At: depotPlace},
		Breaks: []v1alpha1.RouteBreak{
			{StartS: hhmmS(13, 20), EndS: hhmmS(13, 40), AfterSeq: 2},
			{StartS: hhmmS(7, 30), EndS: hhmmS(7, 45), AfterSeq: 0},
			{StartS: hhmmS(11, 10), EndS: hhmmS(11, 40), AfterSeq: 1},
		},
		Stops: []v1alpha1.Stop{
			stop(1, &o[0], "", hhmmS(10, 55), 300, 300, [2]string{"11:00", "12:00"}),
			stop(2, &o[1], "Karl-Liebknecht-Straße 3, 10178 Berlin", hhmmS(12, 0), 0, 600, [2]string{}),
		},
	}
	van2 := v1alpha1.Route{
		VehicleRef: "Van 2", DriverName: ptr("Jürgen Nowak"), DepartS: hhmmS(8, 0), ReturnS: hhmmS(9, 10), DistanceM: 9000,
		Load: 3, Capacity: 10,
		Loads:      map[string]float64{"weight_kg": 55, "volume_l": 25},
		Capacities: map[string]float64{"weight_kg": 500, "volume_l": 1000},
		Start:      depotPlace,
		End:        v1alpha1.RouteEnd{Open: true},
		Breaks:     []v1alpha1.RouteBreak{},
		Stops: []v1alpha1.Stop{
			stop(1, &o[2], "", hhmmS(8, 10), 0, 300, [2]string{}),
			stop(2, &o[3], "", hhmmS(8, 30), 0, 300, [2]string{}),
			stop(3, &o[4], "", hhmmS(9, 5), 0, 300, [2]string{}),
		},
	}
	res := &v1alpha1.Result{
		ID: opt.Name, Status: v1alpha1.StateCompleted, Strategy: v1alpha1.StrategyOptimized,
		KPIs: v1alpha1.KPIs{
			OrdersTotal: 6, OrdersAssigned: 5, OrdersUnassigned: 1, VehiclesAvailable: 3, VehiclesUsed: 2,
			DistanceM: 30500, DriveSeconds: 4000, RouteSeconds: 27600, AvgUtilization: 0.25,
			PerVehicle: []v1alpha1.VehicleKPI{
				{VehicleRef: "Van 1", Stops: 2, DistanceM: 21500, Load: 2, Capacity: 10, Loads: van1.Loads, Capacities: van1.Capacities},
				{VehicleRef: "Van 2", Stops: 3, DistanceM: 9000, Load: 3, Capacity: 10, Loads: van2.Loads, Capacities: van2.Capacities},
				{VehicleRef: "Van 3", Capacity: 10, Loads: map[string]float64{"weight_kg": 0, "volume_l": 0}, Capacities: map[string]float64{"weight_kg": 500, "volume_l": 1000}},
			},
		},
		Routes:     []v1alpha1.Route{van1, van2},
		Unassigned: []v1alpha1.Unassigned{{OrderRef: "F-6", Reason: "skills_missing", Message: "No vehicle has the skill crane."}},
		Warnings:   []v1alpha1.Warning{},
	}
	return opt, res
}

// sheetRows reads every sheet's rows as excelize shows them (formatted
// values, trailing empty cells left out).
func sheetRows(t *testing.T, data []byte) map[string][][]string {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("excelize cannot open the workbook: %v", err)
	}
	defer func() { _ = f.Close() }()
	out := map[string][][]string{}
	for _, name := range f.GetSheetList() {
		rows, err := f.GetRows(name)
		if err != nil {
			t.Fatalf("sheet %s: %v", name, err)
		}
		out[name] = rows
	}
	return out
}

// dropCols removes the named columns (by the header in row header) from
// every row; rows shorter than a column (trailing empty cells left out) stay
// short.
func dropCols(rows [][]string, header int, names ...string) [][]string {
	var idx []int
	for i, h := range rows[header] {
		if slices.Contains(names, h) {
			idx = append(idx, i)
		}
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		var kept []string
		for i, v := range r {
			if !slices.Contains(idx, i) {
				kept = append(kept, v)
			}
		}
		out = append(out, kept)
	}
	return out
}

// The csv of fleetFixture with driver instructions, row for row: the
// start, each break after the stop its after_seq names (0: before the
// first), the end (an open route's at its last stop), the orders' skills and
// their loads per dimension.
var fleetCSVDriver = [][]string{
	{"Vehicle", "Driver", "Activity", "Seq", "Planned arrival", "Time window", "Order ref", "Customer", "Address", "Phone", "Notes", "Service (min)", "Skills", "weight_kg", "volume_l", "Latitude", "Longitude"},
	{"Van 1", "Anna Müller", "Start", "", "07:30", "", "", "", "Hub Nord, Hamburger Straße 1, 13353 Berlin", "", "", "", "", "", "", "52.54", "13.36"},
	{"Van 1", "Anna Müller", "Break 15 min, 07:30–07:45", "", "07:30", "", "", "", "", "", "", "", "", "", "", "", ""},
	{"Van 1", "Anna Müller", "Stop", "1", "10:55", "11:00-12:00", "F-1", "Bäckerei Weber", "", "'+49 30 1111111", "Back door", "5", "fridge", "120", "400", "52.53", "13.38"},
	{"Van 1", "Anna Müller", "Break 30 min, 11:10–11:40", "", "11:10", "", "", "", "", "", "", "", "", "", "", "", ""},
	{"Van 1", "Anna Müller", "Stop", "2", "12:00", "", "F-2", "", "Karl-Liebknecht-Straße 3, 10178 Berlin", "", "", "10", "'=tail-lift, fridge", "80.5", "200", "52.52", "13.41"},
	{"Van 1", "Anna Müller", "Break 20 min, 13:20–13:40", "", "13:20", "", "", "", "", "", "", "", "", "", "", "", ""},
	{"Van 1", "Anna Müller", "End", "", "14:05", "", "", "", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "", "", "", "", "", "", "52.5145", "13.4993"},
	{"Van 2", "Jürgen Nowak", "Start", "", "08:00", "", "", "", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "", "", "", "", "", "", "52.5145", "13.4993"},
	{"Van 2", "Jürgen Nowak", "Stop", "1", "08:10", "", "F-3", "", "", "", "", "5", "", "40", "", "52.5", "13.43"},
	{"Van 2", "Jürgen Nowak", "Stop", "2", "08:30", "", "F-4", "Café Nord", "", "", "", "5", "", "10", "20", "52.49", "13.45"},
	{"Van 2", "Jürgen Nowak", "Stop", "3", "09:05", "", "F-5", "", "", "", "", "5", "", "5", "5", "52.48", "13.47"},
	{"Van 2", "Jürgen Nowak", "End at the last stop (open route)", "", "09:10", "", "", "", "", "", "", "", "", "", "", "", ""},
}

// The route sheets of fleetFixture's workbook with driver instructions, as
// excelize shows them (times as hh:mm, coordinates with six decimals, a
// row's trailing empty cells left out).
var fleetSheetsDriver = map[string][][]string{
	"Van 1": {
		{"Driver: Anna Müller  ·  Vehicle: Van 1  ·  Departure: 07:30  ·  End: 14:05  ·  2 stops  ·  21.5 km"},
		{"Activity", "Seq", "Planned arrival", "Time window", "Order ref", "Customer", "Address", "Phone", "Notes", "Service (min)", "Skills", "weight_kg", "volume_l", "Latitude", "Longitude"},
		{"Start", "", "07:30", "", "", "", "Hub Nord, Hamburger Straße 1, 13353 Berlin", "", "", "", "", "", "", "52.540000", "13.360000"},
		{"Break 15 min, 07:30–07:45", "", "07:30"},
		{"Stop", "1", "10:55", "11:00-12:00", "F-1", "Bäckerei Weber", "", "+49 30 1111111", "Back door", "5", "fridge", "120", "400", "52.530000", "13.380000"},
		{"Break 30 min, 11:10–11:40", "", "11:10"},
		{"Stop", "2", "12:00", "", "F-2", "", "Karl-Liebknecht-Straße 3, 10178 Berlin", "", "", "10", "'=tail-lift, fridge", "80.5", "200", "52.520000", "13.410000"},
		{"Break 20 min, 13:20–13:40", "", "13:20"},
		{"End", "", "14:05", "", "", "", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "", "", "", "", "", "", "52.514500", "13.499300"},
	},
	"Van 2": {
		{"Driver: Jürgen Nowak  ·  Vehicle: Van 2  ·  Departure: 08:00  ·  Ends at the last stop: 09:10  ·  3 stops  ·  9.0 km"},
		{"Activity", "Seq", "Planned arrival", "Time window", "Order ref", "Customer", "Address", "Phone", "Notes", "Service (min)", "Skills", "weight_kg", "volume_l", "Latitude", "Longitude"},
		{"Start", "", "08:00", "", "", "", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "", "", "", "", "", "", "52.514500", "13.499300"},
		{"Stop", "1", "08:10", "", "F-3", "", "", "", "", "5", "", "40", "", "52.500000", "13.430000"},
		{"Stop", "2", "08:30", "", "F-4", "Café Nord", "", "", "", "5", "", "10", "20", "52.490000", "13.450000"},
		{"Stop", "3", "09:05", "", "F-5", "", "", "", "", "5", "", "5", "5", "52.480000", "13.470000"},
		{"End at the last stop (open route)", "", "09:10"},
	},
}

// The summary's vehicle table (from its header row) of fleetFixture's
// workbook: where each vehicle starts and ends, unused Van 3 as the request
// gave it, and the load and capacity in each dimension.
var fleetSummaryVehicles = [][]string{
	{"Vehicle", "Driver", "Departure", "Return", "Start", "End", "Stops", "Distance (km)", "Load", "Capacity", "Utilization", "Load weight_kg", "Capacity weight_kg", "Load volume_l", "Capacity volume_l"},
	{"Van 1", "Anna Müller", "07:30", "14:05", "Hub Nord, Hamburger Straße 1, 13353 Berlin", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "2", "21.5", "2", "10", "20.0%", "200.5", "500", "600", "1000"},
	{"Van 2", "Jürgen Nowak", "08:00", "09:10", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "Last stop (open route)", "3", "9.0", "3", "10", "30.0%", "55", "500", "25", "1000"},
	{"Van 3", "", "", "", "Depot Lichtenberg, Frankfurter Allee 200, 10365 Berlin", "52.4, 13.5", "0", "0.0", "0", "10", "0.0%", "0", "500", "0", "1000"},
}

// driverOnlyCols are the columns left out without driver instructions.
var driverOnlyCols = []string{"Driver", "Customer", "Phone", "Notes"}

func TestFleetExportRows(t *testing.T) {
	opt, res := fleetFixture()
	plainSheets := map[string][][]string{}
	for name, rows := range fleetSheetsDriver {
		plainSheets[name] = dropCols(rows[1:], 0, driverOnlyCols...) // no title line
	}
	for _, c := range []struct {
		name   string
		o      Options
		csv    [][]string
		sheets map[string][][]string
	}{
		{"csv with driver instructions", Options{Format: CSV, IncludeDriverInstructions: true}, fleetCSVDriver, nil},
		{"csv", Options{Format: CSV}, dropCols(fleetCSVDriver, 0, driverOnlyCols...), nil},
		{"xlsx with driver instructions", Options{Format: XLSX, IncludeDriverInstructions: true}, nil, fleetSheetsDriver},
		{"xlsx", Options{Format: XLSX}, nil, plainSheets},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := render(t, opt, res, c.o)
			if c.csv != nil {
				checkRows(t, "csv", readCSV(t, data), c.csv)
				return
			}
			book := sheetRows(t, data)
			if got, want := sheetNamesOf(openBook(t, data)), []string{"Summary", "Van 1", "Van 2", "Unassigned"}; !slices.Equal(got, want) {
				t.Errorf("sheets %q, want %q", got, want)
			}
			for name, want := range c.sheets {
				checkRows(t, name, book[name], want)
			}
			summary := book["Summary"]
			if len(summary) < 10 {
				t.Fatalf("the summary has %d rows", len(summary))
			}
			checkRows(t, "Summary vehicle table", summary[9:], fleetSummaryVehicles)
		})
	}
}

func checkRows(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("%s row %d missing, want %q", what, i+1, want[i])
		case i >= len(want):
			t.Errorf("%s row %d %q, want no such row", what, i+1, got[i])
		case !slices.Equal(got[i], want[i]):
			t.Errorf("%s row %d:\n got %q\nwant %q", what, i+1, got[i], want[i])
		}
	}
}

// A route's start, breaks and end stand apart from its stops: shaded, the
// stops not.
func TestFleetRowsShaded(t *testing.T) {
	opt, res := fleetFixture()
	f, err := excelize.OpenReader(bytes.NewReader(render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	fill := func(ref string) string {
		id, err := f.GetCellStyle("Van 1", ref)
		if err != nil {
			t.Fatal(err)
		}
		s, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(s.Fill.Color, ",")
	}
	// Rows 3 start, 4 break, 5 stop, 9 end; columns A (activity), C (time), N (latitude).
	for _, ref := range []string{"A3", "C3", "N3", "A4", "C4", "N4", "A9", "N9"} {
		if got := fill(ref); got != "EDEDED" {
			t.Errorf("Van 1 %s: fill %q, want the shade EDEDED", ref, got)
		}
	}
	for _, ref := range []string{"A5", "C5", "N5"} {
		if got := fill(ref); got != "" {
			t.Errorf("Van 1 %s (a stop): fill %q, want none", ref, got)
		}
	}
}

// fleetFixtureUsing is fleetFixture with only the named constraints left
// in the request and the result: "skills", "loads", "breaks" and "places"
// (start, end and open_end).
func fleetFixtureUsing(used ...string) (*v1alpha1.Optimization, *v1alpha1.Result) {
	opt, res := fleetFixture()
	uses := func(c string) bool { return slices.Contains(used, c) }
	for i := range opt.Spec.Orders {
		o := &opt.Spec.Orders[i]
		if !uses("skills") {
			o.Skills = nil
		}
		if !uses("loads") {
			o.Loads = nil
		}
	}
	for i := range opt.Spec.Vehicles {
		vc := &opt.Spec.Vehicles[i].VehicleConstraints
		if !uses("skills") {
			vc.Skills = nil
		}
		if !uses("loads") {
			vc.Capacities = nil
		}
		if !uses("breaks") {
			vc.Breaks = nil
		}
		if !uses("places") {
			vc.Start, vc.End, vc.OpenEnd = nil, nil, nil
		}
	}
	for i := range res.Routes {
		r := &res.Routes[i]
		if !uses("loads") {
			r.Loads, r.Capacities = nil, nil
		}
		if !uses("breaks") {
			r.Breaks = nil
		}
		if !uses("places") {
			r.Start, r.End = nil, v1alpha1.RouteEnd{}
		}
	}
	for i := range res.KPIs.PerVehicle {
		if !uses("loads") {
			res.KPIs.PerVehicle[i].Loads, res.KPIs.PerVehicle[i].Capacities = nil, nil
		}
	}
	return opt, res
}

// Each column and row of the fleet constraints comes with the constraint
// that fills it, and only then.
func TestFleetColumnsOnlyWhenUsed(t *testing.T) {
	base := []string{"Vehicle", "Seq", "Planned arrival", "Time window", "Order ref", "Address", "Service (min)", "Latitude", "Longitude"}
	insert := func(after string, cols ...string) func([]string) []string {
		return func(h []string) []string { return slices.Insert(slices.Clone(h), slices.Index(h, after)+1, cols...) }
	}
	summaryBase := []string{"Vehicle", "Driver", "Departure", "Return", "Stops", "Distance (km)", "Load", "Capacity", "Utilization"}
	for _, c := range []struct {
		used       []string
		header     []string
		activities []string // the Activity column, top to bottom
		summary    []string
	}{
		{nil, base, nil, summaryBase},
		{[]string{"skills"}, insert("Service (min)", "Skills")(base), nil, summaryBase},
		{[]string{"loads"}, insert("Service (min)", "weight_kg", "volume_l")(base), nil,
			append(slices.Clone(summaryBase), "Load weight_kg", "Capacity weight_kg", "Load volume_l", "Capacity volume_l")},
		{[]string{"breaks"}, insert("Vehicle", "Activity")(base),
			[]string{"Break 15 min, 07:30–07:45", "Stop", "Break 30 min, 11:10–11:40", "Stop", "Break 20 min, 13:20–13:40", "Stop", "Stop", "Stop"},
			summaryBase},
		{[]string{"places"}, insert("Vehicle", "Activity")(base),
			[]string{"Start", "Stop", "Stop", "End", "Start", "Stop", "Stop", "Stop", "End at the last stop (open route)"},
			insert("Return", "Start", "End")(summaryBase)},
	} {
		t.Run(strings.Join(append([]string{"using"}, c.used...), " "), func(t *testing.T) {
			opt, res := fleetFixtureUsing(c.used...)
			rows := readCSV(t, render(t, opt, res, Options{Format: CSV}))
			if !slices.Equal(rows[0], c.header) {
				t.Errorf("csv header %q, want %q", rows[0], c.header)
			}
			var activities []string
			if i := slices.Index(rows[0], "Activity"); i >= 0 {
				for _, r := range rows[1:] {
					activities = append(activities, r[i])
				}
			} else if len(rows) != 6 {
				t.Errorf("%d csv rows, want the header and one per stop", len(rows))
			}
			if !slices.Equal(activities, c.activities) {
				t.Errorf("activities %q, want %q", activities, c.activities)
			}
			book := sheetRows(t, render(t, opt, res, Options{Format: XLSX}))
			if got := book["Summary"][9]; !slices.Equal(got, c.summary) {
				t.Errorf("summary header %q, want %q", got, c.summary)
			}
			if got := book["Van 1"][0]; !slices.Equal(got, c.header[1:]) {
				t.Errorf("route sheet header %q, want %q", got, c.header[1:])
			}
		})
	}
}

// Text of the request in the new columns is neutralised as any other: a
// start's label, a dimension's name.
func TestFleetTextNeutralised(t *testing.T) {
	opt, res := fleetFixture()
	opt.Spec.Vehicles[0].Start.Label = ptr(`=HYPERLINK("http://x")`)
	for i := range opt.Spec.Orders {
		for j := range opt.Spec.Orders[i].Loads {
			if l := &opt.Spec.Orders[i].Loads[j]; l.Name == "volume_l" {
				l.Name = "+volume"
			}
		}
	}
	for _, r := range []*v1alpha1.Route{&res.Routes[0], &res.Routes[1]} {
		r.Loads["+volume"], r.Capacities["+volume"] = r.Loads["volume_l"], r.Capacities["volume_l"]
		delete(r.Loads, "volume_l")
		delete(r.Capacities, "volume_l")
	}
	for i := range res.KPIs.PerVehicle {
		v := &res.KPIs.PerVehicle[i]
		v.Loads["+volume"], v.Capacities["+volume"] = v.Loads["volume_l"], v.Capacities["volume_l"]
		delete(v.Loads, "volume_l")
		delete(v.Capacities, "volume_l")
	}
	rows := readCSV(t, render(t, opt, res, Options{Format: CSV}))
	if !slices.Contains(rows[0], "'+volume") || slices.Contains(rows[0], "+volume") {
		t.Errorf("header %q: want the dimension as '+volume", rows[0])
	}
	if got, want := rows[1][slices.Index(rows[0], "Address")], `'=HYPERLINK("http://x"), Hamburger Straße 1, 13353 Berlin`; got != want {
		t.Errorf("start row address %q, want %q", got, want)
	}
	book := sheetRows(t, render(t, opt, res, Options{Format: XLSX}))
	if got := book["Summary"][9]; !slices.Contains(got, "Load +volume") {
		t.Errorf("summary header %q: want Load +volume (nothing to neutralise)", got)
	}
}
