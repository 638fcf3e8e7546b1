package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
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

// locateWithEnds is locateAll with the vehicles' starts and ends placed
// at their coordinates.
func locateWithEnds(spec *v1alpha1.OptimizationSpec) *Located {
	in := locateAll(spec)
	in.PlaceEnds(spec, func(loc *v1alpha1.Location) matrix.Point {
		return matrix.Point{Lat: *loc.Latitude, Lon: *loc.Longitude}
	})
	return in
}

// checkRouteTimes checks a route's schedule with its breaks: each break
// lasts its minutes inside its window, after the stop it follows has been
// left and before the next one starts service; the stops follow each other;
// an open route returns when its last stop (or a break after it) ends.
func checkRouteTimes(t *testing.T, r v1alpha1.Route, breaks []v1alpha1.Break) {
	t.Helper()
	if len(r.Breaks) != len(breaks) {
		t.Fatalf("%s: %d breaks planned, the vehicle has %d", r.VehicleRef, len(r.Breaks), len(breaks))
	}
	for i, b := range r.Breaks {
		want := breaks[i]
		ws, _ := ParseClock(want.Start)
		we, _ := ParseClock(want.End)
		if b.EndS-b.StartS != int(want.Minutes)*60 || b.StartS < ws || b.EndS > we {
			t.Errorf("%s: break %d at %d-%d, want %d minutes within %s-%s", r.VehicleRef, i, b.StartS, b.EndS, want.Minutes, want.Start, want.End)
		}
		if b.AfterSeq < 0 || b.AfterSeq > len(r.Stops) {
			t.Fatalf("%s: break after seq %d of %d stops", r.VehicleRef, b.AfterSeq, len(r.Stops))
		}
		if b.AfterSeq == 0 && b.StartS < r.DepartS || b.AfterSeq > 0 && b.StartS < r.Stops[b.AfterSeq-1].DepartS {
			t.Errorf("%s: break %d starts at %d, before the route or stop %d is left", r.VehicleRef, i, b.StartS, b.AfterSeq)
		}
		if b.AfterSeq < len(r.Stops) && b.EndS > r.Stops[b.AfterSeq].StartS || b.AfterSeq == len(r.Stops) && b.EndS > r.ReturnS {
			t.Errorf("%s: break %d ends at %d, after the next stop's service starts or the route returns", r.VehicleRef, i, b.EndS)
		}
	}
	prev := r.DepartS
	for _, st := range r.Stops {
		if st.ArrivalS < prev+st.LegTravelS || st.StartS < st.ArrivalS || st.WaitS != st.StartS-st.ArrivalS || st.LateS != 0 {
			t.Errorf("%s: stop %s at arrival %d start %d depart %d wait %d late %d after leaving at %d with a leg of %d s",
				r.VehicleRef, st.OrderRef, st.ArrivalS, st.StartS, st.DepartS, st.WaitS, st.LateS, prev, st.LegTravelS)
		}
		prev = st.DepartS
	}
	if r.End.Open {
		want := prev
		if n := len(r.Breaks); n > 0 && r.Breaks[n-1].AfterSeq == len(r.Stops) {
			want = r.Breaks[n-1].EndS
		}
		if r.ReturnS != want {
			t.Errorf("%s: open route returns at %d, want the end of its last stop or break %d", r.VehicleRef, r.ReturnS, want)
		}
	} else if r.ReturnS < prev {
		t.Errorf("%s: returns at %d, before leaving its last stop at %d", r.VehicleRef, r.ReturnS, prev)
	}
}

// TestResultFleetConstraints solves a request with every fleet constraint
// and checks what the result says of them.
func TestResultFleetConstraints(t *testing.T) {
	at := func(p matrix.Point, address string) *v1alpha1.Location {
		loc := &v1alpha1.Location{Latitude: ptr.To(p.Lat), Longitude: ptr.To(p.Lon)}
		if address != "" {
			loc.Address = ptr.To(address)
		}
		return loc
	}
	home, yard := berlin(12), berlin(14)
	spec := &v1alpha1.OptimizationSpec{
		Depot: v1alpha1.Depot{Address: ptr.To("Depotweg 1"), Latitude: ptr.To(berlin(0).Lat), Longitude: ptr.To(berlin(0).Lon)},
		Vehicles: []v1alpha1.Vehicle{
			{ID: "home", Capacity: 100, ShiftStart: "09:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Skills:     []string{"fridge"},
				Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 400}, {Name: "volume_l", Value: 2000}, {Name: "pallets", Value: 3}},
				Breaks:     []v1alpha1.Break{{Start: "11:00", End: "13:00", Minutes: 30}},
				MaxStops:   8, MaxDurationMinutes: 600, MaxDistanceKm: 100,
				Start: at(home, "Heimweg 2"), End: at(yard, ""),
			}},
			{ID: "open", Capacity: 100, ShiftStart: "09:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Skills:     []string{"crane"},
				Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 300}, {Name: "volume_l", Value: 1000}},
				Breaks:     []v1alpha1.Break{{Start: "10:00", End: "12:00", Minutes: 20}},
				Start:      at(home, ""), OpenEnd: ptr.To(true),
			}},
			{ID: "plain", Capacity: 100, ShiftStart: "09:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 300}, {Name: "volume_l", Value: 500}},
			}},
		},
	}
	for i := range 10 {
		spec.Orders = append(spec.Orders, v1alpha1.Order{
			ID: fmt.Sprintf("o%d", i), ServiceMinutes: ptr.To(10.0),
			Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: float64(50 + 10*i)}, {Name: "volume_l", Value: 100}},
		})
	}
	spec.Orders[2].Skills = []string{"fridge"}
	spec.Orders[5].Skills = []string{"crane"}
	spec.Orders[3].TimeWindows = []v1alpha1.TimeWindow{{Start: "08:00", End: "08:30"}, {Start: "14:00", End: "15:00"}}
	spec.Orders[7].TimeWindows = []v1alpha1.TimeWindow{{Start: "09:00", End: "10:00"}, {Start: "13:00", End: "14:00"}}
	spec.Orders[8].TimeWindows = []v1alpha1.TimeWindow{{Start: "10:00", End: "16:00"}}
	spec.Orders[4].Priority = ptr.To(int32(90))
	spec.Orders[9].Skills = []string{"tail_lift", "fridge"}

	r := planLocated(t, spec, locateWithEnds(spec), nil)

	routes := map[string]v1alpha1.Route{}
	for _, route := range r.Routes {
		routes[route.VehicleRef] = route
	}
	if len(routes) != 3 {
		t.Fatalf("routes of %v, want all three vehicles", slices.Collect(maps.Keys(routes)))
	}
	depot := v1alpha1.Place{Latitude: berlin(0).Lat, Longitude: berlin(0).Lon, Address: "Depotweg 1"}
	wantEnds := map[string]struct {
		start v1alpha1.Place
		end   v1alpha1.RouteEnd
	}{
		"home":  {v1alpha1.Place{Latitude: home.Lat, Longitude: home.Lon, Address: "Heimweg 2"}, v1alpha1.RouteEnd{At: &v1alpha1.Place{Latitude: yard.Lat, Longitude: yard.Lon}}},
		"open":  {v1alpha1.Place{Latitude: home.Lat, Longitude: home.Lon}, v1alpha1.RouteEnd{Open: true}},
		"plain": {depot, v1alpha1.RouteEnd{At: &depot}},
	}
	loads := map[string]float64{}
	for i, o := range spec.Orders {
		loads[o.ID] = float64(50 + 10*i)
	}
	for ref, want := range wantEnds {
		route := routes[ref]
		if route.Start == nil || *route.Start != want.start || !reflect.DeepEqual(route.End, want.end) {
			t.Errorf("%s: start %+v end %+v, want %+v and %+v", ref, route.Start, route.End, want.start, want.end)
		}
		var vehicle *v1alpha1.Vehicle
		for i := range spec.Vehicles {
			if spec.Vehicles[i].ID == ref {
				vehicle = &spec.Vehicles[i]
			}
		}
		checkRouteTimes(t, route, vehicle.Breaks)
		weight := 0.0
		for _, st := range route.Stops {
			weight += loads[st.OrderRef]
		}
		capacities := map[string]float64{}
		for _, c := range vehicle.Capacities {
			if c.Name != "pallets" {
				capacities[c.Name] = c.Value
			}
		}
		wantLoads := map[string]float64{"weight_kg": weight, "volume_l": 100 * float64(len(route.Stops))}
		if !reflect.DeepEqual(route.Loads, wantLoads) || !reflect.DeepEqual(route.Capacities, capacities) {
			t.Errorf("%s: loads %v of capacities %v, want %v of %v", ref, route.Loads, route.Capacities, wantLoads, capacities)
		}
		for _, k := range r.KPIs.PerVehicle {
			if k.VehicleRef == ref && (!reflect.DeepEqual(k.Loads, wantLoads) || !reflect.DeepEqual(k.Capacities, capacities)) {
				t.Errorf("%s: per_vehicle loads %v of capacities %v, want %v of %v", ref, k.Loads, k.Capacities, wantLoads, capacities)
			}
		}
	}
	if routes["plain"].Breaks != nil {
		t.Errorf("plain has no breaks, its route lists %v", routes["plain"].Breaks)
	}

	served := map[string]string{}
	var routeSeconds int64
	for _, route := range r.Routes {
		routeSeconds += int64(route.ReturnS - route.DepartS)
		for _, st := range route.Stops {
			served[st.OrderRef] = route.VehicleRef
			if st.TimeWindowStart == nil {
				continue
			}
			ws, _ := ParseClock(*st.TimeWindowStart)
			we, _ := ParseClock(*st.TimeWindowEnd)
			if st.StartS < ws || st.StartS > we {
				t.Errorf("%s starts at %d, outside the window %s-%s it shows", st.OrderRef, st.StartS, *st.TimeWindowStart, *st.TimeWindowEnd)
			}
		}
	}
	if served["o2"] != "home" || served["o5"] != "open" {
		t.Errorf("o2 (fridge) on %q, o5 (crane) on %q; want home and open", served["o2"], served["o5"])
	}
	for _, route := range r.Routes {
		for _, st := range route.Stops {
			if st.OrderRef == "o3" && (st.TimeWindowStart == nil || *st.TimeWindowStart != "14:00" || *st.TimeWindowEnd != "15:00") {
				t.Errorf("o3 can only be served 14:00-15:00; its stop shows %v-%v", st.TimeWindowStart, st.TimeWindowEnd)
			}
			if st.OrderRef == "o8" && (*st.TimeWindowStart != "10:00" || *st.TimeWindowEnd != "16:00") {
				t.Errorf("o8's one window is 10:00-16:00; its stop shows %v-%v", *st.TimeWindowStart, *st.TimeWindowEnd)
			}
		}
	}
	if len(r.Unassigned) != 1 || r.Unassigned[0].OrderRef != "o9" || r.Unassigned[0].Reason != string(vrp.ReasonSkillsMissing) || !strings.Contains(r.Unassigned[0].Message, "tail_lift") {
		t.Errorf("unassigned %+v, want only o9, skills_missing, naming tail_lift", r.Unassigned)
	}
	if r.KPIs.RouteSeconds != routeSeconds {
		t.Errorf("route_seconds %d, want the routes' %d", r.KPIs.RouteSeconds, routeSeconds)
	}
	if r.KPIs.OrdersAssigned != 9 {
		t.Errorf("%d orders assigned, want 9", r.KPIs.OrdersAssigned)
	}

	// The polyline runs from the start through the stops to the end, or to
	// the last stop of an open route.
	for _, route := range r.Routes {
		coords, _, err := polyline.DecodeCoords([]byte(route.Polyline))
		if err != nil {
			t.Fatal(err)
		}
		want := [][]float64{{route.Start.Latitude, route.Start.Longitude}}
		for _, st := range route.Stops {
			want = append(want, []float64{st.Latitude, st.Longitude})
		}
		if route.End.At != nil {
			want = append(want, []float64{route.End.At.Latitude, route.End.At.Longitude})
		}
		if len(coords) != len(want) {
			t.Fatalf("%s: polyline has %d points, want %d", route.VehicleRef, len(coords), len(want))
		}
		for i := range want {
			if math.Abs(coords[i][0]-want[i][0]) > 1e-5 || math.Abs(coords[i][1]-want[i][1]) > 1e-5 {
				t.Errorf("%s: polyline point %d = %v, want %v", route.VehicleRef, i, coords[i], want[i])
			}
		}
	}

	// In the document: an open route's end is null, a vehicle without
	// breaks has no breaks field.
	raw, err := json.Marshal(r.Routes)
	if err != nil {
		t.Fatal(err)
	}
	var doc []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, route := range doc {
		var ref string
		_ = json.Unmarshal(route["vehicle_ref"], &ref)
		end, hasEnd := route["end"]
		_, hasBreaks := route["breaks"]
		if !hasEnd || (ref == "open") != (string(end) == "null") || hasBreaks != (ref != "plain") {
			t.Errorf("%s: end %s (present %v), breaks present %v", ref, end, hasEnd, hasBreaks)
		}
	}
}

// TestResultOpenRouteTrailingBreak checks an open route whose break comes
// after its last stop: it returns when the break ends.
func TestResultOpenRouteTrailingBreak(t *testing.T) {
	spec := &v1alpha1.OptimizationSpec{
		Vehicles: []v1alpha1.Vehicle{{ID: "v", Capacity: 10, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
			Breaks: []v1alpha1.Break{{Start: "12:00", End: "13:00", Minutes: 30}}, OpenEnd: ptr.To(true),
		}}},
		Orders: []v1alpha1.Order{{ID: "early", TimeWindowStart: ptr.To("08:00"), TimeWindowEnd: ptr.To("09:00")}},
	}
	for _, strategy := range []v1alpha1.Strategy{v1alpha1.StrategyOptimized, v1alpha1.StrategyBaseline} {
		t.Run(string(strategy), func(t *testing.T) {
			spec.Options = &v1alpha1.Options{Strategy: strategy}
			r := planLocated(t, spec, locateWithEnds(spec), nil)
			if len(r.Routes) != 1 || len(r.Routes[0].Stops) != 1 {
				t.Fatalf("routes %+v", r.Routes)
			}
			route := r.Routes[0]
			checkRouteTimes(t, route, spec.Vehicles[0].Breaks)
			if !route.End.Open || route.Breaks[0].AfterSeq != 1 || route.ReturnS != route.Breaks[0].EndS {
				t.Errorf("end %+v, breaks %+v, return %d; want an open route back when its break after the stop ends", route.End, route.Breaks, route.ReturnS)
			}
			if route.Start == nil || route.Start.Latitude != berlin(0).Lat || route.Start.Address != "" {
				t.Errorf("start %+v, want the depot (given by coordinates)", route.Start)
			}
			if legs := route.Stops[0].LegDistanceM; route.DistanceM != legs {
				t.Errorf("distance %d, want only the leg to the stop %d", route.DistanceM, legs)
			}
		})
	}
}

// TestResultFleetReasons checks the unassigned reasons of the fleet
// constraints, with the solver's words.
func TestResultFleetReasons(t *testing.T) {
	vehicle := func(c v1alpha1.VehicleConstraints) []v1alpha1.Vehicle {
		return []v1alpha1.Vehicle{{ID: "van", Capacity: 10, VehicleConstraints: c}}
	}
	tests := map[string]struct {
		vehicles []v1alpha1.Vehicle
		orders   []v1alpha1.Order
		reason   vrp.Reason
		says     string
	}{
		"no vehicle has the skill": {
			vehicles: vehicle(v1alpha1.VehicleConstraints{Skills: []string{"fridge"}}),
			orders:   []v1alpha1.Order{{ID: "a", Skills: []string{"fridge", "crane"}}},
			reason:   vrp.ReasonSkillsMissing, says: "van, lacks crane",
		},
		"the only vehicle is at its stops": {
			vehicles: vehicle(v1alpha1.VehicleConstraints{MaxStops: 1}),
			orders:   []v1alpha1.Order{{ID: "a", Priority: ptr.To(int32(10))}, {ID: "b"}},
			reason:   vrp.ReasonRouteLimit, says: "van at",
		},
		"a load above every capacity": {
			vehicles: vehicle(v1alpha1.VehicleConstraints{Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 100}}}),
			orders:   []v1alpha1.Order{{ID: "a", Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 150}}}},
			reason:   vrp.ReasonTooLarge, says: "weight_kg",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &v1alpha1.OptimizationSpec{Vehicles: tc.vehicles, Orders: tc.orders}
			r := planLocated(t, spec, locateWithEnds(spec), nil)
			last := r.Unassigned[len(r.Unassigned)-1]
			if len(r.Unassigned) != 1 || last.Reason != string(tc.reason) || !strings.Contains(last.Message, tc.says) {
				t.Errorf("unassigned %+v, want one %s saying %q", r.Unassigned, tc.reason, tc.says)
			}
		})
	}
}
