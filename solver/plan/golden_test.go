package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/spec-only.golden.json from the results computed now")

// specOnlyGolden pins the result documents of requests that use only the
// public API's fields, byte for byte: the fleet constraints add fields to
// the result only when a request uses them.
var specOnlyGolden = filepath.Join("testdata", "spec-only.golden.json")

// planLocated runs spec through the pure layer as the pipeline does, over a
// Haversine matrix of in's points, with a deterministic search.
func planLocated(t *testing.T, spec *v1alpha1.OptimizationSpec, in *Located, geometry Geometry) *v1alpha1.Result {
	t.Helper()
	fleet, err := Fleet(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := matrix.Haversine{}.Matrix(context.Background(), in.Points)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Problem(spec, in, m, fleet)
	if err != nil {
		t.Fatal(err)
	}
	var sol *vrp.Solution
	if spec.EffectiveOptions().Strategy == v1alpha1.StrategyBaseline {
		sol, err = vrp.Baseline(p)
	} else {
		sol, err = vrp.Solve(context.Background(), p, vrp.Options{MaxIterations: 300, Threads: 1, Seed: 1})
	}
	if err != nil {
		t.Fatal(err)
	}
	return Result(context.Background(), &v1alpha1.Optimization{Spec: *spec}, in, &Solution{Solution: sol, Fleet: fleet, Problem: p}, geometry)
}

// berlin is the i-th of a few points spread over central Berlin.
func berlin(i int) matrix.Point {
	return matrix.Point{Lat: 52.48 + float64(i%5)*0.013, Lon: 13.33 + float64(i/5)*0.021 + float64(i%3)*0.004}
}

// locateAll places the depot at berlin(0) and order i at berlin(i+1),
// except the orders in dropped, which become geocode_failed.
func locateAll(spec *v1alpha1.OptimizationSpec, dropped ...int) *Located {
	in := &Located{Depot: berlin(0), Points: []matrix.Point{berlin(0)}}
	gone := map[int]bool{}
	for _, i := range dropped {
		gone[i] = true
	}
	for i := range spec.Orders {
		if gone[i] {
			in.Unassign(i, spec.Orders[i].ID, v1alpha1.UnassignedGeocodeFailed, "address \"nowhere\" was not found")
			continue
		}
		in.Orders = append(in.Orders, i)
		in.Points = append(in.Points, berlin(i+1))
	}
	return in
}

// midpoints is a road geometry that passes a point beside each leg.
func midpoints(_ context.Context, path []matrix.Point) ([]matrix.Point, error) {
	var out []matrix.Point
	for i, p := range path {
		if i > 0 {
			q := path[i-1]
			out = append(out, matrix.Point{Lat: (p.Lat+q.Lat)/2 + 0.001, Lon: (p.Lon + q.Lon) / 2})
		}
		out = append(out, p)
	}
	return out, nil
}

// specOnlyCases are requests with only the public API's fields.
func specOnlyCases() map[string]*v1alpha1.OptimizationSpec {
	order := func(id string, demand float64, ws, we *string) v1alpha1.Order {
		return v1alpha1.Order{ID: id, Demand: ptr.To(demand), ServiceMinutes: ptr.To(4.0), TimeWindowStart: ws, TimeWindowEnd: we,
			Address: ptr.To(id + " Straße 1"), City: ptr.To("Berlin"), Customer: ptr.To("Customer " + id)}
	}
	orders := []v1alpha1.Order{
		order("a", 2, ptr.To("09:00"), ptr.To("10:00")),
		order("b", 1, nil, ptr.To("11:00")),
		order("c", 3, ptr.To("13:00"), nil),
		order("lost", 1, nil, nil),
		order("d", 1.5, nil, nil),
		order("e", 2, ptr.To("08:30"), ptr.To("08:40")),
		order("huge", 50, nil, nil),
		order("f", 1, ptr.To("10:00"), ptr.To("12:00")),
	}
	return map[string]*v1alpha1.OptimizationSpec{
		"vehicles optimized by duration": {
			Orders: orders,
			Vehicles: []v1alpha1.Vehicle{
				{ID: "van-1", Capacity: 6, Driver: ptr.To("Anna"), ShiftStart: "08:00", ShiftEnd: "17:00", FixedCost: 100},
				{ID: "van-2", Capacity: 8, ShiftStart: "09:00", ShiftEnd: "18:00"},
				{ID: "spare", Capacity: 1, ShiftStart: "08:00", ShiftEnd: "09:00"},
			},
			Options: &v1alpha1.Options{Objective: v1alpha1.ObjectiveDuration},
		},
		"fleet baseline": {
			Orders:  orders,
			Fleet:   &v1alpha1.Fleet{Count: 2, Capacity: 5, NamePrefix: "Truck", ShiftStart: "08:00", ShiftEnd: "18:00"},
			Options: &v1alpha1.Options{Strategy: v1alpha1.StrategyBaseline},
		},
	}
}

// TestResultSpecOnlyGolden checks that requests without the fleet
// constraints give the result documents they gave before those existed.
func TestResultSpecOnlyGolden(t *testing.T) {
	got := map[string]*v1alpha1.Result{}
	for name, spec := range specOnlyCases() {
		got[name] = planLocated(t, spec, locateAll(spec, 3), midpoints)
	}
	doc, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	doc = append(doc, '\n')
	if *updateGolden {
		if err := os.WriteFile(specOnlyGolden, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(specOnlyGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("the results of requests without fleet constraints changed; diff %s against the computed results:\n%s", specOnlyGolden, doc)
	}
}

// TestProblemSpecOnly checks that a request without the fleet constraints
// leaves every field they add to the model at its zero value, so the
// solver searches the problem it searched before they existed.
func TestProblemSpecOnly(t *testing.T) {
	for name, spec := range specOnlyCases() {
		t.Run(name, func(t *testing.T) {
			in := locateAll(spec, 3)
			in.PlaceEnds(spec, func(*v1alpha1.Location) matrix.Point {
				t.Fatal("a spec without starts and ends placed one")
				return matrix.Point{}
			})
			fleet, err := Fleet(spec)
			if err != nil {
				t.Fatal(err)
			}
			m, err := matrix.Haversine{}.Matrix(context.Background(), in.Points)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Problem(spec, in, m, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if p.Dimensions != nil || p.ExtraLocations != 0 || in.Ends != nil {
				t.Errorf("dimensions %v, %d extra locations, ends %v; want none", p.Dimensions, p.ExtraLocations, in.Ends)
			}
			for i, o := range p.Orders {
				o.Demand, o.ServiceS, o.WindowStart, o.WindowEnd = 0, 0, 0, 0
				if !reflect.DeepEqual(o, vrp.Order{}) {
					t.Errorf("order %d has fleet constraints: %+v", i, o)
				}
			}
			for i, v := range p.Vehicles {
				v.Capacity, v.ShiftStart, v.ShiftEnd, v.FixedCost, v.Name = 0, 0, 0, 0, ""
				if !reflect.DeepEqual(v, vrp.Vehicle{}) {
					t.Errorf("vehicle %d has fleet constraints: %+v", i, v)
				}
			}
		})
	}
}
