package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	polyline "github.com/twpayne/go-polyline"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/solver/matrix"
)

// randomText is n characters drawn at random from [lo, hi): text that
// compresses as little as real text in that script can.
func randomText(r *rand.Rand, n int, lo, hi rune) string {
	var b strings.Builder
	for range n {
		b.WriteRune(lo + r.Int32N(hi-lo))
	}
	return b.String()
}

// largestBody is the request whose result document is the largest the
// API stores: 500 orders whose texts the result copies (id, address,
// customer) are at their maximum in random CJK characters, and 100
// vehicles whose id and driver name are too, each of capacity 10, so the
// plan has at least 50 routes.
func largestBody() map[string]any {
	r := rand.New(rand.NewPCG(5, 6))
	orders := make([]map[string]any, 0, 500)
	for i := range 500 {
		orders = append(orders, map[string]any{
			"id":        fmt.Sprintf("%04d", i) + randomText(r, 76, 0x4E00, 0xA000),
			"address":   randomText(r, 300, 0x4E00, 0xA000),
			"customer":  randomText(r, 200, 0x4E00, 0xA000),
			"latitude":  52.40 + float64(i%25)*0.01,
			"longitude": 13.20 + float64(i/25)*0.01,
			"demand":    1,
		})
	}
	vehicles := make([]map[string]any, 0, 100)
	for i := range 100 {
		vehicles = append(vehicles, map[string]any{"id": fmt.Sprintf("%03d", i) + randomText(r, 77, 0x4E00, 0xA000), "driver": randomText(r, 120, 0x4E00, 0xA000), "capacity": 10})
	}
	return map[string]any{
		"name":     "Largest result",
		"depot":    map[string]any{"label": "Depot", "latitude": 52.52, "longitude": 13.405},
		"orders":   orders,
		"vehicles": vehicles,
		"options":  map[string]any{"solver_seconds": 1},
	}
}

// getResult GETs id's result (with polylines when withPath) and decodes it.
func getResult(t *testing.T, s *system, id string, withPath bool) (int, v1alpha1.Result) {
	t.Helper()
	path := "/v1/optimizations/" + id + "/result"
	if withPath {
		path += "?include_path=true"
	}
	status, res, _ := s.call(t, "GET", path, nil, nil)
	var out v1alpha1.Result
	if status == 200 {
		remarshal(t, res, &out)
	}
	return status, out
}

// denseRoad is the road geometry the dense fake OSRM answers for a path, in
// 1e-5 degree units: every consecutive pair of points is joined by a point
// about every half metre, wiggling up to 20 m either side, as a winding
// road drawn at full resolution. It depends on the pair only, so pieces of
// a long path join to the geometry of the whole.
func denseRoad(path [][2]int64) [][2]int64 {
	out := [][2]int64{path[0]}
	for i := 1; i < len(path); i++ {
		a, b := path[i-1], path[i]
		metres := matrix.GreatCircleMetres(matrix.Point{Lat: float64(a[0]) / 1e5, Lon: float64(a[1]) / 1e5}, matrix.Point{Lat: float64(b[0]) / 1e5, Lon: float64(b[1]) / 1e5})
		n := int64(metres*2) + 1
		r := rand.New(rand.NewPCG(uint64(a[0]<<32^a[1]), uint64(b[0]<<32^b[1])))
		for k := int64(1); k < n; k++ {
			out = append(out, [2]int64{a[0] + (b[0]-a[0])*k/n + r.Int64N(41) - 20, a[1] + (b[1]-a[1])*k/n + r.Int64N(41) - 20})
		}
		out = append(out, b)
	}
	return out
}

// units is a coordinate in 1e-5 degrees, polyline's precision.
func units(lat, lon float64) [2]int64 {
	return [2]int64{int64(math.Round(lat * 1e5)), int64(math.Round(lon * 1e5))}
}

// newDenseOSRM is the fake OSRM whose route service answers denseRoad in
// OSRM's route format; table requests go to the plain fake.
func newDenseOSRM(t *testing.T) *httptest.Server {
	plain := newFakeOSRM(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/route/v1/") {
			resp, err := http.Get(plain.URL + r.URL.RequestURI())
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer func() { _ = resp.Body.Close() }()
			w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
			return
		}
		parts := strings.Split(r.URL.Path, "/")
		var path [][2]int64
		for _, c := range strings.Split(parts[len(parts)-1], ";") {
			lon, lat, _ := strings.Cut(c, ",")
			x, _ := strconv.ParseFloat(lon, 64)
			y, _ := strconv.ParseFloat(lat, 64)
			path = append(path, units(y, x))
		}
		road := denseRoad(path)
		coords := make([][]float64, len(road))
		for i, p := range road {
			coords[i] = []float64{float64(p[0]) / 1e5, float64(p[1]) / 1e5}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"code": "Ok",
			"routes": []map[string]any{{
				"geometry": string(polyline.EncodeCoords(coords)), "legs": []any{}, "distance": 1000.0, "duration": 100.0,
				"weight_name": "routability", "weight": 100.0,
			}},
			"waypoints": []any{},
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// resultConfigMaps are the part ConfigMaps of opt that exist.
func resultParts(t *testing.T, opt *v1alpha1.Optimization) []corev1.ConfigMap {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := k8sClient.List(context.Background(), list, client.InNamespace(opt.Namespace), client.MatchingLabels{v1alpha1.OptimizationLabel: opt.Name}); err != nil {
		t.Fatal(err)
	}
	var parts []corev1.ConfigMap
	for _, cm := range list.Items {
		if cm.Name != opt.ResultConfigMapName() && cm.Name != opt.InputConfigMapName() {
			parts = append(parts, cm)
		}
	}
	return parts
}

// TestLargeResult: the largest result a request can produce is stored and
// served, with and without road paths.
func TestLargeResult(t *testing.T) {
	t.Run("the largest result document, straight legs", func(t *testing.T) {
		s := startSystem(t, "inprocess")
		body := largestBody()
		opt := createViaREST(t, s, "large-result-0001", body)
		waitForStateWithin(t, s, opt.Name, v1alpha1.StateCompleted, 3*time.Minute)

		cm := &corev1.ConfigMap{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: opt.ResultConfigMapName()}, cm); err != nil {
			t.Fatal(err)
		}
		t.Logf("stored result: %d bytes; polylines %d bytes", len(cm.BinaryData[v1alpha1.ResultDataKey]), len(cm.BinaryData[v1alpha1.ResultPathsKey]))

		status, bare := getResult(t, s, opt.Name, false)
		if status != 200 {
			t.Fatalf("result: %d", status)
		}
		if len(bare.Routes) < 50 || bare.KPIs.OrdersAssigned != 500 {
			t.Fatalf("%d routes, %d orders assigned; want at least 50 and 500", len(bare.Routes), bare.KPIs.OrdersAssigned)
		}
		addresses := map[string]string{}
		for _, o := range body["orders"].([]map[string]any) {
			addresses[o["id"].(string)] = o["address"].(string)
		}
		for _, r := range bare.Routes {
			if r.Polyline != "" {
				t.Fatal("polyline served without include_path")
			}
			for _, st := range r.Stops {
				if addresses[st.OrderRef] != st.Address {
					t.Fatalf("stop %q: address served differs from the request's", st.OrderRef)
				}
			}
		}
		status, withPath := getResult(t, s, opt.Name, true)
		if status != 200 || len(withPath.Routes) != len(bare.Routes) {
			t.Fatalf("result with path: %d, %d routes", status, len(withPath.Routes))
		}
		for _, r := range withPath.Routes {
			coords, _, err := polyline.DecodeCoords([]byte(r.Polyline))
			if err != nil || len(coords) != len(r.Stops)+2 {
				t.Fatalf("route %q: polyline of %d points for %d stops (%v)", r.VehicleRef, len(coords), len(r.Stops), err)
			}
			for i, st := range r.Stops {
				if units(coords[i+1][0], coords[i+1][1]) != units(st.Latitude, st.Longitude) {
					t.Fatalf("route %q: polyline point %d is not stop %d", r.VehicleRef, i+1, st.Seq)
				}
			}
		}
	})

	t.Run("megabytes of road geometry", func(t *testing.T) {
		providers, err := app.NewProviderOptions("--geocoder=none", "--matrix=osrm", "--osrm-url="+newDenseOSRM(t).URL)
		if err != nil {
			t.Fatal(err)
		}
		s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", Providers: providers}, nil)
		body := map[string]any{
			"depot":   map[string]any{"latitude": 52.52, "longitude": 13.405},
			"orders":  typicalOrders(500),
			"fleet":   map[string]any{"count": 20, "capacity": 60},
			"options": map[string]any{"solver_seconds": 1},
		}
		opt := createViaREST(t, s, "large-result-0002", body)
		waitForStateWithin(t, s, opt.Name, v1alpha1.StateCompleted, 3*time.Minute)

		parts := resultParts(t, opt)
		if len(parts) < 2 {
			t.Fatalf("%d part ConfigMaps, want the geometry split over at least 2", len(parts))
		}
		for _, p := range parts {
			refs := p.OwnerReferences
			if len(refs) != 1 || refs[0].UID != opt.UID || refs[0].Kind != "Optimization" || refs[0].Controller == nil || !*refs[0].Controller || refs[0].BlockOwnerDeletion != nil {
				t.Errorf("part %s: ownerReferences %+v, want the Optimization's, without blockOwnerDeletion", p.Name, refs)
			}
		}

		status, bare := getResult(t, s, opt.Name, false)
		if status != 200 {
			t.Fatalf("result: %d", status)
		}
		for _, r := range bare.Routes {
			if r.Polyline != "" {
				t.Fatal("polyline served without include_path")
			}
		}
		status, withPath := getResult(t, s, opt.Name, true)
		if status != 200 || len(withPath.Routes) != len(bare.Routes) {
			t.Fatalf("result with path: %d, %d routes", status, len(withPath.Routes))
		}
		encoded, points := 0, 0
		for _, r := range withPath.Routes {
			path := [][2]int64{units(52.52, 13.405)}
			for _, st := range r.Stops {
				path = append(path, units(st.Latitude, st.Longitude))
			}
			want := denseRoad(append(path, path[0]))
			coords, _, err := polyline.DecodeCoords([]byte(r.Polyline))
			if err != nil {
				t.Fatal(err)
			}
			if len(coords) != len(want) {
				t.Fatalf("route %q: %d points, the fake drew %d", r.VehicleRef, len(coords), len(want))
			}
			for i, c := range coords {
				if units(c[0], c[1]) != want[i] {
					t.Fatalf("route %q: point %d is %v, the fake drew %v", r.VehicleRef, i, units(c[0], c[1]), want[i])
				}
			}
			encoded += len(r.Polyline)
			points += len(coords)
		}
		t.Logf("%d routes, %d points, %d bytes of encoded polylines in %d parts", len(withPath.Routes), points, encoded, len(parts))
		if encoded < 3_000_000 {
			t.Fatalf("only %d bytes of polylines: the test must store megabytes", encoded)
		}

		// A part of another attempt is refused, never served as a polyline.
		first, second := parts[0], parts[1]
		first.BinaryData[v1alpha1.ResultPartKey] = second.BinaryData[v1alpha1.ResultPartKey]
		if err := k8sClient.Update(context.Background(), &first); err != nil {
			t.Fatal(err)
		}
		if status, _ := getResult(t, s, opt.Name, true); status != 500 {
			t.Errorf("with a mixed part: %d, want 500", status)
		}
		if status, _ := getResult(t, s, opt.Name, false); status != 200 {
			t.Errorf("without include_path, with a mixed part: %d, want 200", status)
		}
	})

	// Results stored before the paths moved out (one gzip JSON with the
	// polylines inside, no manifest) are still served: they live 30 days.
	t.Run("the older stored form", func(t *testing.T) {
		s := startSystem(t, "inprocess")
		opt := createViaREST(t, s, "large-result-0003", map[string]any{
			"depot": map[string]any{"latitude": 52.52, "longitude": 13.405}, "orders": typicalOrders(20),
			"fleet": map[string]any{"count": 2, "capacity": 60}, "options": map[string]any{"solver_seconds": 1},
		})
		waitForStateWithin(t, s, opt.Name, v1alpha1.StateCompleted, time.Minute)
		_, current := getResult(t, s, opt.Name, true)
		old := current
		old.Routes = append([]v1alpha1.Route{}, current.Routes...)
		for i := range old.Routes {
			old.Routes[i].Polyline = "_p~iF~ps|U_ulLnnqC" + strconv.Itoa(i)
		}
		data, err := v1alpha1.EncodeResult(&old)
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: opt.ResultConfigMapName()}, cm); err != nil {
			t.Fatal(err)
		}
		delete(cm.Data, v1alpha1.ResultManifestKey)
		delete(cm.BinaryData, v1alpha1.ResultPathsKey)
		cm.BinaryData[v1alpha1.ResultDataKey] = data
		if err := k8sClient.Update(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
		status, withPath := getResult(t, s, opt.Name, true)
		if status != 200 || len(withPath.Routes) != len(old.Routes) {
			t.Fatalf("result with path: %d, %d routes", status, len(withPath.Routes))
		}
		for i, r := range withPath.Routes {
			if r.Polyline != old.Routes[i].Polyline {
				t.Errorf("route %d: polyline %q, stored %q", i, r.Polyline, old.Routes[i].Polyline)
			}
		}
		status, bare := getResult(t, s, opt.Name, false)
		if status != 200 || len(bare.Routes) != len(old.Routes) || bare.KPIs.OrdersAssigned != old.KPIs.OrdersAssigned {
			t.Fatalf("result: %d %+v", status, bare.KPIs)
		}
		for _, r := range bare.Routes {
			if r.Polyline != "" {
				t.Error("polyline served without include_path")
			}
		}
	})
}

// typicalOrders are n orders with coordinates spread over Berlin, demand 2.
func typicalOrders(n int) []map[string]any {
	out := make([]map[string]any, 0, n)
	for i := range n {
		out = append(out, map[string]any{"id": fmt.Sprintf("o-%d", i), "latitude": 52.40 + float64(i%25)*0.01, "longitude": 13.20 + float64(i/25)*0.01, "demand": 2})
	}
	return out
}
