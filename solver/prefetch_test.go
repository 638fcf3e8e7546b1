package solver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/store"
)

// TestTicketCountsTheSolvesRequests: every request the solve's geocoder
// sends counts its ticket down, so the budget's backlog shrinks with it.
func TestTicketCountsTheSolvesRequests(t *testing.T) {
	b := &geobudget.Budget{Rate: 1}
	ticket, err := b.Admit(3)
	if err != nil {
		t.Fatal(err)
	}
	p := (&Pipeline{Geocoder: geocode.None{}}).counting(ticket)
	for range 2 {
		_, _, _ = p.Geocoder.Geocode(context.Background(), geocode.Query{Address: "x"})
	}
	if got := b.Waiting(); got != 1 {
		t.Errorf("after 2 of 3 requests %d waiting, want 1", got)
	}
	if q := (&Pipeline{}).counting(ticket); q.Geocoder != nil {
		t.Errorf("a pipeline without a geocoder got %T", q.Geocoder)
	}
}

// TestAdmitGeocodingCountsNewAddresses: only distinct addresses that are
// neither fresh in the tenant's cache nor among the solve's pending
// answers count; with coordinates everywhere nothing is read.
func TestAdmitGeocodingCountsNewAddresses(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	now := time.Now()
	entry := func(age time.Duration) string {
		b, _ := json.Marshal(geocode.Entry{Result: geocode.Result{Lat: 52.5, Lon: 13.4}, Found: true, Stored: now.Add(-age)})
		return string(b)
	}
	ns := "tenant-a"
	key := func(addr string) string { // the ConfigMap key of an address's answer
		sum := sha256.Sum256([]byte(geocode.CacheKey(ns, geocode.Query{Address: addr})))
		return hex.EncodeToString(sum[:16])
	}
	order := func(id, addr string) v1alpha1.Order { return v1alpha1.Order{ID: id, Address: ptr.To(addr)} }
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Name: "opt", Namespace: ns}, Spec: v1alpha1.OptimizationSpec{
		Depot: v1alpha1.Depot{Address: ptr.To("Depot 1")},
		Orders: []v1alpha1.Order{
			order("cached", "Cached 1"), order("expired", "Expired 1"), order("pending", "Pending 1"),
			order("new", "New 1"), order("same", "new 1"), // same cache key as "new"
			{ID: "coords", Address: ptr.To("Somewhere 1"), Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)},
		},
	}}
	pendingRaw, _ := json.Marshal(map[string]geocode.Entry{key("Pending 1"): {Found: true, Stored: now}})
	cache := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: store.GeocodeCacheConfigMap, Namespace: ns},
		Data: map[string]string{key("Cached 1"): entry(time.Hour), key("Expired 1"): entry(40 * 24 * time.Hour)}}
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: opt.ResultConfigMapName(), Namespace: ns},
		Data: map[string]string{store.PendingGeocodesKey: string(pendingRaw)}}
	withCoords := opt.DeepCopy()
	withCoords.Name = "coords"
	withCoords.Spec.Depot = v1alpha1.Depot{Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}
	withCoords.Spec.Orders = withCoords.Spec.Orders[5:]
	// Vehicles' starts and ends are geocoded with the orders.
	withEnds := withCoords.DeepCopy()
	withEnds.Name = "ends"
	withEnds.Spec.Vehicles = []v1alpha1.Vehicle{
		{ID: "a", VehicleConstraints: v1alpha1.VehicleConstraints{Start: &v1alpha1.Location{Address: ptr.To("Home 1")}, End: &v1alpha1.Location{Address: ptr.To("home 1")}}},
		{ID: "b", VehicleConstraints: v1alpha1.VehicleConstraints{Start: &v1alpha1.Location{Address: ptr.To("Yard 1"), Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}, End: &v1alpha1.Location{Address: ptr.To("Cached 1")}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(opt, withCoords, withEnds, cache, own).Build()

	for _, tc := range []struct {
		name     string
		opt      *v1alpha1.Optimization
		geocoder geocode.Geocoder
		want     int // -1: no ticket
	}{
		{"depot, expired and new count once each", opt, geocode.Prefetched{}, 3},
		{"coordinates everywhere", withCoords, geocode.Prefetched{}, -1},
		{"a vehicle's start and end by the same new address count once", withEnds, geocode.Prefetched{}, 1},
		{"no geocoder", opt, nil, -1},
		{"geocoder none", opt, geocode.None{}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pipeline{Client: c, Geocoder: tc.geocoder}
			b := &geobudget.Budget{Rate: 1}
			ticket, err := p.AdmitGeocoding(ctx, client.ObjectKeyFromObject(tc.opt), b)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want < 0 && ticket != nil:
				t.Errorf("ticket for %d addresses, want none", ticket.Addresses)
			case tc.want >= 0 && (ticket == nil || ticket.Addresses != tc.want):
				t.Errorf("ticket %+v, want %d addresses", ticket, tc.want)
			}
		})
	}
}

func TestNeedsGeocoding(t *testing.T) {
	at := v1alpha1.Depot{Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}
	placed := v1alpha1.Order{ID: "a", Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}
	for _, tc := range []struct {
		name string
		spec v1alpha1.OptimizationSpec
		want bool
	}{
		{"all placed", v1alpha1.OptimizationSpec{Depot: at, Orders: []v1alpha1.Order{placed}}, false},
		{"depot by address", v1alpha1.OptimizationSpec{Depot: v1alpha1.Depot{Address: ptr.To("x")}, Orders: []v1alpha1.Order{placed}}, true},
		{"an order by address", v1alpha1.OptimizationSpec{Depot: at, Orders: []v1alpha1.Order{placed, {ID: "b", Address: ptr.To("y")}}}, true},
		{"latitude only", v1alpha1.OptimizationSpec{Depot: at, Orders: []v1alpha1.Order{{ID: "c", Latitude: ptr.To(1.0)}}}, true},
		{"a vehicle's start by coordinates", v1alpha1.OptimizationSpec{Depot: at, Orders: []v1alpha1.Order{placed}, Vehicles: []v1alpha1.Vehicle{
			{ID: "v", VehicleConstraints: v1alpha1.VehicleConstraints{Start: &v1alpha1.Location{Latitude: ptr.To(52.6), Longitude: ptr.To(13.5)}}},
		}}, false},
		{"a vehicle's end by address", v1alpha1.OptimizationSpec{Depot: at, Orders: []v1alpha1.Order{placed}, Vehicles: []v1alpha1.Vehicle{
			{ID: "v", VehicleConstraints: v1alpha1.VehicleConstraints{End: &v1alpha1.Location{Address: ptr.To("Yard 1")}}},
		}}, true},
		{"the fleet's start by address", v1alpha1.OptimizationSpec{Depot: at, Orders: []v1alpha1.Order{placed}, Fleet: &v1alpha1.Fleet{Count: 2, VehicleConstraints: v1alpha1.VehicleConstraints{
			Start: &v1alpha1.Location{Address: ptr.To("Home 1")},
		}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsGeocoding(&tc.spec); got != tc.want {
				t.Errorf("NeedsGeocoding = %v, want %v", got, tc.want)
			}
		})
	}
}
