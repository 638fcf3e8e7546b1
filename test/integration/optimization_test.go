package integration

import (
	"routeopt.io/routeopt/test/requests"

	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	polyline "github.com/twpayne/go-polyline"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver"
)

// observation is one state of the record seen on the watch.
type observation struct {
	state    v1alpha1.State
	stage    v1alpha1.Stage
	progress int32
}

// watchOptimization starts a watch on one Optimization (which may not exist
// yet) and returns a function that collects every version until it is
// terminal. The API server's watch delivers each write, so no step is missed.
func watchOptimization(t *testing.T, namespace, name string, timeout time.Duration) func() []observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	list := &v1alpha1.OptimizationList{}
	w, err := k8sClient.Watch(ctx, list, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", name)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return func() []observation {
		t.Helper()
		defer cancel()
		defer w.Stop()
		var seen []observation
		for {
			select {
			case <-ctx.Done():
				t.Fatalf("optimization not terminal after %s; seen %+v", timeout, seen)
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("watch closed; seen %+v", seen)
				}
				if ev.Type != watch.Added && ev.Type != watch.Modified {
					continue
				}
				opt := ev.Object.(*v1alpha1.Optimization)
				o := observation{opt.Status.State, opt.Status.Stage, opt.Status.Progress}
				if len(seen) == 0 || seen[len(seen)-1] != o {
					seen = append(seen, o)
				}
				if opt.Status.State.IsTerminal() {
					return seen
				}
			}
		}
	}
}

func TestCreateSolveAndFetchResult(t *testing.T) {
	s := startSystem(t, "inprocess")
	body := requests.TenOrders(1)
	headers := map[string]string{"Idempotency-Key": "integration-key-0001"}

	collect := watchOptimization(t, s.namespace, webserver.OptimizationID(s.namespace, headers["Idempotency-Key"]), 60*time.Second)
	status, rec, hdr := s.call(t, "POST", "/v1/optimizations", body, headers)
	if status != 202 {
		t.Fatalf("create: status %d, body %v", status, rec)
	}
	if hdr.Get("X-Request-ID") == "" {
		t.Error("no X-Request-ID on the answer")
	}
	id := rec["id"].(string)
	wantKeys := []string{"created_at", "error_code", "error_message", "finished_at", "id", "links", "name", "orders", "progress", "stage", "status", "strategy", "vehicles"}
	if keys := sortedKeys(rec); !slices.Equal(keys, wantKeys) {
		t.Errorf("record keys = %v, want %v", keys, wantKeys)
	}
	if rec["status"] != "queued" || rec["stage"] != "queued" || rec["orders"] != float64(10) || rec["vehicles"] != float64(2) || rec["strategy"] != "optimized" || rec["name"] != "Integration run" {
		t.Errorf("unexpected record %v", rec)
	}
	links := rec["links"].(map[string]any)
	if links["self"] != "https://routes.example.test/v1/optimizations/"+id || links["result"] != "https://routes.example.test/v1/optimizations/"+id+"/result" {
		t.Errorf("links %v", links)
	}
	if _, err := time.Parse(time.RFC3339, rec["created_at"].(string)); err != nil {
		t.Errorf("created_at: %v", err)
	}

	// The custom resource: camelCase spec, idempotency annotations, the
	// orders in the input ConfigMap, camelCase too.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Optimization"))
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: id}, u); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedSlice(u.Object, "spec", "orders"); found {
		t.Error("spec lists the orders inline")
	}
	inputName, _, _ := unstructured.NestedString(u.Object, "spec", "input", "name")
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: inputName}, cm); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData[v1alpha1.InputDataKey]))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Orders []map[string]any `json:"orders"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Orders) != 10 {
		t.Fatalf("input document: %v, %d orders", err, len(doc.Orders))
	}
	first := doc.Orders[0]
	if first["timeWindowStart"] != "09:00" || first["serviceMinutes"] != float64(5) {
		t.Errorf("spec order not camelCase with defaults: %v", first)
	}
	if _, ok := first["time_window_start"]; ok {
		t.Error("spec carries snake_case keys")
	}
	if fleet, _, _ := unstructured.NestedMap(u.Object, "spec", "fleet"); fleet["count"] != int64(2) {
		t.Errorf("spec fleet %v", fleet)
	}
	ann := u.GetAnnotations()
	if len(ann[v1alpha1.RequestHashAnnotation]) != 64 || len(ann[v1alpha1.IdempotencyKeyHashAnnotation]) != 64 {
		t.Errorf("annotations %v", ann)
	}

	seen := collect()
	checkProgression(t, seen)

	// The API reads from its own cache, which may trail the watch above by a moment.
	rec = waitForState(t, s, id, v1alpha1.StateCompleted)
	if rec["progress"] != float64(100) || rec["finished_at"] == nil {
		t.Fatalf("record after completion: %v", rec)
	}

	// The result, every field docs/API.md documents.
	status, res, _ := s.call(t, "GET", "/v1/optimizations/"+id+"/result", nil, nil)
	if status != 200 {
		t.Fatalf("result: %d %v", status, res)
	}
	checkResultShape(t, res)
	var result v1alpha1.Result
	remarshal(t, res, &result)
	checkInvariants(t, body, &result)
	for _, r := range result.Routes {
		if r.Polyline != "" {
			t.Error("polyline present without include_path")
		}
	}

	// include_path=true: each route's polyline passes depot, stops in order, depot.
	status, res, _ = s.call(t, "GET", "/v1/optimizations/"+id+"/result?include_path=true", nil, nil)
	if status != 200 {
		t.Fatalf("result with path: %d %v", status, res)
	}
	var withPath v1alpha1.Result
	remarshal(t, res, &withPath)
	for _, r := range withPath.Routes {
		coords, _, err := polyline.DecodeCoords([]byte(r.Polyline))
		if err != nil {
			t.Fatalf("polyline: %v", err)
		}
		if len(coords) != len(r.Stops)+2 {
			t.Fatalf("polyline has %d points for %d stops", len(coords), len(r.Stops))
		}
		for i, st := range r.Stops {
			if math.Abs(coords[i+1][0]-st.Latitude) > 1e-5 || math.Abs(coords[i+1][1]-st.Longitude) > 1e-5 {
				t.Errorf("polyline point %d = %v, stop at %v,%v", i+1, coords[i+1], st.Latitude, st.Longitude)
			}
		}
	}

	// Idempotency: the same key and payload answer the same record; another payload is refused.
	status, again, _ := s.call(t, "POST", "/v1/optimizations", body, headers)
	if status != 202 || again["id"] != id || again["status"] != "completed" {
		t.Errorf("replay: %d %v", status, again)
	}
	changed := requests.TenOrders(2)
	status, refused, _ := s.call(t, "POST", "/v1/optimizations", changed, headers)
	if status != 422 {
		t.Fatalf("reused key with another payload: %d %v", status, refused)
	}
	detail := refused["detail"].([]any)[0].(map[string]any)
	if detail["type"] != "idempotency_key_reused" {
		t.Errorf("detail %v", detail)
	}

	// The list shows it.
	status, list, _ := s.call(t, "GET", "/v1/optimizations?page=1&page_size=10", nil, nil)
	if status != 200 || list["total"] != float64(1) || len(list["items"].([]any)) != 1 {
		t.Errorf("list: %d %v", status, list)
	}
}

// checkProgression asserts queued -> running -> completed, stages in
// order, progress never backwards and 100 at the end.
func checkProgression(t *testing.T, seen []observation) {
	t.Helper()
	stateOrder := []v1alpha1.State{"", v1alpha1.StateQueued, v1alpha1.StateRunning, v1alpha1.StateCompleted}
	stageOrder := []v1alpha1.Stage{"", v1alpha1.StageQueued, v1alpha1.StageGeocoding, v1alpha1.StageMatrix, v1alpha1.StageOptimizing, v1alpha1.StageStoring}
	var states []v1alpha1.State
	var stages []v1alpha1.Stage
	lastState, lastStage, lastProgress := -1, -1, int32(-1)
	for _, o := range seen {
		si, gi := slices.Index(stateOrder, o.state), slices.Index(stageOrder, o.stage)
		if si < 0 || gi < 0 {
			t.Fatalf("unknown state or stage in %+v", o)
		}
		if si < lastState || (o.stage != "" && gi < lastStage) || o.progress < lastProgress {
			t.Fatalf("went backwards at %+v; seen %+v", o, seen)
		}
		if len(states) == 0 || states[len(states)-1] != o.state {
			states = append(states, o.state)
		}
		if o.stage != "" && (len(stages) == 0 || stages[len(stages)-1] != o.stage) {
			stages = append(stages, o.stage)
		}
		lastState, lastProgress = si, o.progress
		if o.stage != "" {
			lastStage = gi
		}
	}
	for _, want := range []v1alpha1.State{v1alpha1.StateRunning, v1alpha1.StateCompleted} {
		if !slices.Contains(states, want) {
			t.Errorf("state %s never seen: %v", want, states)
		}
	}
	for _, want := range stageOrder[2:] {
		if !slices.Contains(stages, want) {
			t.Errorf("stage %s never seen: %v", want, stages)
		}
	}
	if last := seen[len(seen)-1]; last.state != v1alpha1.StateCompleted || last.progress != 100 {
		t.Errorf("final observation %+v, want completed at 100", last)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func remarshal(t *testing.T, in any, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// checkResultShape asserts that every field of the public API's result is present.
func checkResultShape(t *testing.T, res map[string]any) {
	t.Helper()
	need := func(obj map[string]any, where string, keys ...string) {
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s lacks %q", where, k)
			}
		}
	}
	need(res, "result", "id", "status", "strategy", "kpis", "routes", "unassigned", "warnings")
	kpis := res["kpis"].(map[string]any)
	need(kpis, "kpis", "orders_total", "orders_assigned", "orders_unassigned", "vehicles_available", "vehicles_used", "distance_m", "drive_seconds", "route_seconds", "late_stops", "avg_utilization", "per_vehicle")
	for _, pv := range kpis["per_vehicle"].([]any) {
		need(pv.(map[string]any), "per_vehicle", "vehicle_ref", "stops", "distance_m", "load", "capacity")
	}
	routes := res["routes"].([]any)
	if len(routes) == 0 {
		t.Fatal("no routes")
	}
	for _, r := range routes {
		route := r.(map[string]any)
		need(route, "route", "vehicle_ref", "driver_name", "depart_s", "return_s", "distance_m", "load", "capacity", "stops")
		for _, s := range route["stops"].([]any) {
			need(s.(map[string]any), "stop", "seq", "order_ref", "address", "latitude", "longitude", "arrival_s", "start_s", "depart_s", "wait_s", "late_s", "leg_distance_m", "leg_travel_s")
		}
	}
}

// orderInfo is what the invariants need of a requested order.
type orderInfo struct {
	ws, we  int
	service int
	demand  float64
}

// checkInvariants checks a result against its request: every order once,
// schedule arithmetic, windows, capacity, and KPIs equal to the sums.
func checkInvariants(t *testing.T, req map[string]any, r *v1alpha1.Result) {
	t.Helper()
	orders := map[string]orderInfo{}
	for _, o := range req["orders"].([]map[string]any) {
		info := orderInfo{ws: 0, we: math.MaxInt32, service: 300, demand: 1}
		if v, ok := o["time_window_start"].(string); ok {
			info.ws = clock(t, v)
		}
		if v, ok := o["time_window_end"].(string); ok {
			info.we = clock(t, v)
		}
		if v, ok := o["demand"]; ok {
			info.demand = toFloat(v)
		}
		orders[o["id"].(string)] = info
	}
	seen := map[string]int{}
	var distance, drive, routeSeconds int64
	late := 0
	for _, route := range r.Routes {
		prevDepart := route.DepartS
		var load float64
		var legs int64
		for i, st := range route.Stops {
			seen[st.OrderRef]++
			o, ok := orders[st.OrderRef]
			if !ok {
				t.Fatalf("unknown order %s", st.OrderRef)
			}
			if st.Seq != i+1 {
				t.Errorf("%s: seq %d at position %d", route.VehicleRef, st.Seq, i+1)
			}
			if st.ArrivalS != prevDepart+st.LegTravelS {
				t.Errorf("%s: arrival %d != previous depart %d + leg %d", st.OrderRef, st.ArrivalS, prevDepart, st.LegTravelS)
			}
			if st.StartS != max(st.ArrivalS, o.ws) {
				t.Errorf("%s: start %d != max(arrival %d, window start %d)", st.OrderRef, st.StartS, st.ArrivalS, o.ws)
			}
			if st.WaitS != st.StartS-st.ArrivalS || st.DepartS != st.StartS+o.service || st.LateS != max(0, st.StartS-o.we) {
				t.Errorf("%s: wait/depart/late inconsistent: %+v", st.OrderRef, st)
			}
			if r.Strategy == v1alpha1.StrategyOptimized && st.LateS != 0 {
				t.Errorf("%s: late in an optimized plan", st.OrderRef)
			}
			if st.LateS > 0 {
				late++
			}
			prevDepart = st.DepartS
			load += o.demand
			legs += st.LegDistanceM
		}
		if route.ReturnS < prevDepart {
			t.Errorf("%s: returns at %d before leaving the last stop at %d", route.VehicleRef, route.ReturnS, prevDepart)
		}
		if math.Abs(load-route.Load) > 1e-9 || route.Load > route.Capacity+1e-9 {
			t.Errorf("%s: load %v (stops sum %v) capacity %v", route.VehicleRef, route.Load, load, route.Capacity)
		}
		if legs > route.DistanceM {
			t.Errorf("%s: legs %d exceed route distance %d", route.VehicleRef, legs, route.DistanceM)
		}
		distance += route.DistanceM
		routeSeconds += int64(route.ReturnS - route.DepartS)
		drive += int64(route.ReturnS-route.DepartS) - waitAndService(route, orders)
	}
	for _, u := range r.Unassigned {
		seen[u.OrderRef]++
		if u.Reason == "" || u.Message == "" {
			t.Errorf("unassigned %s without reason or message", u.OrderRef)
		}
	}
	for id := range orders {
		if seen[id] != 1 {
			t.Errorf("order %s appears %d times", id, seen[id])
		}
	}
	k := r.KPIs
	assigned := 0
	for _, route := range r.Routes {
		assigned += len(route.Stops)
	}
	if k.OrdersTotal != len(orders) || k.OrdersAssigned != assigned || k.OrdersUnassigned != len(r.Unassigned) || k.VehiclesUsed != len(r.Routes) {
		t.Errorf("kpi counts %+v", k)
	}
	if k.DistanceM != distance || k.RouteSeconds != routeSeconds || k.LateStops != late || k.DriveSeconds != drive {
		t.Errorf("kpi sums: distance %d/%d route_seconds %d/%d late %d/%d drive %d/%d", k.DistanceM, distance, k.RouteSeconds, routeSeconds, k.LateStops, late, k.DriveSeconds, drive)
	}
	if len(k.PerVehicle) != k.VehiclesAvailable {
		t.Errorf("per_vehicle has %d entries for %d vehicles (every vehicle is listed)", len(k.PerVehicle), k.VehiclesAvailable)
	}
}

// waitAndService is the time of a route not spent driving.
func waitAndService(route v1alpha1.Route, orders map[string]orderInfo) int64 {
	var s int64
	for _, st := range route.Stops {
		s += int64(st.WaitS + orders[st.OrderRef].service)
	}
	return s
}

func clock(t *testing.T, s string) int {
	tm, err := time.Parse("15:04", s)
	if err != nil {
		t.Fatal(err)
	}
	return tm.Hour()*3600 + tm.Minute()*60
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}
