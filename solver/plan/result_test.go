package plan

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	polyline "github.com/twpayne/go-polyline"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

// TestResultStopExtras checks the routeopt extensions of a stop: the
// order's customer and time window, copied (not shared) from the spec, and
// present as null when the order had none.
func TestResultStopExtras(t *testing.T) {
	lat, lon := 52.5, 13.4
	opt := &v1alpha1.Optimization{Spec: v1alpha1.OptimizationSpec{
		Depot: v1alpha1.Depot{Latitude: &lat, Longitude: &lon},
		Orders: []v1alpha1.Order{
			{ID: "plain", Address: ptr.To("Main St 1")},
			{ID: "full", Customer: ptr.To("Ada's Bakery"), TimeWindowStart: ptr.To("09:00"), TimeWindowEnd: ptr.To("12:00")},
			{ID: "start-only", TimeWindowStart: ptr.To("14:30")},
		},
	}}
	in := &Located{
		Depot:  matrix.Point{Lat: lat, Lon: lon},
		Orders: []int{0, 1, 2},
		Points: []matrix.Point{{Lat: lat, Lon: lon}, {Lat: 52.51, Lon: 13.41}, {Lat: 52.52, Lon: 13.42}, {Lat: 52.53, Lon: 13.43}},
	}
	sol := &Solution{
		Solution: &vrp.Solution{Routes: []vrp.Route{{Vehicle: 0, Stops: []vrp.Stop{{Order: 1}, {Order: 0}, {Order: 2}}}}},
		Fleet:    []Vehicle{{Ref: "van-1", Vehicle: vrp.Vehicle{Capacity: 10}}},
	}
	res := Result(context.Background(), opt, in, sol, nil)

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

// TestResultKPIsAndUnassigned checks the sums over routes and that orders
// dropped before solving and by the solver are listed in the caller's order.
func TestResultKPIsAndUnassigned(t *testing.T) {
	opt := &v1alpha1.Optimization{Spec: v1alpha1.OptimizationSpec{Orders: []v1alpha1.Order{
		{ID: "o0"}, {ID: "o1"}, {ID: "o2"}, {ID: "o3"}, {ID: "o4"}, {ID: "o5"},
	}}}
	in := &Located{
		Depot:  matrix.Point{Lat: 1, Lon: 1},
		Orders: []int{0, 2, 3, 5}, // o1 and o4 were not located
		Points: []matrix.Point{{Lat: 1, Lon: 1}, {Lat: 2, Lon: 2}, {Lat: 3, Lon: 3}, {Lat: 4, Lon: 4}, {Lat: 5, Lon: 5}},
	}
	in.Unassign(4, "o4", v1alpha1.UnassignedGeocodeFailed, "not found")
	in.Unassign(1, "o1", v1alpha1.UnassignedGeocodeFailed, "not found")
	sol := &Solution{
		Solution: &vrp.Solution{
			Routes: []vrp.Route{
				{Vehicle: 1, Stops: []vrp.Stop{{Order: 0, Late: 30}, {Order: 3}}, Depart: 28800, Return: 32400, Distance: 1200, Load: 4, DriveS: 900},
				{Vehicle: 2, Stops: []vrp.Stop{{Order: 2}}, Depart: 30000, Return: 31000, Distance: 800, Load: 2, DriveS: 400},
			},
			Unassigned: []vrp.Unassigned{{Order: 1, Reason: vrp.ReasonTooLarge, Message: "too big"}}, // o2
		},
		Fleet: []Vehicle{
			{Ref: "v0", Vehicle: vrp.Vehicle{Capacity: 10}},
			{Ref: "v1", Vehicle: vrp.Vehicle{Capacity: 5}},
			{Ref: "v2", Vehicle: vrp.Vehicle{Capacity: 5}},
		},
	}
	r := Result(context.Background(), opt, in, sol, nil)

	var refs []string
	for _, u := range r.Unassigned {
		refs = append(refs, u.OrderRef+":"+u.Reason)
	}
	if want := []string{"o1:geocode_failed", "o2:too_large", "o4:geocode_failed"}; !reflect.DeepEqual(refs, want) {
		t.Errorf("unassigned = %v, want %v", refs, want)
	}
	k := r.KPIs
	got := []int64{int64(k.OrdersTotal), int64(k.OrdersAssigned), int64(k.OrdersUnassigned), int64(k.VehiclesAvailable), int64(k.VehiclesUsed), k.DistanceM, k.DriveSeconds, k.RouteSeconds, int64(k.LateStops)}
	want := []int64{6, 3, 3, 3, 2, 2000, 1300, 3600 + 1000, 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("KPIs total, assigned, unassigned, available, used, distance, drive, route, late = %v, want %v", got, want)
	}
	if k.AvgUtilization != 0.6 {
		t.Errorf("avg utilization = %v, want 0.6 (load 6 of capacity 10)", k.AvgUtilization)
	}
	wantPer := []v1alpha1.VehicleKPI{
		{VehicleRef: "v0", Capacity: 10}, // unused, still listed in request order
		{VehicleRef: "v1", Stops: 2, DistanceM: 1200, Load: 4, Capacity: 5},
		{VehicleRef: "v2", Stops: 1, DistanceM: 800, Load: 2, Capacity: 5},
	}
	if !reflect.DeepEqual(k.PerVehicle, wantPer) {
		t.Errorf("per vehicle = %+v, want %+v", k.PerVehicle, wantPer)
	}
	if r.Routes[0].Stops[1].OrderRef != "o5" || r.Routes[0].Stops[1].Latitude != 5 {
		t.Errorf("second stop of v1 = %+v, want o5 at the fifth point", r.Routes[0].Stops[1])
	}
	s := Summary(r)
	if s.OrdersAssigned != 3 || s.OrdersUnassigned != 3 || s.VehiclesUsed != 2 || s.DistanceMeters != 2000 || s.Distance != "2.00km" {
		t.Errorf("summary = %+v", s)
	}
}

// TestResultGeometry checks that a route's polyline follows the road
// geometry when there is one, and straight legs with a warning when it fails.
func TestResultGeometry(t *testing.T) {
	opt := &v1alpha1.Optimization{Spec: v1alpha1.OptimizationSpec{Orders: []v1alpha1.Order{{ID: "o"}}}}
	in := &Located{Depot: matrix.Point{Lat: 1, Lon: 1}, Orders: []int{0}, Points: []matrix.Point{{Lat: 1, Lon: 1}, {Lat: 2, Lon: 2}}}
	sol := &Solution{
		Solution: &vrp.Solution{Routes: []vrp.Route{{Vehicle: 0, Stops: []vrp.Stop{{Order: 0}}}}},
		Fleet:    []Vehicle{{Ref: "v", Vehicle: vrp.Vehicle{Capacity: 1}}},
	}
	straight := [][]float64{{1, 1}, {2, 2}, {1, 1}}
	road := []matrix.Point{{Lat: 1, Lon: 1}, {Lat: 1.5, Lon: 1}, {Lat: 2, Lon: 2}, {Lat: 1, Lon: 1}}
	tests := map[string]struct {
		geometry     Geometry
		want         [][]float64
		wantWarnings int
	}{
		"none":   {nil, straight, 0},
		"road":   {func(context.Context, []matrix.Point) ([]matrix.Point, error) { return road, nil }, [][]float64{{1, 1}, {1.5, 1}, {2, 2}, {1, 1}}, 0},
		"failed": {func(context.Context, []matrix.Point) ([]matrix.Point, error) { return nil, errors.New("down") }, straight, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Result(context.Background(), opt, in, sol, tc.geometry)
			got, _, err := polyline.DecodeCoords([]byte(r.Routes[0].Polyline))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("polyline = %v, want %v", got, tc.want)
			}
			if len(r.Warnings) != tc.wantWarnings {
				t.Errorf("warnings = %+v, want %d", r.Warnings, tc.wantWarnings)
			}
		})
	}
}

func TestFormatDistance(t *testing.T) {
	for in, want := range map[int64]string{
		0:         "0.00km",
		290:       "0.29km",
		999:       "1.00km",
		1000:      "1.00km",
		9874:      "9.87km",
		25405:     "25.4km",
		999_949:   "999.9km",
		1_234_567: "1235km",
		123456789: "123457km",
	} {
		if got := FormatDistance(in); got != want {
			t.Errorf("FormatDistance(%d) = %q, want %q", in, got, want)
		}
	}
}
