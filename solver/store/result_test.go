package store

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	polyline "github.com/twpayne/go-polyline"

	"routeopt.io/routeopt/api/v1alpha1"
)

// randomText is n characters drawn from [lo, hi): text gzip cannot shrink
// much, unlike repeated characters.
func randomText(r *rand.Rand, n int, lo, hi rune) string {
	var b strings.Builder
	for range n {
		b.WriteRune(lo + r.Int32N(hi-lo))
	}
	return b.String()
}

// largestResult is the largest result the REST API allows: 500 stops over 100
// routes, every text the result copies from the request (order id 80,
// address 300, customer 200, vehicle id 80, driver 120 characters) at its
// maximum, drawn from [lo, hi), and a straight-leg polyline per route.
func largestResult(lo, hi rune) *v1alpha1.Result {
	r := rand.New(rand.NewPCG(1, 2))
	res := &v1alpha1.Result{ID: "7d9f0b8e-2f5c-4a51-9a63-0d8c1f1f6e21", Status: v1alpha1.StateCompleted, Strategy: v1alpha1.StrategyOptimized, Unassigned: []v1alpha1.Unassigned{}, Warnings: []v1alpha1.Warning{}}
	for v := range 100 {
		driver := randomText(r, 120, lo, hi)
		route := v1alpha1.Route{VehicleRef: randomText(r, 80, lo, hi), DriverName: &driver, DepartS: 28800, ReturnS: 64799, DistanceM: 123456, Load: 59.5, Capacity: 60}
		coords := [][]float64{{52.52, 13.405}}
		for s := range 5 {
			customer, start, end := randomText(r, 200, lo, hi), "09:00", "17:30"
			lat, lon := 52.4+r.Float64()/3, 13.2+r.Float64()/2
			coords = append(coords, []float64{lat, lon})
			route.Stops = append(route.Stops, v1alpha1.Stop{
				Seq: s + 1, OrderRef: randomText(r, 80, lo, hi), Address: randomText(r, 300, lo, hi), Latitude: lat, Longitude: lon,
				ArrivalS: 30000 + v*s, StartS: 30001 + v*s, DepartS: 31000 + v*s, WaitS: 1, LateS: 2, LegDistanceM: 12345, LegTravelS: 1234,
				Customer: &customer, TimeWindowStart: &start, TimeWindowEnd: &end,
			})
		}
		route.Polyline = string(polyline.EncodeCoords(append(coords, coords[0])))
		res.Routes = append(res.Routes, route)
		res.KPIs.PerVehicle = append(res.KPIs.PerVehicle, v1alpha1.VehicleKPI{VehicleRef: route.VehicleRef, Stops: 5, DistanceM: 123456, Load: 59.5, Capacity: 60})
	}
	return res
}

// The largest result fits the result ConfigMap. Realistic text (two- and
// three-byte scripts) leaves a wide margin; random characters of the
// supplementary planes (which gzip cannot shrink) nearly fill it, so beside
// other keys the document moves to a part and is still stored.
func TestLargestResultIsStored(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lo, hi   rune
		other    int
		maxShare float64 // of ResultConfigMapBudget, for the result document
		inline   bool
	}{
		{"Latin-1 and Cyrillic, random", 0x80, 0x800, 0, 0.6, true},
		{"CJK, random", 0x4E00, 0xA000, 0, 0.75, true},
		{"CJK, random, beside 200 kB of geocoding answers", 0x4E00, 0xA000, 200_000, 0.75, true},
		{"supplementary planes, random", 0x10000, 0x10FFFF, 0, 0.99, true},
		{"supplementary planes, random, beside 200 kB of geocoding answers", 0x10000, 0x10FFFF, 200_000, 0.99, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := largestResult(tc.lo, tc.hi)
			plan, err := planResult(r, tc.other)
			if err != nil {
				t.Fatal(err)
			}
			doc := plan.manifest.Result
			t.Logf("result document %d bytes (%.0f%% of a ConfigMap), polylines %d bytes, parts %d", doc.Bytes, 100*float64(doc.Bytes)/v1alpha1.ResultConfigMapBudget, plan.manifest.Paths.Bytes, len(plan.parts))
			if share := float64(doc.Bytes) / v1alpha1.ResultConfigMapBudget; share > tc.maxShare {
				t.Errorf("result document takes %.2f of a ConfigMap, want at most %.2f", share, tc.maxShare)
			}
			if got := doc.Key != ""; got != tc.inline {
				t.Errorf("inline %v, want %v", got, tc.inline)
			}
			if plan.manifest.Paths.Key == "" {
				t.Errorf("straight-leg polylines are in parts: %+v", plan.manifest.Paths)
			}
			checkPlan(t, plan, tc.other)
		})
	}
}

// checkPlan checks that every ConfigMap of plan stays within the budget and
// that the manifest's blobs join back.
func checkPlan(t *testing.T, plan *resultPlan, other int) {
	t.Helper()
	size := other + len(v1alpha1.ResultManifestKey) + manifestReserve
	for k, v := range plan.inline {
		if v != nil {
			size += len(k) + len(v)
		}
	}
	if size > v1alpha1.ResultConfigMapBudget {
		t.Errorf("result ConfigMap holds %d bytes", size)
	}
	for i, p := range plan.parts {
		if len(v1alpha1.ResultPartKey)+len(p) > v1alpha1.ResultConfigMapBudget {
			t.Errorf("part %d holds %d bytes", i+1, len(p))
		}
	}
	blobs := []v1alpha1.StoredBlob{plan.manifest.Result}
	if plan.manifest.Paths != nil {
		blobs = append(blobs, *plan.manifest.Paths)
	}
	for _, b := range blobs {
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		var pieces [][]byte
		if b.Key != "" {
			pieces = [][]byte{plan.inline[b.Key]}
		}
		for _, i := range b.PartIndexes() {
			pieces = append(pieces, plan.parts[i-1])
		}
		if _, err := b.Join(pieces); err != nil {
			t.Fatal(err)
		}
	}
}

// randomPolyline is an encoded polyline of n points a few metres apart
// in random directions: dense road geometry that gzip cannot shrink much.
func randomPolyline(r *rand.Rand, n int) string {
	coords := make([][]float64, n)
	lat, lon := 52.52, 13.405
	for i := range coords {
		lat += (r.Float64() - 0.5) / 5000
		lon += (r.Float64() - 0.5) / 5000
		coords[i] = []float64{lat, lon}
	}
	return string(polyline.EncodeCoords(coords))
}

// Polylines go inline while they fit, into parts when not, and become
// straight legs with a warning past the part bound (lowered here: ten
// parts of dense geometry take seconds to make).
func TestPlanResultPlacesPolylines(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name          string
		points        int // per route, 10 routes
		inline        bool
		parts         int
		maxParts      int
		straightLegs  bool
		warningsAdded int
	}{
		{"small, inline", 1_000, true, 0, 10, false, 0},
		{"several MB, in parts", 300_000, false, 4, 10, false, 0},
		{"past the part bound, straight legs", 300_000, true, 0, 3, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(n int) { maxParts = n }(maxParts)
			maxParts = tc.maxParts
			res := largestResult('a', 'z'+1)
			res.Routes = res.Routes[:10]
			want := make([]string, len(res.Routes))
			for i := range res.Routes {
				res.Routes[i].Polyline = randomPolyline(r, tc.points)
				want[i] = res.Routes[i].Polyline
			}
			plan, err := planResult(res, 0)
			if err != nil {
				t.Fatal(err)
			}
			checkPlan(t, plan, 0)
			paths := plan.manifest.Paths
			if got := paths.Key != ""; got != tc.inline || paths.Parts != tc.parts {
				t.Fatalf("polylines inline %v in %d parts, want inline %v in %d", got, paths.Parts, tc.inline, tc.parts)
			}
			if len(res.Warnings) != tc.warningsAdded {
				t.Errorf("warnings %v", res.Warnings)
			}
			var pieces [][]byte
			if paths.Key != "" {
				pieces = [][]byte{plan.inline[paths.Key]}
			}
			for _, i := range paths.PartIndexes() {
				pieces = append(pieces, plan.parts[i-1])
			}
			blob, err := paths.Join(pieces)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v1alpha1.DecodePaths(blob)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := v1alpha1.DecodeResult(plan.inline[v1alpha1.ResultDataKey])
			if err != nil {
				t.Fatal(err)
			}
			for i, route := range doc.Routes {
				if route.Polyline != "" {
					t.Fatalf("route %d: the result document holds a polyline", i)
				}
				if tc.straightLegs {
					want[i] = straightLegs(want[i], route.Stops)
				}
				if got[i] != want[i] {
					t.Fatalf("route %d: polyline differs", i)
				}
			}
			if tc.straightLegs && (len(doc.Warnings) != 1 || doc.Warnings[0].Code != v1alpha1.WarningGeometryUnavailable) {
				t.Errorf("stored warnings %v, want geometry_unavailable", doc.Warnings)
			}
		})
	}
}

// Straight legs start and end at the road geometry's first point (the
// depot) and pass the stops in order.
func TestStraightLegs(t *testing.T) {
	road := string(polyline.EncodeCoords([][]float64{{52.5, 13.4}, {52.51, 13.41}, {52.6, 13.5}, {52.5, 13.4}}))
	stops := []v1alpha1.Stop{{Latitude: 52.6, Longitude: 13.5}, {Latitude: 52.7, Longitude: 13.6}}
	got, _, err := polyline.DecodeCoords([]byte(straightLegs(road, stops)))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{52.5, 13.4}, {52.6, 13.5}, {52.7, 13.6}, {52.5, 13.4}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i][0] != want[i][0] || got[i][1] != want[i][1] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if straightLegs("", stops) != "" {
		t.Error("a route without geometry got straight legs")
	}
}

// A route that says where it starts and ends gets straight legs from its
// start to its end, or to its last stop when it is open.
func TestRouteStraightLegs(t *testing.T) {
	road := string(polyline.EncodeCoords([][]float64{{52.5, 13.4}, {52.51, 13.41}, {52.6, 13.5}, {52.5, 13.4}}))
	stops := []v1alpha1.Stop{{Latitude: 52.6, Longitude: 13.5}, {Latitude: 52.7, Longitude: 13.6}}
	home, yard := &v1alpha1.Place{Latitude: 52.8, Longitude: 13.7}, &v1alpha1.Place{Latitude: 52.9, Longitude: 13.8}
	for _, tc := range []struct {
		name  string
		route v1alpha1.Route
		want  [][]float64
	}{
		{"at the depot", v1alpha1.Route{Stops: stops}, [][]float64{{52.5, 13.4}, {52.6, 13.5}, {52.7, 13.6}, {52.5, 13.4}}},
		{"from home to the yard", v1alpha1.Route{Stops: stops, Start: home, End: v1alpha1.RouteEnd{At: yard}}, [][]float64{{52.8, 13.7}, {52.6, 13.5}, {52.7, 13.6}, {52.9, 13.8}}},
		{"open", v1alpha1.Route{Stops: stops, Start: home, End: v1alpha1.RouteEnd{Open: true}}, [][]float64{{52.8, 13.7}, {52.6, 13.5}, {52.7, 13.6}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := polyline.DecodeCoords([]byte(routeStraightLegs(road, &tc.route)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if math.Abs(got[i][0]-tc.want[i][0]) > 1e-9 || math.Abs(got[i][1]-tc.want[i][1]) > 1e-9 {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
			if routeStraightLegs("", &tc.route) != "" {
				t.Error("a route without geometry got straight legs")
			}
		})
	}
}
