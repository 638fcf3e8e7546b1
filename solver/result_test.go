package solver

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

// TestBuildResultStopExtras checks the routeopt extensions of a stop: the
// order's customer and time window, copied (not shared) from the spec, and
// present as null when the order had none.
func TestBuildResultStopExtras(t *testing.T) {
	lat, lon := 52.5, 13.4
	opt := &v1alpha1.Optimization{Spec: v1alpha1.OptimizationSpec{
		Depot: v1alpha1.Depot{Latitude: &lat, Longitude: &lon},
		Orders: []v1alpha1.Order{
			{ID: "plain", Address: ptr.To("Main St 1")},
			{ID: "full", Customer: ptr.To("Ada's Bakery"), TimeWindowStart: ptr.To("09:00"), TimeWindowEnd: ptr.To("12:00")},
			{ID: "start-only", TimeWindowStart: ptr.To("14:30")},
		},
	}}
	in := &located{
		depot:  matrix.Point{Lat: lat, Lon: lon},
		orders: []int{0, 1, 2},
		points: []matrix.Point{{Lat: lat, Lon: lon}, {Lat: 52.51, Lon: 13.41}, {Lat: 52.52, Lon: 13.42}, {Lat: 52.53, Lon: 13.43}},
	}
	sol := &solution{
		Solution: &vrp.Solution{Routes: []vrp.Route{{Vehicle: 0, Stops: []vrp.Stop{{Order: 1}, {Order: 0}, {Order: 2}}}}},
		fleet:    []fleetVehicle{{ref: "van-1", Vehicle: vrp.Vehicle{Capacity: 10}}},
	}
	res := buildResult(context.Background(), opt, in, &matrix.Matrix{}, sol)

	raw, err := json.Marshal(res.Routes[0].Stops)
	if err != nil {
		t.Fatal(err)
	}
	var stops []map[string]any
	if err := json.Unmarshal(raw, &stops); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ref, address             string
		customer, twStart, twEnd any
	}{
		{"full", "", "Ada's Bakery", "09:00", "12:00"},
		{"plain", "Main St 1", nil, nil, nil},
		{"start-only", "", nil, "14:30", nil},
	}
	if len(stops) != len(want) {
		t.Fatalf("%d stops, want %d", len(stops), len(want))
	}
	for i, w := range want {
		st := stops[i]
		for key, v := range map[string]any{"order_ref": w.ref, "address": w.address, "customer": w.customer, "time_window_start": w.twStart, "time_window_end": w.twEnd} {
			got, present := st[key]
			if !present {
				t.Errorf("stop %d lacks %q (it must be present, null when unset): %s", i+1, key, raw)
				continue
			}
			if got != v {
				t.Errorf("stop %d %s = %v, want %v", i+1, key, got, v)
			}
		}
	}
	*opt.Spec.Orders[1].Customer = "changed"
	if got := *res.Routes[0].Stops[0].Customer; got != "Ada's Bakery" {
		t.Errorf("the result shares the spec's customer string: %q", got)
	}
}
