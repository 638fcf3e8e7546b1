package integration

import (
	"routeopt.io/routeopt/test/requests"

	"context"
	"fmt"
	"math"
	"testing"
	"time"

	polyline "github.com/twpayne/go-polyline"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/solver/store"
)

// startWithProviders starts a system whose solves use the fake Nominatim and OSRM.
func startWithProviders(t *testing.T, nominatim *fakeNominatim, osrm *fakeOSRM) *system {
	t.Helper()
	providers, err := app.NewProviderOptions(
		"--geocoder=nominatim", "--nominatim-url="+nominatim.URL, "--nominatim-rate=1000", "--nominatim-concurrency=8",
		"--matrix=osrm", "--osrm-url="+osrm.URL,
	)
	if err != nil {
		t.Fatal(err)
	}
	return startSystemWith(t, app.RunnerOptions{Kind: "inprocess", Providers: providers}, nil)
}

// addressBody is a request whose depot and orders have addresses only,
// except two orders with coordinates.
func addressBody(orders int, extra ...map[string]any) map[string]any {
	list := []map[string]any{}
	for i := range orders {
		list = append(list, map[string]any{"id": fmt.Sprintf("adr-%d", i), "address": fmt.Sprintf("Teststraße %d", i+1), "city": "Berlin", "postal_code": "10115", "country": "de"})
	}
	list = append(list, extra...)
	return map[string]any{
		"depot":   map[string]any{"address": "Depotweg 1, Berlin"},
		"orders":  list,
		"fleet":   map[string]any{"count": 5, "capacity": 1000},
		"options": map[string]any{"solver_seconds": 1},
	}
}

func TestGeocodingAndRoadMatrix(t *testing.T) {
	nominatim := newFakeNominatim(t, 0)
	osrm := newFakeOSRM(t)
	s := startWithProviders(t, nominatim, osrm)

	body := addressBody(6,
		map[string]any{"id": "lost", "address": "nowhere 0"},
		map[string]any{"id": "rough", "address": "approx 5"},
		map[string]any{"id": "coords", "latitude": 52.52, "longitude": 13.40},
	)
	opt := createViaREST(t, s, "providers-key-0001", body)
	rec := waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	if rec["status"] != "completed" {
		t.Fatalf("record %v", rec)
	}
	_, res, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result?include_path=true", nil, nil)
	var result v1alpha1.Result
	remarshal(t, res, &result)

	if len(result.Unassigned) != 1 || result.Unassigned[0].OrderRef != "lost" || result.Unassigned[0].Reason != "geocode_failed" {
		t.Errorf("unassigned %+v, want only lost as geocode_failed", result.Unassigned)
	}
	approximate := false
	for _, w := range result.Warnings {
		if w.Code == v1alpha1.WarningGeocodeApproximate && w.OrderRef != nil && *w.OrderRef == "rough" {
			approximate = true
		}
	}
	if !approximate {
		t.Errorf("no geocode_approximate warning for rough: %+v", result.Warnings)
	}
	street := map[string]string{}
	for _, o := range body["orders"].([]map[string]any) {
		if a, ok := o["address"].(string); ok {
			street[o["id"].(string)] = a
		}
	}
	placed := 0
	for _, r := range result.Routes {
		for _, st := range r.Stops {
			if st.OrderRef == "coords" {
				continue
			}
			// A stop's address joins the order's fields (docs/API.md, "Stop").
			query, wantAddress := street[st.OrderRef]+" Berlin 10115", street[st.OrderRef]+", 10115 Berlin, de"
			if st.OrderRef == "rough" {
				query, wantAddress = street[st.OrderRef], street[st.OrderRef]
			}
			if st.Address != wantAddress {
				t.Errorf("%s address %q, want %q", st.OrderRef, st.Address, wantAddress)
			}
			lat, lon := fakePosition(query)
			if math.Abs(lat-st.Latitude) > 1e-6 || math.Abs(lon-st.Longitude) > 1e-6 {
				t.Errorf("%s at %v,%v, the geocoder placed it at %v,%v", st.OrderRef, st.Latitude, st.Longitude, lat, lon)
			}
			placed++
		}
		// Road geometry: OSRM's route has a midpoint between consecutive stops.
		coords, _, err := polyline.DecodeCoords([]byte(r.Polyline))
		if err != nil {
			t.Fatal(err)
		}
		if want := 2*(len(r.Stops)+2) - 1; len(coords) != want {
			t.Errorf("%s: polyline has %d points, want the road geometry's %d", r.VehicleRef, len(coords), want)
		}
	}
	if placed != 7 { // 6 street addresses and the approximate one
		t.Errorf("%d geocoded orders planned, want 7", placed)
	}
	if osrm.requests.Load() == 0 {
		t.Error("OSRM was never asked")
	}

	// The tenant's cache answers the same addresses next time.
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: store.GeocodeCacheConfigMap}, cm); err != nil {
		t.Fatalf("no geocoding cache: %v", err)
	}
	if len(cm.Data) != 9 { // depot, 6 streets, approx and the not-found one
		t.Errorf("cache holds %d entries, want 9", len(cm.Data))
	}
	// The solve left its answers in its own ConfigMap (it may write no
	// other); the controller moved them into the tenant's cache.
	own := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: opt.ResultConfigMapName()}, own); err != nil {
		t.Fatal(err)
	}
	if _, left := own.Data[store.PendingGeocodesKey]; left {
		t.Errorf("the merged answers are still in %s", own.Name)
	}
	asked := nominatim.requests.Load()
	again := createViaREST(t, s, "providers-key-0002", body)
	waitForState(t, s, again.Name, v1alpha1.StateCompleted)
	if n := nominatim.requests.Load() - asked; n != 0 {
		t.Errorf("the second identical optimization asked Nominatim %d times, want 0", n)
	}
}

func TestProviderFailures(t *testing.T) {
	t.Run("geocoder down", func(t *testing.T) {
		nominatim := newFakeNominatim(t, 0)
		nominatim.down.Store(true)
		s := startWithProviders(t, nominatim, newFakeOSRM(t))
		opt := createViaREST(t, s, "geocoder-down-key1", addressBody(3))
		rec := waitForState(t, s, opt.Name, v1alpha1.StateFailed)
		if rec["error_code"] != v1alpha1.ErrorGeocodingUnavailable || rec["error_message"] == "" {
			t.Errorf("record %v", rec)
		}
	})
	t.Run("matrix down", func(t *testing.T) {
		osrm := newFakeOSRM(t)
		osrm.down.Store(true)
		s := startWithProviders(t, newFakeNominatim(t, 0), osrm)
		opt := createViaREST(t, s, "matrix-down-key-01", requests.TenOrders(1))
		rec := waitForState(t, s, opt.Name, v1alpha1.StateFailed)
		if rec["error_code"] != v1alpha1.ErrorMatrixUnavailable || rec["error_message"] == "" {
			t.Errorf("record %v", rec)
		}
	})
}

// Geocoding 500 address-only orders, then the same again: the second run's
// geocoding stage is served by the tenant cache. The stage durations (from
// the pipeline's own histogram) are logged for docs/PERFORMANCE.md; the test
// asserts only that Nominatim is not asked again.
func TestGeocodeCache500(t *testing.T) {
	if testing.Short() || raceEnabled {
		// Two 500-order solves outlast the wait under the race detector;
		// the geocoding cache's concurrency is in the smaller tests.
		t.Skip("500-order geocoding run")
	}
	nominatim := newFakeNominatim(t, 2*time.Millisecond)
	s := startWithProviders(t, nominatim, newFakeOSRM(t))
	body := addressBody(500)
	body["fleet"] = map[string]any{"count": 20, "capacity": 1000}
	var durations []float64
	for i, key := range []string{"geocode-500-key-01", "geocode-500-key-02"} {
		before := geocodingSeconds(t)
		opt := createViaREST(t, s, key, body)
		waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
		d := geocodingSeconds(t) - before
		durations = append(durations, d)
		t.Logf("run %d: geocoding stage %.4f s, Nominatim requests so far %d", i+1, d, nominatim.requests.Load())
	}
	if nominatim.requests.Load() != 501 {
		t.Errorf("Nominatim asked %d times over two runs, want 501 (the first run only)", nominatim.requests.Load())
	}
	if durations[1] > 0 {
		t.Logf("first/second geocoding stage: %.0fx", durations[0]/durations[1])
	}
}

// geocodingSeconds is the total time spent in geocoding stages so far.
func geocodingSeconds(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "routeopt_stage_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == string(v1alpha1.StageGeocoding) {
					return m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return 0
}
