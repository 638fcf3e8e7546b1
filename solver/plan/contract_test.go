package plan

import (
	"context"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

// solveSpec runs a spec through the pure layer as the pipeline does:
// Fleet, Problem over a uniform travel matrix, the spec's strategy, Result.
func solveSpec(t *testing.T, spec *v1alpha1.OptimizationSpec, travelS int) *v1alpha1.Result {
	t.Helper()
	fleet, err := Fleet(spec)
	if err != nil {
		t.Fatal(err)
	}
	in := &Located{Depot: matrix.Point{Lat: 1, Lon: 1}, Points: []matrix.Point{{Lat: 1, Lon: 1}}}
	for i := range spec.Orders {
		in.Orders = append(in.Orders, i)
		in.Points = append(in.Points, matrix.Point{Lat: 1 + float64(i+1)/100, Lon: 1})
	}
	n := len(spec.Orders) + 1
	p, err := Problem(spec, in, &matrix.Matrix{Distance: square(n, travelS*10), Duration: square(n, travelS)}, fleet)
	if err != nil {
		t.Fatal(err)
	}
	var sol *vrp.Solution
	if spec.EffectiveOptions().Strategy == v1alpha1.StrategyBaseline {
		sol, err = vrp.Baseline(p)
	} else {
		sol, err = vrp.Solve(context.Background(), p, vrp.Options{MaxIterations: 200, Threads: 1})
	}
	if err != nil {
		t.Fatal(err)
	}
	return Result(context.Background(), &v1alpha1.Optimization{Spec: *spec}, in, &Solution{Solution: sol, Fleet: fleet, Problem: p}, nil)
}

// TestResultUnassignedMessages checks that unassigned messages name vehicles
// by vehicle_ref, write times as HH:MM, and say which times did not fit.
func TestResultUnassignedMessages(t *testing.T) {
	veh := func(id, start, end string) v1alpha1.Vehicle {
		return v1alpha1.Vehicle{ID: id, Capacity: 10, ShiftStart: start, ShiftEnd: end}
	}
	order := func(id string, ws, we *string) v1alpha1.Order {
		return v1alpha1.Order{ID: id, ServiceMinutes: ptr.To(5.0), TimeWindowStart: ws, TimeWindowEnd: we}
	}
	// Internal indexes and the phrase a dispatcher tripped over.
	garbled := regexp.MustCompile(`vehicle \d|window open|[^(]open\)`)
	tests := []struct {
		name     string
		strategy v1alpha1.Strategy
		vehicles []v1alpha1.Vehicle
		orders   []v1alpha1.Order
		travelS  int
		ref      string
		reason   string
		contains []string
	}{
		{
			name:     "window unreachable names the closest vehicle, the second",
			vehicles: []v1alpha1.Vehicle{veh("V1", "10:00", "18:00"), veh("V2", "08:00", "18:00")},
			orders:   []v1alpha1.Order{order("early", ptr.To("08:00"), ptr.To("08:20"))},
			travelS:  1800,
			ref:      "early", reason: string(vrp.ReasonWindowUnreachable),
			contains: []string{"window 08:00-08:20", "V2 leaving the depot at its shift start 08:00", "arrives at 08:30, after the window end 08:20"},
		},
		{
			name:     "no shift fits even alone",
			vehicles: []v1alpha1.Vehicle{veh("V1", "08:00", "17:00"), veh("V2", "08:00", "17:20")},
			orders:   []v1alpha1.Order{order("evening", ptr.To("17:00"), nil)},
			travelS:  1800,
			ref:      "evening", reason: string(vrp.ReasonWindowUnreachable),
			contains: []string{"window from 17:00", "V2", "starting service at 17:00", "back at 17:35, after its shift end 17:20"},
		},
		{
			name:     "no time: another stop would be late",
			vehicles: []v1alpha1.Vehicle{veh("V1", "08:00", "18:00")},
			orders:   []v1alpha1.Order{order("a", ptr.To("09:00"), ptr.To("09:00")), order("b", ptr.To("09:00"), ptr.To("09:00"))},
			travelS:  600,
			ref:      "b", reason: string(vrp.ReasonNoTime),
			contains: []string{"(V1)", "window 09:00-09:00", "a later stop of V1 would start at 09:15, after its window end 09:00"},
		},
		{
			name:     "no time: back after the shift end",
			vehicles: []v1alpha1.Vehicle{veh("V1", "08:00", "09:00")},
			orders:   []v1alpha1.Order{order("a", nil, nil), order("b", nil, nil)},
			travelS:  1200,
			ref:      "b", reason: string(vrp.ReasonNoTime),
			contains: []string{"(V1)", "wherever it could be inserted", "V1 would be back at 09:10, after its shift end 09:00"},
		},
		{
			name:     "baseline no time: appending returns late",
			strategy: v1alpha1.StrategyBaseline,
			vehicles: []v1alpha1.Vehicle{veh("V1", "08:00", "09:00")},
			orders:   []v1alpha1.Order{order("a", nil, nil), order("b", nil, nil)},
			travelS:  1200,
			ref:      "b", reason: string(vrp.ReasonNoTime),
			contains: []string{"appended", "V1 would be back at 09:10, after its shift end 09:00"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &v1alpha1.OptimizationSpec{Vehicles: tc.vehicles, Orders: tc.orders}
			if tc.strategy != "" {
				spec.Options = &v1alpha1.Options{Strategy: tc.strategy}
			}
			r := solveSpec(t, spec, tc.travelS)
			var got *v1alpha1.Unassigned
			for i := range r.Unassigned {
				if r.Unassigned[i].OrderRef == tc.ref {
					got = &r.Unassigned[i]
				}
			}
			if got == nil || len(r.Unassigned) != 1 {
				t.Fatalf("unassigned = %+v, want only %s", r.Unassigned, tc.ref)
			}
			if got.Reason != tc.reason {
				t.Errorf("reason = %s, want %s (%s)", got.Reason, tc.reason, got.Message)
			}
			for _, s := range tc.contains {
				if !strings.Contains(got.Message, s) {
					t.Errorf("message %q does not say %q", got.Message, s)
				}
			}
			if m := garbled.FindString(got.Message); m != "" {
				t.Errorf("message %q has %q", got.Message, m)
			}
		})
	}
}

// TestResultStopAddress checks that a stop's address joins the order's
// address fields as docs/API.md ("Stop") writes them.
func TestResultStopAddress(t *testing.T) {
	tests := []struct {
		name  string
		order v1alpha1.Order
		want  string
	}{
		{"every field", v1alpha1.Order{Address: ptr.To("Main St 1"), PostalCode: ptr.To("10115"), City: ptr.To("Berlin"), Region: ptr.To("Berlin"), Country: ptr.To("Germany")}, "Main St 1, 10115 Berlin, Berlin, Germany"},
		{"city and postal code only", v1alpha1.Order{PostalCode: ptr.To("10115"), City: ptr.To("Berlin")}, "10115 Berlin"},
		{"city without postal code", v1alpha1.Order{Address: ptr.To("Main St 1"), City: ptr.To("Berlin"), Country: ptr.To("DE")}, "Main St 1, Berlin, DE"},
		{"postal code without city", v1alpha1.Order{PostalCode: ptr.To("10115"), Country: ptr.To("DE")}, "10115, DE"},
		{"blank fields skipped", v1alpha1.Order{Address: ptr.To(" "), City: ptr.To("Berlin"), Region: ptr.To("")}, "Berlin"},
		{"coordinates only", v1alpha1.Order{Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.order.ID = "o"
			r := solveSpec(t, &v1alpha1.OptimizationSpec{
				Vehicles: []v1alpha1.Vehicle{{ID: "V1", Capacity: 10}},
				Orders:   []v1alpha1.Order{tc.order},
			}, 60)
			if len(r.Routes) != 1 || len(r.Routes[0].Stops) != 1 {
				t.Fatalf("routes = %+v", r.Routes)
			}
			if got := r.Routes[0].Stops[0].Address; got != tc.want {
				t.Errorf("address = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestResultPerVehicleListsEveryVehicle checks that kpis.per_vehicle has
// every vehicle in request order, the unused ones with 0 stops.
func TestResultPerVehicleListsEveryVehicle(t *testing.T) {
	r := solveSpec(t, &v1alpha1.OptimizationSpec{
		Vehicles: []v1alpha1.Vehicle{{ID: "small", Capacity: 1}, {ID: "big", Capacity: 10}, {ID: "spare", Capacity: 1}},
		Orders:   []v1alpha1.Order{{ID: "a", Demand: ptr.To(5.0)}, {ID: "b", Demand: ptr.To(4.0)}},
	}, 60)
	var got []string
	for _, k := range r.KPIs.PerVehicle {
		got = append(got, k.VehicleRef+":"+strings.Repeat("x", k.Stops))
	}
	if want := []string{"small:", "big:xx", "spare:"}; !reflect.DeepEqual(got, want) {
		t.Errorf("per_vehicle refs:stops = %v, want %v", got, want)
	}
}

// TestResultCapacityTolerance checks capacity at the result: an exact sum
// of demands fits (0.1+0.2 in 0.3), two orders of 1e-9 do not fit 1e-9.
func TestResultCapacityTolerance(t *testing.T) {
	tests := []struct {
		name           string
		capacity       float64
		demands        []float64
		wantUnassigned []string
	}{
		{"exact decimal sum fits", 0.3, []float64{0.1, 0.2}, nil},
		{"tiny capacity takes one of two tiny orders", 1e-9, []float64{1e-9, 1e-9}, []string{"o1:no_capacity"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &v1alpha1.OptimizationSpec{Vehicles: []v1alpha1.Vehicle{{ID: "V1", Capacity: tc.capacity}}}
			for i, d := range tc.demands {
				spec.Orders = append(spec.Orders, v1alpha1.Order{ID: "o" + string(rune('0'+i)), Demand: ptr.To(d)})
			}
			r := solveSpec(t, spec, 60)
			var got []string
			for _, u := range r.Unassigned {
				got = append(got, u.OrderRef+":"+u.Reason)
			}
			if !reflect.DeepEqual(got, tc.wantUnassigned) {
				t.Errorf("unassigned = %v, want %v", got, tc.wantUnassigned)
			}
		})
	}
}
