package solver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// TestSolvePhases checks that a solve reports the stages in their documented
// order (docs/API.md, "Stages")
// with rising progress, so a record never shows progress going backwards.
func TestSolvePhases(t *testing.T) {
	var stages []v1alpha1.Stage
	last := int32(0)
	for _, ph := range solvePhases {
		stages = append(stages, ph.stage)
		if ph.progress <= last || ph.progress >= store.ProgressDone {
			t.Errorf("stage %s starts at progress %d, after %d and below %d", ph.stage, ph.progress, last, store.ProgressDone)
		}
		last = ph.progress
	}
	want := []v1alpha1.Stage{v1alpha1.StageGeocoding, v1alpha1.StageMatrix, v1alpha1.StageOptimizing, v1alpha1.StageStoring}
	if !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}
}

// TestOptimizingProgress checks that the solver's fraction maps into the
// optimizing range, short of the storing stage's progress.
func TestOptimizingProgress(t *testing.T) {
	tests := map[float64]int32{0: progressOptimizing, 0.5: progressOptimizing + 37, 1: progressStoring - 1}
	for fraction, want := range tests {
		r := &progressReporter{latest: make(chan int32, 1)}
		r.observe(fraction)
		r.observe(fraction) // a second value replaces the first, never blocks
		if got := <-r.latest; got != want {
			t.Errorf("observe(%v) reports %d, want %d", fraction, got, want)
		}
	}
}

// addressBook is a geocoder that knows a few addresses: "Rough" ones are
// approximate, "Refused" is refused, "Down" cannot be asked.
type addressBook map[string]geocode.Result

func (b addressBook) Geocode(_ context.Context, q geocode.Query) (geocode.Result, bool, error) {
	switch q.Address {
	case "Refused 1":
		return geocode.Result{}, false, &geocode.StatusError{StatusCode: 400, Message: "bad query"}
	case "Down 1":
		return geocode.Result{}, false, fmt.Errorf("%w: connection refused", geocode.ErrUnavailable)
	}
	r, ok := b[q.Address]
	return r, ok, nil
}

// TestGeocodeEnds checks that the vehicles' starts and ends given by
// address are placed with the orders, and that one that cannot be placed
// fails the solve naming the vehicle and which end it is.
func TestGeocodeEnds(t *testing.T) {
	book := addressBook{
		"Home 1":  {Lat: 52.6, Lon: 13.5},
		"Rough 1": {Lat: 52.7, Lon: 13.6, Approximate: true},
		"Order 1": {Lat: 52.51, Lon: 13.41},
	}
	address := func(a string) *v1alpha1.Location { return &v1alpha1.Location{Address: ptr.To(a)} }
	depot := v1alpha1.Depot{Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}
	orders := []v1alpha1.Order{
		{ID: "a", Address: ptr.To("Order 1")},
		{ID: "lost", Address: ptr.To("Nowhere 1")},
		{ID: "b", Latitude: ptr.To(52.52), Longitude: ptr.To(13.42)},
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	tests := map[string]struct {
		geocoder     geocode.Geocoder
		vehicles     []v1alpha1.Vehicle
		fleet        *v1alpha1.Fleet
		wantCode     string
		wantSays     []string
		wantPoints   []matrix.Point // after the depot and the two located orders
		wantEnds     [][2]int       // start and end point of each vehicle
		wantWarnings []string
	}{
		"addresses and coordinates, the same place once": {
			geocoder: book,
			vehicles: []v1alpha1.Vehicle{
				{ID: "v1", VehicleConstraints: v1alpha1.VehicleConstraints{Start: address("Home 1"), End: address("Rough 1")}},
				{ID: "v2", VehicleConstraints: v1alpha1.VehicleConstraints{Start: &v1alpha1.Location{Latitude: ptr.To(52.6), Longitude: ptr.To(13.5)}}},
			},
			wantPoints:   []matrix.Point{{Lat: 52.6, Lon: 13.5}, {Lat: 52.7, Lon: 13.6}},
			wantEnds:     [][2]int{{3, 4}, {3, 0}},
			wantWarnings: []string{`geocode_approximate: the end address "Rough 1" of vehicle "v1" was placed approximately`},
		},
		"the fleet's start": {
			geocoder:   book,
			fleet:      &v1alpha1.Fleet{Count: 2, Capacity: 1, VehicleConstraints: v1alpha1.VehicleConstraints{Start: address("Home 1")}},
			wantPoints: []matrix.Point{{Lat: 52.6, Lon: 13.5}},
			wantEnds:   [][2]int{{3, 0}, {3, 0}},
		},
		"not found and refused, each named": {
			geocoder: book,
			vehicles: []v1alpha1.Vehicle{
				{ID: "v1", VehicleConstraints: v1alpha1.VehicleConstraints{Start: address("Home 1"), End: address("Nowhere 1")}},
				{ID: "v2", VehicleConstraints: v1alpha1.VehicleConstraints{Start: address("Refused 1")}},
			},
			wantCode: v1alpha1.ErrorInvalidInput,
			wantSays: []string{`vehicle "v1": its end address "Nowhere 1" was not found`, `vehicle "v2": geocoding its start address "Refused 1" failed: HTTP 400: bad query`},
		},
		"the fleet's end without a geocoder": {
			geocoder: geocode.None{},
			fleet:    &v1alpha1.Fleet{Count: 1, Capacity: 1, VehicleConstraints: v1alpha1.VehicleConstraints{End: address("Home 1")}},
			wantCode: v1alpha1.ErrorInvalidInput,
			wantSays: []string{`the fleet: its end address "Home 1" cannot be placed: no geocoder is configured`},
		},
		"the geocoder cannot be reached": {
			geocoder: book,
			vehicles: []v1alpha1.Vehicle{{ID: "v1", VehicleConstraints: v1alpha1.VehicleConstraints{Start: address("Down 1")}}},
			wantCode: v1alpha1.ErrorGeocodingUnavailable,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := v1alpha1.OptimizationSpec{Depot: depot, Orders: orders, Vehicles: tc.vehicles, Fleet: tc.fleet}
			opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Name: "opt", Namespace: "tenant"}, Spec: spec}
			s := &scope{p: &Pipeline{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(opt).Build()}, opt: opt}
			in := &plan.Located{}
			ends, err := s.geocodeEnds(context.Background(), tc.geocoder, nil, in)
			if tc.wantCode != "" {
				f := record.AsFailure(err)
				if err == nil || f.Code != tc.wantCode {
					t.Fatalf("error %v, want code %s", err, tc.wantCode)
				}
				for _, say := range tc.wantSays {
					if !strings.Contains(f.Message, say) {
						t.Errorf("message %q does not say %q", f.Message, say)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ends) == 0 {
				t.Fatal("no end placed")
			}
			// The whole phase: the not-found order is dropped, the ends come after the two others.
			s.p.Geocoder = tc.geocoder
			if err := s.geocode(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := s.located
			if !slices.Equal(got.Orders, []int{0, 2}) || !slices.Equal(got.Points[3:], tc.wantPoints) {
				t.Errorf("orders %v, extra points %v; want [0 2] and %v", got.Orders, got.Points[3:], tc.wantPoints)
			}
			var gotEnds [][2]int
			for _, e := range got.Ends {
				gotEnds = append(gotEnds, [2]int{e.Start.Point, e.End.Point})
			}
			if !slices.Equal(gotEnds, tc.wantEnds) {
				t.Errorf("ends at points %v, want %v", gotEnds, tc.wantEnds)
			}
			var warned []string
			for _, w := range got.Warnings {
				warned = append(warned, w.Code+": "+w.Message)
			}
			if !slices.Equal(warned, tc.wantWarnings) {
				t.Errorf("warnings %q, want %q", warned, tc.wantWarnings)
			}
		})
	}
}
