package bench

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"routeopt.io/routeopt/solver/vrp"
)

// tinyOverlay adds every feature the format carries to the TINY instance
// (three customers): several windows, skills, a load dimension,
// priorities, an extra location, and two vehicle groups with breaks,
// limits, other ends and an open route.
const tinyOverlay = `{
 "format": "routeopt-features/1",
 "base": "test/tiny",
 "feature": "all",
 "seed": 7,
 "dimensions": ["pallets"],
 "extra_locations": [[1, 1]],
 "fleet": [
  {"count": 2, "skills": ["cold"], "capacities": [4], "breaks": [[200, 600, 50]], "max_duration": 900, "max_distance": 500, "max_stops": 2, "start": 1},
  {"count": 1, "capacities": [3], "open_end": true}
 ],
 "orders": {
  "windows": [[[0, 20], [30, 60]], [], [[0, 900]]],
  "skills": [["cold"], [], []],
  "loads": [[1], [2], [0]],
  "priority": [10, 0, 100]
 }
}
`

func TestOverlayProblem(t *testing.T) {
	o, err := ParseOverlay(strings.NewReader(tinyOverlay))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Parse(strings.NewReader(tiny))
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.Problem(in)
	if err != nil {
		t.Fatal(err)
	}
	if o.Vehicles() != 3 || len(p.Vehicles) != 3 || p.ExtraLocations != 1 || len(p.Distance) != 5 {
		t.Fatalf("%d vehicles, %d extra locations, %d locations", len(p.Vehicles), p.ExtraLocations, len(p.Distance))
	}
	// the extra location (1, 1) is location 4: floor(10 x sqrt(2)) from the depot
	if p.Distance[0][4] != 14 || p.Duration[4][1] != dimacsDist(Node{X: 1, Y: 1}, in.Nodes[1]) {
		t.Fatalf("extra location distances %d, %d", p.Distance[0][4], p.Duration[4][1])
	}
	wantOrders := []vrp.Order{
		{Demand: 5, ServiceS: 20, WindowStart: 0, WindowEnd: 60, Windows: []vrp.Window{{Start: 0, End: 20}, {Start: 30, End: 60}}, Skills: []string{"cold"}, Loads: []float64{1}, Priority: 10},
		{Demand: 5, ServiceS: 20, WindowStart: 100, WindowEnd: 600, Skills: []string{}, Loads: []float64{2}},
		{Demand: 6, ServiceS: 10, WindowStart: 0, WindowEnd: 900, Skills: []string{}, Loads: []float64{0}, Priority: 100},
	}
	if !reflect.DeepEqual(p.Orders, wantOrders) {
		t.Fatalf("orders\n%+v\nwant\n%+v", p.Orders, wantOrders)
	}
	v0 := vrp.Vehicle{Capacity: 10, ShiftEnd: 1000, Skills: []string{"cold"}, Capacities: []float64{4},
		Breaks: []vrp.Break{{Start: 200, End: 600, Duration: 50}}, MaxDuration: 900, MaxDistance: 500, MaxStops: 2, Start: 4}
	if !reflect.DeepEqual(p.Vehicles[1], v0) || !p.Vehicles[2].OpenEnd || p.Vehicles[2].Start != 0 {
		t.Fatalf("vehicles %+v", p.Vehicles)
	}
	r, err := o.Relaxed().Problem(in)
	if err != nil {
		t.Fatal(err)
	}
	plain := in.Problem()
	if len(r.Vehicles) != 3 || r.ExtraLocations != 0 || !reflect.DeepEqual(r.Orders, plain.Orders) || !reflect.DeepEqual(r.Vehicles[0], plain.Vehicles[0]) {
		t.Fatalf("relaxed %+v", r)
	}
}

// TestOverlayEncode: Encode writes what ParseOverlay reads back.
func TestOverlayEncode(t *testing.T) {
	o, err := ParseOverlay(strings.NewReader(tinyOverlay))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := o.Encode(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ParseOverlay(&b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(o, back) {
		t.Fatalf("read back %+v, want %+v", back, o)
	}
	bare := &Overlay{Format: OverlayFormat, Base: "a/b", Feature: "none", Fleet: []VehicleGroup{{Count: 1}}}
	b.Reset()
	if err := bare.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if back, err := ParseOverlay(&b); err != nil || !reflect.DeepEqual(back, bare) {
		t.Fatalf("bare overlay read back %+v, %v", back, err)
	}
}

func TestOverlayErrors(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"format", `"routeopt-features/1"`, `"routeopt-features/2"`, `format "routeopt-features/2"`},
		{"base", `"test/tiny"`, `"tiny"`, `base "tiny"`},
		{"feature", `"feature": "all"`, `"feature": ""`, `feature ""`},
		{"unknown field", `"seed": 7`, `"seed": 7, "colour": 1`, `unknown field "colour"`},
		{"two objects", "}\n}\n", "}\n}\n{}", "data after the object"},
		{"not JSON", `{`, `[`, "overlay:"},
		{"count", `"count": 2`, `"count": 0`, "count 0"},
		{"capacities", `"capacities": [3]`, `"capacities": []`, "0 capacities for 1 dimensions"},
		{"capacity", `"capacities": [3]`, `"capacities": [0]`, "capacity 0"},
		{"break", `[200, 600, 50]`, `[200, 240, 50]`, "break 0 [200 240 50]"},
		{"break duration", `[200, 600, 50]`, `[200, 600, 0]`, "break 0 [200 600 0]"},
		{"limits", `"max_stops": 2`, `"max_stops": -1`, "route limits"},
		{"start", `"start": 1`, `"start": 2`, "start 2 or end 0"},
		{"open end", `"open_end": true`, `"open_end": true, "end": 1`, "an open route has no end"},
		{"windows overlap", `[[0, 20], [30, 60]]`, `[[0, 30], [30, 60]]`, "order 1: window 1"},
		{"window reversed", `[[0, 900]]`, `[[900, 0]]`, "order 3: window 0"},
		{"skill name", `[["cold"], [], []]`, `[["cold"], [" "], []]`, "order 2: a skill without a name"},
		{"loads", `[[1], [2], [0]]`, `[[1], [2, 3], [0]]`, "order 2: 2 loads for 1 dimensions"},
		{"load", `[[1], [2], [0]]`, `[[1], [-2], [0]]`, "order 2: load -2"},
		{"priority", `[10, 0, 100]`, `[10, 0, 101]`, "order 3: priority 101"},
		{"coordinates", `[[1, 1]]`, `[[1, 1000001]]`, "extra location 1: coordinates"},
		{"dimension name", `["pallets"]`, `[""]`, "dimension 0 has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tinyOverlay, tt.from) {
				t.Fatalf("%q is not in the overlay", tt.from)
			}
			_, err := ParseOverlay(strings.NewReader(strings.Replace(tinyOverlay, tt.from, tt.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := ParseOverlay(strings.NewReader(`{"format": "routeopt-features/1", "base": "a/b", "feature": "x", "fleet": [], "orders": {}}`)); err == nil ||
		!strings.Contains(err.Error(), "fleet of 0 vehicles") {
		t.Errorf("no fleet: %v", err)
	}
}

// TestOverlayProblemErrors: what only the base instance can tell is an
// error of Problem, naming the base.
func TestOverlayProblemErrors(t *testing.T) {
	in, err := Parse(strings.NewReader(tiny))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ from, to, want string }{
		{`[10, 0, 100]`, `[10, 0]`, "2 entries of orders.priority for 3 customers"},
		{`"loads": [[1], [2], [0]]`, `"loads": [[1], [2], [0], [1]]`, "4 entries of orders.loads for 3 customers"},
		// a break outside the shift [0, 1000] passes the overlay's own check
		{`[200, 600, 50]`, `[200, 1600, 50]`, "not inside the shift"},
	} {
		o, err := ParseOverlay(strings.NewReader(strings.Replace(tinyOverlay, tt.from, tt.to, 1)))
		if err != nil {
			t.Fatalf("%s: %v", tt.to, err)
		}
		if _, err := o.Problem(in); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "test/tiny") {
			t.Errorf("%s: error %v, want one containing %q", tt.to, err, tt.want)
		}
	}
}

// FuzzParseOverlay: ParseOverlay never panics; what it accepts encodes to
// a file it reads back to the same encoding (an empty list and none are
// one), and applies to the TINY instance either with an error or as a
// valid problem.
func FuzzParseOverlay(f *testing.F) {
	f.Add(tinyOverlay)
	f.Add(`{"format": "routeopt-features/1", "base": "a/b", "feature": "x", "fleet": [{"count": 1}], "orders": {}}`)
	f.Add(strings.Replace(tinyOverlay, `[[0, 20], [30, 60]]`, `[[0, 20], [30, 60], [70, 71]]`, 1))
	in, err := Parse(strings.NewReader(tiny))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		o, err := ParseOverlay(strings.NewReader(text))
		if err != nil {
			return
		}
		var b, again bytes.Buffer
		if err := o.Encode(&b); err != nil {
			t.Fatalf("accepted overlay does not encode: %v", err)
		}
		back, err := ParseOverlay(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("its encoding is refused: %v\n%s", err, b.String())
		}
		if err := back.Encode(&again); err != nil || !bytes.Equal(again.Bytes(), b.Bytes()) {
			t.Fatalf("encoded\n%s\nread back and encoded again\n%s", b.String(), again.String())
		}
		if o.Vehicles() > 50 {
			return // keep the problems small
		}
		if p, err := o.Problem(in); err == nil {
			if err := p.Validate(); err != nil {
				t.Fatalf("Problem accepted an invalid problem: %v", err)
			}
		}
		if _, err := o.Relaxed().Problem(in); err != nil {
			t.Fatalf("the relaxed overlay does not apply: %v", err)
		}
	})
}
