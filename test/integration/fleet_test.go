package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	polyline "github.com/twpayne/go-polyline"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/webserver/docstore"
)

// createSpec stores an Optimization of spec in s's tenant namespace, as
// kubectl or a Go client would.
func createSpec(t *testing.T, s *system, spec v1alpha1.OptimizationSpec) *v1alpha1.Optimization {
	t.Helper()
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: spec}
	if err := k8sClient.Create(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	return opt
}

// storedResultDoc is the result document of completed opt with its
// polylines, as GET .../result?include_path=true serves it: the decoded
// Result and its JSON.
func storedResultDoc(t *testing.T, opt *v1alpha1.Optimization) (*v1alpha1.Result, map[string]any) {
	t.Helper()
	res, err := docstore.ReadResult(context.Background(), k8sClient, opt, true)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return res, doc
}

// fleetSpec is a day with every fleet constraint: a vehicle from a home
// given by address to a yard, one from the same home ending at its last
// stop, one at the depot; breaks, skills, two load dimensions (and a
// capacity no order uses), route limits, orders with several windows and
// priorities, and one order no vehicle has the skills for.
func fleetSpec(home *v1alpha1.Location) v1alpha1.OptimizationSpec {
	capacities := func(weight, volume float64) []v1alpha1.DimensionCapacity {
		return []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: weight}, {Name: "volume_l", Value: volume}}
	}
	spec := v1alpha1.OptimizationSpec{
		Name:  ptr.To("fleet constraints"),
		Depot: v1alpha1.Depot{Label: ptr.To("Depot"), Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
		Vehicles: []v1alpha1.Vehicle{
			{ID: "home", Capacity: 100, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Skills:             []string{"fridge"},
				Capacities:         append(capacities(400, 2000), v1alpha1.DimensionCapacity{Name: "pallets", Value: 2}),
				Breaks:             []v1alpha1.Break{{Start: "11:00", End: "13:00", Minutes: 30}},
				MaxDurationMinutes: 600, MaxDistanceKm: 150, MaxStops: 10,
				Start: home,
				End:   &v1alpha1.Location{Label: ptr.To("Yard"), Latitude: ptr.To(52.49), Longitude: ptr.To(13.45)},
			}},
			{ID: "open", Capacity: 100, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Skills:     []string{"crane"},
				Capacities: capacities(300, 1000),
				Breaks:     []v1alpha1.Break{{Start: "10:00", End: "12:00", Minutes: 20}},
				Start:      home, OpenEnd: ptr.To(true),
			}},
			{ID: "plain", Capacity: 100, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: capacities(300, 500),
			}},
		},
		Options: &v1alpha1.Options{SolverSeconds: ptr.To[int32](1)},
	}
	coords := [][2]float64{
		{52.5301, 13.3849}, {52.5163, 13.3777}, {52.5076, 13.4370}, {52.4990, 13.4180}, {52.5250, 13.4100},
		{52.5400, 13.4120}, {52.5120, 13.3900}, {52.5050, 13.3600}, {52.5350, 13.3950}, {52.5200, 13.4400},
	}
	for i, c := range coords {
		spec.Orders = append(spec.Orders, v1alpha1.Order{
			ID: fmt.Sprintf("F-%d", i+1), Latitude: ptr.To(c[0]), Longitude: ptr.To(c[1]), ServiceMinutes: ptr.To(10.0),
			Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: float64(50 + 10*i)}, {Name: "volume_l", Value: 100}},
		})
	}
	spec.Orders[2].Skills = []string{"fridge"}
	spec.Orders[5].Skills = []string{"crane"}
	spec.Orders[3].TimeWindows = []v1alpha1.TimeWindow{{Start: "07:00", End: "07:30"}, {Start: "14:00", End: "15:00"}}
	spec.Orders[7].TimeWindows = []v1alpha1.TimeWindow{{Start: "09:00", End: "10:00"}, {Start: "13:00", End: "14:00"}}
	spec.Orders[4].Priority = ptr.To[int32](90)
	spec.Orders[9].Skills = []string{"tail_lift"}
	return spec
}

// TestFleetConstraintsSolve: an optimization using every fleet constraint
// is solved and its stored result says where each route starts and ends,
// when its breaks are, what it carries in each dimension and which window
// each stop was served in; a start whose address the geocoder cannot place
// fails the optimization naming the vehicle; a request without the
// constraints gets none of their fields.
func TestFleetConstraintsSolve(t *testing.T) {
	nominatim := newFakeNominatim(t, 0)
	s := startWithProviders(t, nominatim, newFakeOSRM(t))

	t.Run("every constraint", func(t *testing.T) {
		home := &v1alpha1.Location{Label: ptr.To("Home"), Address: ptr.To("Heimweg 5, Berlin")}
		spec := fleetSpec(home)
		opt := createSpec(t, s, spec)
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s: %s %s", cur.Status.State, cur.Status.ErrorCode, cur.Status.ErrorMessage)
		}
		res, doc := storedResultDoc(t, opt)
		homeLat, homeLon := fakePosition("Heimweg 5, Berlin")

		if len(res.Unassigned) != 1 || res.Unassigned[0].OrderRef != "F-10" || res.Unassigned[0].Reason != "skills_missing" || !strings.Contains(res.Unassigned[0].Message, "tail_lift") {
			t.Errorf("unassigned %+v, want F-10 alone, skills_missing, naming tail_lift", res.Unassigned)
		}
		orders := map[string]*v1alpha1.Order{}
		for i := range spec.Orders {
			orders[spec.Orders[i].ID] = &spec.Orders[i]
		}
		vehicles := map[string]*v1alpha1.Vehicle{}
		for i := range spec.Vehicles {
			vehicles[spec.Vehicles[i].ID] = &spec.Vehicles[i]
		}
		var routeSeconds int64
		for i, r := range res.Routes {
			v := vehicles[r.VehicleRef]
			routeSeconds += int64(r.ReturnS - r.DepartS)
			raw := doc["routes"].([]any)[i].(map[string]any)

			// Start and end.
			switch r.VehicleRef {
			case "home":
				if r.Start == nil || math.Abs(r.Start.Latitude-homeLat) > 1e-6 || math.Abs(r.Start.Longitude-homeLon) > 1e-6 || r.Start.Address != "Heimweg 5, Berlin" {
					t.Errorf("home starts at %+v, want the geocoded home %v,%v", r.Start, homeLat, homeLon)
				}
				if r.End.At == nil || r.End.At.Latitude != 52.49 || r.End.At.Longitude != 13.45 || r.End.At.Address != "" {
					t.Errorf("home ends at %+v, want the yard", r.End)
				}
			case "open":
				if end, present := raw["end"]; !present || end != nil {
					t.Errorf("open route's end is %v (present %v), want null", end, present)
				}
			case "plain":
				if r.Start == nil || r.Start.Latitude != 52.52 || r.End.At == nil || r.End.At.Longitude != 13.405 {
					t.Errorf("plain starts at %+v and ends at %+v, want the depot", r.Start, r.End.At)
				}
			}

			// Breaks.
			if _, present := raw["breaks"]; present != (len(v.Breaks) > 0) {
				t.Errorf("%s: breaks present %v, the vehicle has %d", r.VehicleRef, present, len(v.Breaks))
			}
			checkBreaks(t, r, v.Breaks)

			// Loads and capacities in the orders' dimensions only.
			var weight float64
			for _, st := range r.Stops {
				weight += orders[st.OrderRef].Loads[0].Value
			}
			if r.Loads["weight_kg"] != weight || r.Loads["volume_l"] != 100*float64(len(r.Stops)) || len(r.Loads) != 2 {
				t.Errorf("%s: loads %v, want weight_kg %v and volume_l %v", r.VehicleRef, r.Loads, weight, 100*len(r.Stops))
			}
			if len(r.Capacities) != 2 || r.Capacities["weight_kg"] != v.Capacities[0].Value || r.Capacities["weight_kg"] < weight {
				t.Errorf("%s: capacities %v for loads %v", r.VehicleRef, r.Capacities, r.Loads)
			}
			var pv v1alpha1.VehicleKPI
			for _, k := range res.KPIs.PerVehicle {
				if k.VehicleRef == r.VehicleRef {
					pv = k
				}
			}
			if len(pv.Loads) != 2 || pv.Loads["weight_kg"] != weight || len(pv.Capacities) != 2 {
				t.Errorf("per_vehicle %+v, want %s's loads and capacities", pv, r.VehicleRef)
			}

			// Skills, windows served.
			for _, st := range r.Stops {
				o := orders[st.OrderRef]
				for _, skill := range o.Skills {
					if !strings.Contains(strings.Join(v.Skills, ","), skill) {
						t.Errorf("%s needs %s, served by %s", o.ID, skill, r.VehicleRef)
					}
				}
				if len(o.TimeWindows) == 0 {
					continue
				}
				if st.TimeWindowStart == nil || st.TimeWindowEnd == nil {
					t.Fatalf("%s: no window on the stop of an order with time windows", o.ID)
				}
				if ws, we := clock(t, *st.TimeWindowStart), clock(t, *st.TimeWindowEnd); st.StartS < ws || st.StartS > we {
					t.Errorf("%s starts at %d, outside the window %s-%s it shows", o.ID, st.StartS, *st.TimeWindowStart, *st.TimeWindowEnd)
				}
				if o.ID == "F-4" && *st.TimeWindowStart != "14:00" {
					t.Errorf("F-4 can only be served in 14:00-15:00, its stop shows %s", *st.TimeWindowStart)
				}
			}

			// The polyline runs from the start to the end, the last stop
			// when open (the fake road network passes a midpoint per leg).
			coords, _, err := polyline.DecodeCoords([]byte(r.Polyline))
			if err != nil || len(coords) < 2 {
				t.Fatalf("%s: polyline %q: %v", r.VehicleRef, r.Polyline, err)
			}
			last := []float64{r.Stops[len(r.Stops)-1].Latitude, r.Stops[len(r.Stops)-1].Longitude}
			legs := len(r.Stops)
			if r.End.At != nil {
				last = []float64{r.End.At.Latitude, r.End.At.Longitude}
				legs++
			}
			if first := coords[0]; math.Abs(first[0]-r.Start.Latitude) > 1e-5 || math.Abs(first[1]-r.Start.Longitude) > 1e-5 {
				t.Errorf("%s: polyline starts at %v, the route at %+v", r.VehicleRef, first, r.Start)
			}
			if end := coords[len(coords)-1]; math.Abs(end[0]-last[0]) > 1e-5 || math.Abs(end[1]-last[1]) > 1e-5 || len(coords) != 2*legs+1 {
				t.Errorf("%s: polyline of %d points ends at %v, want %d ending at %v", r.VehicleRef, len(coords), end, 2*legs+1, last)
			}
		}
		if len(res.Routes) != 3 {
			t.Errorf("%d routes, want all three vehicles used", len(res.Routes))
		}
		if res.KPIs.RouteSeconds != routeSeconds {
			t.Errorf("route_seconds %d, want the routes' %d", res.KPIs.RouteSeconds, routeSeconds)
		}
	})

	t.Run("a start the geocoder cannot place", func(t *testing.T) {
		opt := createSpec(t, s, fleetSpec(&v1alpha1.Location{Address: ptr.To("nowhere 5")}))
		cur := waitTerminal(t, s, opt, 60*time.Second)
		if cur.Status.State != v1alpha1.StateFailed || cur.Status.ErrorCode != v1alpha1.ErrorInvalidInput {
			t.Fatalf("state %s, error %s, want failed with invalid_input", cur.Status.State, cur.Status.ErrorCode)
		}
		for _, say := range []string{`vehicle "home": its start address "nowhere 5" was not found`, `vehicle "open": its start address "nowhere 5" was not found`} {
			if !strings.Contains(cur.Status.ErrorMessage, say) {
				t.Errorf("error message %q does not say %q", cur.Status.ErrorMessage, say)
			}
		}
		_, rec, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name, nil, nil)
		if rec["error_code"] != v1alpha1.ErrorInvalidInput || !strings.Contains(fmt.Sprint(rec["error_message"]), `vehicle "home"`) {
			t.Errorf("record %v", rec)
		}
	})

	t.Run("without the constraints, none of their fields", func(t *testing.T) {
		spec := fleetSpec(nil)
		for i := range spec.Orders {
			o := &spec.Orders[i]
			o.TimeWindows, o.Skills, o.Loads, o.Priority = nil, nil, nil, nil
		}
		for i := range spec.Vehicles {
			spec.Vehicles[i].VehicleConstraints = v1alpha1.VehicleConstraints{}
		}
		opt := createSpec(t, s, spec)
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s: %s", cur.Status.State, cur.Status.ErrorMessage)
		}
		_, doc := storedResultDoc(t, opt)
		for _, r := range doc["routes"].([]any) {
			for _, key := range []string{"start", "end", "breaks", "loads", "capacities"} {
				if v, present := r.(map[string]any)[key]; present {
					t.Errorf("route has %s = %v", key, v)
				}
			}
		}
		for _, pv := range doc["kpis"].(map[string]any)["per_vehicle"].([]any) {
			for _, key := range []string{"loads", "capacities"} {
				if v, present := pv.(map[string]any)[key]; present {
					t.Errorf("per_vehicle has %s = %v", key, v)
				}
			}
		}
	})
}

// checkBreaks checks a route's breaks against the vehicle's: each lasts its
// minutes inside its window, starts once the route or the stop before it
// is left and ends before the next stop's service starts (or the route
// returns); an open route returns when its last stop or a break after it
// ends.
func checkBreaks(t *testing.T, r v1alpha1.Route, breaks []v1alpha1.Break) {
	t.Helper()
	if len(r.Breaks) != len(breaks) {
		t.Fatalf("%s: %d breaks planned for %d", r.VehicleRef, len(r.Breaks), len(breaks))
	}
	for i, b := range r.Breaks {
		want := breaks[i]
		ws, _ := plan.ParseClock(want.Start)
		we, _ := plan.ParseClock(want.End)
		if b.EndS-b.StartS != int(want.Minutes)*60 || b.StartS < ws || b.EndS > we {
			t.Errorf("%s: break %d-%d, want %d minutes within %s-%s", r.VehicleRef, b.StartS, b.EndS, want.Minutes, want.Start, want.End)
		}
		if b.AfterSeq < 0 || b.AfterSeq > len(r.Stops) {
			t.Fatalf("%s: break after seq %d of %d stops", r.VehicleRef, b.AfterSeq, len(r.Stops))
		}
		left := r.DepartS
		if b.AfterSeq > 0 {
			left = r.Stops[b.AfterSeq-1].DepartS
		}
		next := r.ReturnS
		if b.AfterSeq < len(r.Stops) {
			next = r.Stops[b.AfterSeq].StartS
		}
		if b.StartS < left || b.EndS > next {
			t.Errorf("%s: break %d-%d after seq %d, outside %d-%d", r.VehicleRef, b.StartS, b.EndS, b.AfterSeq, left, next)
		}
	}
	if r.End.Open {
		want := r.Stops[len(r.Stops)-1].DepartS
		if n := len(r.Breaks); n > 0 && r.Breaks[n-1].AfterSeq == len(r.Stops) {
			want = r.Breaks[n-1].EndS
		}
		if r.ReturnS != want {
			t.Errorf("%s: open route returns at %d, want %d (its last stop or the break after it)", r.VehicleRef, r.ReturnS, want)
		}
	}
}

// TestFleetStartGeocodedForTheJob: the manager geocodes the fleet's start
// and end addresses with the orders before a solve Job, which asks no
// geocoder, finds them; one the geocoder cannot place fails in the
// manager's geocoding already, naming the fleet.
func TestFleetStartGeocodedForTheJob(t *testing.T) {
	ctx := context.Background()
	nominatim, err := geocode.NewNominatim(geocode.NominatimOptions{BaseURL: newFakeNominatim(t, 0).URL, RatePerSecond: -1, MaxConcurrent: 1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	solve := func(t *testing.T, start, end string) (*v1alpha1.Optimization, error) {
		opt := createSolve(t, "fleet-ends-", v1alpha1.OptimizationSpec{
			Depot: v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
			Fleet: &v1alpha1.Fleet{Count: 2, Capacity: 100, VehicleConstraints: v1alpha1.VehicleConstraints{
				Start: &v1alpha1.Location{Address: ptr.To(start)}, End: &v1alpha1.Location{Address: ptr.To(end)},
			}},
			Options: &v1alpha1.Options{SolverSeconds: ptr.To[int32](1)},
			Orders: []v1alpha1.Order{
				{ID: "a", Latitude: ptr.To(52.53), Longitude: ptr.To(13.38)},
				{ID: "b", Address: ptr.To("Auftragsweg 2, Berlin")},
			},
		})
		key := client.ObjectKeyFromObject(opt)
		manager := &solver.Pipeline{Client: k8sClient, Geocoder: nominatim}
		if err := manager.Geocode(ctx, key, nil); err != nil {
			return opt, err
		}
		job := &solver.Pipeline{Client: k8sClient, Geocoder: geocode.Prefetched{}}
		return opt, job.Run(ctx, key, nil)
	}

	t.Run("placed", func(t *testing.T) {
		opt, err := solve(t, "Heimweg 5, Berlin", "Hofweg 7, Berlin")
		if err != nil {
			t.Fatalf("solve: %v", err)
		}
		res, err := docstore.ReadResult(ctx, k8sClient, opt, false)
		if err != nil {
			t.Fatal(err)
		}
		startLat, startLon := fakePosition("Heimweg 5, Berlin")
		endLat, endLon := fakePosition("Hofweg 7, Berlin")
		if len(res.Routes) == 0 || len(res.Unassigned) != 0 {
			t.Fatalf("routes %d, unassigned %+v", len(res.Routes), res.Unassigned)
		}
		for _, r := range res.Routes {
			if r.Start == nil || r.End.At == nil || math.Abs(r.Start.Latitude-startLat) > 1e-6 || math.Abs(r.End.At.Longitude-endLon) > 1e-6 || math.Abs(r.End.At.Latitude-endLat) > 1e-6 || math.Abs(r.Start.Longitude-startLon) > 1e-6 {
				t.Errorf("%s runs from %+v to %+v, want the geocoded start %v,%v and end %v,%v", r.VehicleRef, r.Start, r.End.At, startLat, startLon, endLat, endLon)
			}
		}
	})

	t.Run("not found", func(t *testing.T) {
		_, err := solve(t, "Heimweg 5, Berlin", "nowhere 7, Berlin")
		f := record.AsFailure(err)
		if err == nil || f.Code != v1alpha1.ErrorInvalidInput || !strings.Contains(f.Message, `the fleet: its end address "nowhere 7, Berlin" was not found`) {
			t.Errorf("manager's geocoding: %v, want invalid_input naming the fleet's end", err)
		}
	})
}
