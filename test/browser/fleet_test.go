package browser

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	polyline "github.com/twpayne/go-polyline"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

func hm(h, m int) int { return h*3600 + m*60 }

// fleetResult is a plan written by hand with the fleet constraints' route
// fields: Van 1 starts at a hub of its own and returns to the depot, with a
// break before its first stop, one between its stops and one after its last;
// Van 2 leaves the depot and ends at its last stop (an open route); Van 3
// leaves the depot and ends at a yard. Van 1 and Van 2 carry polylines (Van
// 2's without a leg back), Van 3 none, so the map draws it from its start,
// stops and end.
func fleetResult(id string) *v1alpha1.Result {
	depot := &v1alpha1.Place{Latitude: 52.52, Longitude: 13.405}
	hub := &v1alpha1.Place{Latitude: 52.545, Longitude: 13.355, Address: "Hamburger Straße 1, 13353 Berlin"}
	yard := &v1alpha1.Place{Latitude: 52.48, Longitude: 13.46, Address: "Yard Süd"}
	stop := func(seq int, ref string, lat, lon float64, arrival int) v1alpha1.Stop {
		return v1alpha1.Stop{Seq: seq, OrderRef: ref, Address: ref + " street", Latitude: lat, Longitude: lon,
			ArrivalS: arrival, StartS: arrival, DepartS: arrival + 300, LegDistanceM: 3000, LegTravelS: 400}
	}
	line := func(from *v1alpha1.Place, stops []v1alpha1.Stop, to *v1alpha1.Place) string {
		coords := [][]float64{{from.Latitude, from.Longitude}}
		for _, s := range stops {
			coords = append(coords, []float64{s.Latitude, s.Longitude})
		}
		if to != nil {
			coords = append(coords, []float64{to.Latitude, to.Longitude})
		}
		return string(polyline.EncodeCoords(coords))
	}
	van1 := v1alpha1.Route{
		VehicleRef: "Van 1", DepartS: hm(7, 30), ReturnS: hm(14, 5), DistanceM: 21500, Load: 2, Capacity: 5,
		Loads: map[string]float64{"weight_kg": 200.5, "volume_l": 600}, Capacities: map[string]float64{"weight_kg": 500, "volume_l": 1000},
		Start: hub, End: v1alpha1.RouteEnd{At: depot},
		Breaks: []v1alpha1.RouteBreak{
			{StartS: hm(7, 30), EndS: hm(7, 45), AfterSeq: 0},
			{StartS: hm(11, 10), EndS: hm(11, 40), AfterSeq: 1},
			{StartS: hm(13, 20), EndS: hm(13, 40), AfterSeq: 2},
		},
		Stops: []v1alpha1.Stop{stop(1, "A-1", 52.5301, 13.3849, hm(10, 55)), stop(2, "A-2", 52.5163, 13.3777, hm(12, 0))},
	}
	van1.Polyline = line(hub, van1.Stops, depot)
	van2 := v1alpha1.Route{
		VehicleRef: "Van 2", DepartS: hm(8, 0), ReturnS: hm(9, 10), DistanceM: 9000, Load: 3, Capacity: 5,
		Loads: map[string]float64{"weight_kg": 55, "volume_l": 25}, Capacities: map[string]float64{"weight_kg": 500, "volume_l": 1000},
		Start: depot, End: v1alpha1.RouteEnd{Open: true}, Breaks: []v1alpha1.RouteBreak{},
		Stops: []v1alpha1.Stop{stop(1, "A-3", 52.5076, 13.4370, hm(8, 10)), stop(2, "A-4", 52.4990, 13.4180, hm(8, 30)), stop(3, "A-5", 52.5250, 13.4100, hm(9, 5))},
	}
	van2.Polyline = line(depot, van2.Stops, nil)
	van3 := v1alpha1.Route{
		VehicleRef: "Van 3", DepartS: hm(9, 0), ReturnS: hm(10, 30), DistanceM: 12000, Load: 2, Capacity: 5,
		Loads: map[string]float64{"weight_kg": 20, "volume_l": 10}, Capacities: map[string]float64{"weight_kg": 500, "volume_l": 1000},
		Start: depot, End: v1alpha1.RouteEnd{At: yard},
		Stops: []v1alpha1.Stop{stop(1, "A-6", 52.5400, 13.4120, hm(9, 20)), stop(2, "A-7", 52.5110, 13.3900, hm(9, 50))},
	}
	return &v1alpha1.Result{
		ID: id, Status: v1alpha1.StateCompleted, Strategy: v1alpha1.StrategyBaseline,
		KPIs: v1alpha1.KPIs{OrdersTotal: 7, OrdersAssigned: 7, VehiclesAvailable: 3, VehiclesUsed: 3, DistanceM: 42500, DriveSeconds: 6120, RouteSeconds: 35100, AvgUtilization: 0.47,
			PerVehicle: []v1alpha1.VehicleKPI{
				{VehicleRef: "Van 1", Stops: 2, DistanceM: 21500, Load: 2, Capacity: 5},
				{VehicleRef: "Van 2", Stops: 3, DistanceM: 9000, Load: 3, Capacity: 5},
				{VehicleRef: "Van 3", Stops: 2, DistanceM: 12000, Load: 2, Capacity: 5},
			}},
		Routes:     []v1alpha1.Route{van1, van2, van3},
		Unassigned: []v1alpha1.Unassigned{},
		Warnings:   []v1alpha1.Warning{},
	}
}

// storeResult replaces a completed optimization's stored result with res,
// in the stored form without a manifest (the whole document in one key),
// through the dev instance's admin kubeconfig.
func storeResult(t *testing.T, d *devServer, id string, res *v1alpha1.Result) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", d.kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list := &corev1.ConfigMapList{}
	if err := kube.List(ctx, list, client.MatchingLabels{v1alpha1.OptimizationLabel: id}); err != nil {
		t.Fatal(err)
	}
	data, err := v1alpha1.EncodeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		cm := &list.Items[i]
		if cm.Name != id+v1alpha1.ResultConfigMapSuffix {
			continue
		}
		cm.Data, cm.BinaryData = nil, map[string][]byte{v1alpha1.ResultDataKey: data}
		if err := kube.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no result ConfigMap for optimization %s", id)
}

// mapGeometry is what the offline map drew, in the SVG's pixels: each
// place marker, each route path's first and last point, each stop marker.
type mapGeometry struct {
	Places []struct {
		Class, Starts, Ends, Title string
		At                         [2]float64
	}
	Paths []struct {
		Route       string
		First, Last [2]float64
	}
	Stops []struct {
		Route, Seq string
		At         [2]float64
	}
}

const readMapGeometry = `(() => {
	const at = (g) => { const m = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(g.getAttribute("transform") || ""); return m ? [Number(m[1]), Number(m[2])] : [NaN, NaN]; };
	const q = (sel) => Array.from(document.querySelectorAll("#route-map " + sel));
	return {
		places: q(".place-marker").map((g) => ({class: g.getAttribute("class"), starts: g.dataset.startRoutes, ends: g.dataset.endRoutes, title: g.querySelector("title").textContent, at: at(g)})),
		paths: q("path.route-path").map((p) => { const n = (p.getAttribute("d").match(/-?\d+(?:\.\d+)?/g) || []).map(Number); return {route: p.dataset.route, first: [n[0], n[1]], last: [n[n.length - 2], n[n.length - 1]]}; }),
		stops: q(".stop-marker").map((g) => ({route: g.dataset.route, seq: g.dataset.seq, at: at(g)})),
	};
})()`

func near(a, b [2]float64) bool { return math.Hypot(a[0]-b[0], a[1]-b[1]) <= 1.5 }

// TestMapStartsAndEnds shows a plan whose routes start and end elsewhere
// than the depot: each route is drawn from its own start through its stops
// to its own end (the open route stops at its last stop, with no line
// back), the places are marked (the depot as a house, a start and an end
// of their own), and each route's table lists its start, breaks and end
// between the stops.
func TestMapStartsAndEnds(t *testing.T) {
	d := browserTest(t)
	c := d.newCompany(t, "Fleet Map GmbH")
	o := c.create(t, smallProblem("Fleet day"))
	c.waitStatus(t, o.ID, "completed")
	storeResult(t, d, o.ID, fleetResult(o.ID))

	p := openPage(t, d)
	p.navigate("/portal/optimizations/" + o.ID)
	p.signIn(c.key)
	p.waitText("#opt-state", "completed")
	p.waitCount("#route-map .route-path", 3)
	p.waitCount("#route-map .place-marker", 3)

	g := eval[mapGeometry](p, readMapGeometry)
	place := func(class string) [2]float64 {
		t.Helper()
		for _, pl := range g.Places {
			if strings.Contains(" "+pl.Class+" ", " "+class+" ") {
				return pl.At
			}
		}
		t.Fatalf("no .%s among the places %+v", class, g.Places)
		return [2]float64{}
	}
	for _, want := range []struct{ class, starts, ends, title string }{
		{"depot-marker", "1 2", "0", "Start of Van 2, Van 3; end of Van 1"},
		{"route-start-marker", "0", "", "Start of Van 1 · Hamburger Straße 1, 13353 Berlin"},
		{"route-end-marker", "", "2", "End of Van 3 · Yard Süd"},
	} {
		found := false
		for _, pl := range g.Places {
			if strings.Contains(" "+pl.Class+" ", " "+want.class+" ") {
				found = true
				if pl.Starts != want.starts || pl.Ends != want.ends || pl.Title != want.title {
					t.Errorf(".%s: starts %q, ends %q, title %q; want %q, %q, %q", want.class, pl.Starts, pl.Ends, pl.Title, want.starts, want.ends, want.title)
				}
			}
		}
		if !found {
			t.Errorf("no .%s among the places %+v", want.class, g.Places)
		}
	}
	depot, hub, yard := place("depot-marker"), place("route-start-marker"), place("route-end-marker")
	lastStop := func(route, seq string) [2]float64 {
		for _, s := range g.Stops {
			if s.Route == route && s.Seq == seq {
				return s.At
			}
		}
		t.Fatalf("no stop marker %s/%s", route, seq)
		return [2]float64{}
	}
	want := map[string][2][2]float64{ // route: its line's first and last point
		"0": {hub, depot},
		"1": {depot, lastStop("1", "3")},
		"2": {depot, yard},
	}
	if len(g.Paths) != len(want) {
		t.Fatalf("%d route paths, want %d", len(g.Paths), len(want))
	}
	for _, path := range g.Paths {
		w := want[path.Route]
		if !near(path.First, w[0]) || !near(path.Last, w[1]) {
			t.Errorf("route %s is drawn from %v to %v, want from %v to %v", path.Route, path.First, path.Last, w[0], w[1])
		}
	}
	if open := g.Paths[1]; near(open.Last, depot) {
		t.Errorf("the open route's line goes back to the depot")
	}

	// Each route's table: its start, breaks (after the stop after_seq
	// names) and end between its stops.
	tables := map[string][]string{
		"Van 1": {
			"start 07:30 Start: Hamburger Straße 1, 13353 Berlin",
			"break 07:30 Break 15 min, 07:30–07:45",
			"stop 1 A-1",
			"break 11:10 Break 30 min, 11:10–11:40",
			"stop 2 A-2",
			"break 13:20 Break 20 min, 13:20–13:40",
			"end 14:05 End: 52.52, 13.405",
		},
		"Van 2": {"start 08:00 Start: 52.52, 13.405", "stop 1 A-3", "stop 2 A-4", "stop 3 A-5", "end 09:10 Ends at the last stop (open route)"},
		"Van 3": {"start 09:00 Start: 52.52, 13.405", "stop 1 A-6", "stop 2 A-7", "end 10:30 End: Yard Süd"},
	}
	for ref, want := range tables {
		var got []string
		for _, r := range p.rows(fmt.Sprintf(`section.route[data-vehicle-ref=%q] table.stops tbody tr`, ref)) {
			if r.Data["seq"] != "" {
				got = append(got, "stop "+r.Data["seq"]+" "+r.Cols["order_ref"])
			} else {
				got = append(got, r.Data["kind"]+" "+r.Cols["arrival"]+" "+r.Cols["event"])
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s's table:\n%s\nwant:\n%s", ref, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	meta := func(ref string) string {
		return p.text(fmt.Sprintf(`section.route[data-vehicle-ref=%q] .route-meta`, ref))
	}
	for ref, parts := range map[string][]string{
		"Van 1": {"leaves 07:30, ends 14:05", "3 breaks", "volume_l 600 of 1000, weight_kg 200.5 of 500"},
		"Van 2": {"leaves 08:00, ends at the last stop 09:10", "volume_l 25 of 1000, weight_kg 55 of 500"},
	} {
		m := meta(ref)
		for _, part := range parts {
			if !strings.Contains(m, part) {
				t.Errorf("%s's summary %q lacks %q", ref, m, part)
			}
		}
	}
	checkAxe(t, p)
}
