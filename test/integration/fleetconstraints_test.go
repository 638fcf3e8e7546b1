package integration

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/store"
	"routeopt.io/routeopt/test/requests"
)

// TestFleetConstraintsThroughREST: every fleet constraint of a create
// reaches the Optimization (the fleet's) and its input ConfigMap (the
// orders' and vehicles'), the result's fields for them are served as
// stored, and their rules are refused with 422 in pydantic's shape. Every
// request and answer is also checked against /openapi.json.
func TestFleetConstraintsThroughREST(t *testing.T) {
	s := startSystem(t, "inprocess")
	ctx := context.Background()

	orders := []map[string]any{
		{"id": "A-1", "latitude": 52.53, "longitude": 13.38,
			"time_windows": []map[string]any{{"start": "09:00", "end": "10:30"}, {"start": "14:00", "end": "16:00"}},
			"skills":       []string{"fridge"}, "loads": map[string]any{"weight_kg": 120, "volume_l": 400}, "priority": 80},
		{"id": "A-2", "latitude": 52.51, "longitude": 13.41, "loads": map[string]any{"weight_kg": 30.5}},
	}
	wantOrders := []v1alpha1.Order{
		{ID: "A-1", Latitude: ptr.To(52.53), Longitude: ptr.To(13.38), Demand: ptr.To(1.0), ServiceMinutes: ptr.To(5.0),
			TimeWindows: []v1alpha1.TimeWindow{{Start: "09:00", End: "10:30"}, {Start: "14:00", End: "16:00"}},
			Skills:      []string{"fridge"},
			Loads:       []v1alpha1.DimensionLoad{{Name: "volume_l", Value: 400}, {Name: "weight_kg", Value: 120}},
			Priority:    ptr.To[int32](80)},
		{ID: "A-2", Latitude: ptr.To(52.51), Longitude: ptr.To(13.41), Demand: ptr.To(1.0), ServiceMinutes: ptr.To(5.0),
			Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 30.5}}},
	}

	t.Run("a create stores every constraint", func(t *testing.T) {
		s.stopManager() // the stored form is the subject here, not a solve
		defer s.startManager(t)

		opt := createViaREST(t, s, "fleet-constraints-0001", map[string]any{
			"depot":  map[string]any{"latitude": 52.52, "longitude": 13.405},
			"orders": orders,
			"vehicles": []map[string]any{
				{"id": "van-1", "capacity": 10, "driver": "Ann", "shift_start": "07:00", "skills": []string{"fridge", "lift"},
					"capacities":           map[string]any{"weight_kg": 1000, "volume_l": 3000},
					"breaks":               []map[string]any{{"start": "11:30", "end": "13:30", "minutes": 30}, {"start": "15:00", "end": "18:00", "minutes": 15}},
					"max_duration_minutes": 480, "max_distance_km": 250.5, "max_stops": 40,
					"start": map[string]any{"label": "Yard", "latitude": 52.50, "longitude": 13.39}, "open_end": true},
				{"id": "van-2", "capacity": 8, "capacities": map[string]any{"weight_kg": 800, "volume_l": 2000},
					"end": map[string]any{"address": "Storkower Str. 140, Berlin"}},
			},
		})
		in, err := v1alpha1.DecodeInput(inputConfigMap(t, opt).BinaryData, nil, opt.Spec.Input.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantOrders, in.Orders); diff != "" {
			t.Errorf("stored orders (-want +got):\n%s", diff)
		}
		wantVehicles := []v1alpha1.Vehicle{
			{ID: "van-1", Capacity: 10, Driver: ptr.To("Ann"), ShiftStart: "07:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Skills:             []string{"fridge", "lift"},
				Capacities:         []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 3000}, {Name: "weight_kg", Value: 1000}},
				Breaks:             []v1alpha1.Break{{Start: "11:30", End: "13:30", Minutes: 30}, {Start: "15:00", End: "18:00", Minutes: 15}},
				MaxDurationMinutes: 480, MaxDistanceKm: 250.5, MaxStops: 40,
				Start:   &v1alpha1.Location{Label: ptr.To("Yard"), Latitude: ptr.To(52.50), Longitude: ptr.To(13.39)},
				OpenEnd: ptr.To(true),
			}},
			{ID: "van-2", Capacity: 8, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 2000}, {Name: "weight_kg", Value: 800}},
				End:        &v1alpha1.Location{Address: ptr.To("Storkower Str. 140, Berlin")},
			}},
		}
		if diff := cmp.Diff(wantVehicles, in.Vehicles); diff != "" {
			t.Errorf("stored vehicles (-want +got):\n%s", diff)
		}

		opt = createViaREST(t, s, "fleet-constraints-0002", map[string]any{
			"depot":  map[string]any{"latitude": 52.52, "longitude": 13.405},
			"orders": orders,
			"fleet": map[string]any{"count": 3, "capacity": 8, "shift_end": "17:00", "skills": []string{"fridge"},
				"capacities":           map[string]any{"weight_kg": 900, "volume_l": 2500},
				"breaks":               []map[string]any{{"start": "08:00", "end": "09:00", "minutes": 60}},
				"max_duration_minutes": 1440, "max_distance_km": 10000, "max_stops": 500,
				"start": map[string]any{"address": "Storkower Str. 140, Berlin"}, "end": map[string]any{"latitude": 52.4, "longitude": 13.3}},
		})
		wantFleet := &v1alpha1.Fleet{Count: 3, Capacity: 8, ShiftStart: "08:00", ShiftEnd: "17:00", NamePrefix: "Vehicle",
			VehicleConstraints: v1alpha1.VehicleConstraints{
				Skills:             []string{"fridge"},
				Capacities:         []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 2500}, {Name: "weight_kg", Value: 900}},
				Breaks:             []v1alpha1.Break{{Start: "08:00", End: "09:00", Minutes: 60}},
				MaxDurationMinutes: 1440, MaxDistanceKm: 10000, MaxStops: 500,
				Start: &v1alpha1.Location{Address: ptr.To("Storkower Str. 140, Berlin")},
				End:   &v1alpha1.Location{Latitude: ptr.To(52.4), Longitude: ptr.To(13.3)},
			}}
		if diff := cmp.Diff(wantFleet, opt.Spec.Fleet); diff != "" {
			t.Errorf("spec.fleet (-want +got):\n%s", diff)
		}
		in, err = v1alpha1.DecodeInput(inputConfigMap(t, opt).BinaryData, nil, opt.Spec.Input.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantOrders, in.Orders); diff != "" {
			t.Errorf("stored orders beside a fleet (-want +got):\n%s", diff)
		}
	})

	t.Run("refused with 422 in the documented shape", func(t *testing.T) {
		body := map[string]any{
			"depot":  map[string]any{"latitude": 52.52, "longitude": 13.405},
			"orders": orders,
			"vehicles": []map[string]any{
				{"id": "van-1", "capacity": 10, "capacities": map[string]any{"weight_kg": 1000, "volume_l": 3000}},
				{"id": "van-2", "capacity": 10, "capacities": map[string]any{"weight_kg": 1000}},
			},
		}
		status, got, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "fleet-constraints-0003"})
		// Decoded into a map, the answer's keys come back sorted.
		want := `[{"ctx":{"error":{}},"input":{"capacities":{"weight_kg":1000},"capacity":10,"id":"van-2"},"loc":["body","vehicles",1],"msg":"Value error, capacities must give every dimension the orders' loads name; missing: \"volume_l\"","type":"value_error"}]`
		if raw, _ := json.Marshal(got["detail"]); status != 422 || string(raw) != want {
			t.Errorf("missing dimension: %d %s\nwant 422 %s", status, raw, want)
		}

		body["vehicles"] = []map[string]any{{"id": "van-1", "capacity": 10, "capacities": map[string]any{"weight_kg": 1000, "volume_l": 3000},
			"max_stops": 501, "breaks": []map[string]any{{"start": "12:00", "end": "12:10", "minutes": 0}}}}
		status, got, _ = s.callInvalid(t, "max_stops and a break's minutes out of bounds", "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "fleet-constraints-0004"})
		want = `[{"ctx":{"ge":1},"input":0,"loc":["body","vehicles",0,"breaks",0,"minutes"],"msg":"Input should be greater than or equal to 1","type":"greater_than_equal"},` +
			`{"ctx":{"le":500},"input":501,"loc":["body","vehicles",0,"max_stops"],"msg":"Input should be less than or equal to 500","type":"less_than_equal"}]`
		if raw, _ := json.Marshal(got["detail"]); status != 422 || string(raw) != want {
			t.Errorf("out of bounds: %d %s\nwant 422 %s", status, raw, want)
		}
	})

	t.Run("the result serves the constraints' fields as stored", func(t *testing.T) {
		opt := createViaREST(t, s, "fleet-constraints-0005", requests.TenOrders(1))
		waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
		status, raw, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result", nil, nil)
		if status != 200 {
			t.Fatalf("result: %d %v", status, raw)
		}
		for _, r := range raw["routes"].([]any) {
			for _, field := range []string{"start", "end", "breaks", "loads", "capacities"} {
				if v, ok := r.(map[string]any)[field]; ok {
					t.Errorf("a request without constraints got route %s = %v", field, v)
				}
			}
		}
		var before v1alpha1.Result
		remarshal(t, raw, &before)
		if len(before.Routes) == 0 {
			t.Fatal("no routes")
		}
		r := before
		r.Routes = append([]v1alpha1.Route(nil), before.Routes...)
		yard := &v1alpha1.Place{Latitude: 52.5, Longitude: 13.39, Address: "Storkower Str. 140, Berlin"}
		r.Routes[0].Start, r.Routes[0].End = yard, v1alpha1.RouteEnd{Open: true}
		r.Routes[0].Breaks = []v1alpha1.RouteBreak{{StartS: 43200, EndS: 45000, AfterSeq: 1}}
		r.Routes[0].Loads, r.Routes[0].Capacities = map[string]float64{"weight_kg": 150.5}, map[string]float64{"weight_kg": 1000}
		r.KPIs.PerVehicle = append([]v1alpha1.VehicleKPI(nil), before.KPIs.PerVehicle...)
		r.KPIs.PerVehicle[0].Loads, r.KPIs.PerVehicle[0].Capacities = map[string]float64{"weight_kg": 150.5}, map[string]float64{"weight_kg": 1000}
		r.Unassigned = append(r.Unassigned, v1alpha1.Unassigned{OrderRef: "X-1", Reason: "route_limit", Message: "every vehicle is at its max_stops"})
		if len(r.Routes) > 1 {
			r.Routes[1].Start, r.Routes[1].End = yard, v1alpha1.RouteEnd{At: &v1alpha1.Place{Latitude: 52.4, Longitude: 13.3}}
		}
		if err := store.StoreResult(ctx, k8sClient, opt, &r); err != nil {
			t.Fatal(err)
		}

		status, got, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result", nil, nil)
		if status != 200 {
			t.Fatalf("result: %d %v", status, got)
		}
		route := got["routes"].([]any)[0].(map[string]any)
		end, hasEnd := route["end"]
		if !hasEnd || end != nil {
			t.Errorf("open route's end = %v (present %v), want null", end, hasEnd)
		}
		for field, want := range map[string]string{
			"start":      `{"address":"Storkower Str. 140, Berlin","latitude":52.5,"longitude":13.39}`,
			"breaks":     `[{"after_seq":1,"end_s":45000,"start_s":43200}]`,
			"loads":      `{"weight_kg":150.5}`,
			"capacities": `{"weight_kg":1000}`,
		} {
			if raw, _ := json.Marshal(route[field]); string(raw) != want {
				t.Errorf("route %s = %s, want %s", field, raw, want)
			}
		}
		perVehicle := got["kpis"].(map[string]any)["per_vehicle"].([]any)[0].(map[string]any)
		if raw, _ := json.Marshal(perVehicle["loads"]); string(raw) != `{"weight_kg":150.5}` {
			t.Errorf("per_vehicle loads = %s", raw)
		}
		if len(r.Routes) > 1 {
			if raw, _ := json.Marshal(got["routes"].([]any)[1].(map[string]any)["end"]); string(raw) != `{"address":"","latitude":52.4,"longitude":13.3}` {
				t.Errorf("closed route's end = %s", raw)
			}
		}
		unassigned := got["unassigned"].([]any)
		if last := unassigned[len(unassigned)-1].(map[string]any); last["reason"] != "route_limit" {
			t.Errorf("unassigned %v", last)
		}
	})
}

// TestREADMEFleetSolvedThroughREST: the README's real-fleet request,
// created, solved and served through the REST API: every order planned,
// each route with its start, its end (null for the open one) and its
// break inside the window, a stop of the order with two windows served in
// one of them.
func TestREADMEFleetSolvedThroughREST(t *testing.T) {
	s := startSystem(t, "inprocess")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)-H "Idempotency-Key: readme-walkthrough-fleet-1" \\\n\s*-d '(\{.*?\n\})'`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no real-fleet request")
	}
	var body map[string]any
	if err := json.Unmarshal(m[1], &body); err != nil {
		t.Fatal(err)
	}
	opt := createViaREST(t, s, "readme-fleet-0001", body)
	waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	status, res := getResult(t, s, opt.Name, false)
	if status != 200 {
		t.Fatalf("result: %d", status)
	}
	if len(res.Unassigned) != 0 {
		t.Errorf("unassigned: %+v", res.Unassigned)
	}
	for _, r := range res.Routes {
		if r.Start == nil {
			t.Errorf("route %s has no start", r.VehicleRef)
		}
		if open := r.VehicleRef == "van-2"; r.End.Open != open {
			t.Errorf("route %s: end %+v, open %v", r.VehicleRef, r.End, open)
		}
		if len(r.Breaks) != 1 || r.Breaks[0].StartS < 12*3600 || r.Breaks[0].EndS > 14*3600 || r.Breaks[0].EndS-r.Breaks[0].StartS != 1800 {
			t.Errorf("route %s: breaks %+v, want one of 30 min between 12:00 and 14:00", r.VehicleRef, r.Breaks)
		}
		for _, st := range r.Stops {
			if st.OrderRef == "B-1" && (st.TimeWindowStart == nil || *st.TimeWindowStart != "09:00" && *st.TimeWindowStart != "14:00") {
				t.Errorf("B-1 served in window %v", st.TimeWindowStart)
			}
		}
	}
}
