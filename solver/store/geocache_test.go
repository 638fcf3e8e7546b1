package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
)

func TestPruneGeocodeCache(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	entry := func(age time.Duration) string {
		b, _ := json.Marshal(geocode.Entry{Result: geocode.Result{Lat: 1, Lon: 2}, Found: true, Stored: now.Add(-age)})
		return string(b)
	}
	data := map[string]string{
		"fresh":   entry(time.Hour),
		"expired": entry(31 * 24 * time.Hour),
		"garbage": "not json",
		"updated": entry(2 * time.Hour),
	}
	added := map[string]geocode.Entry{
		"new":     {Found: false, Stored: now},
		"updated": {Result: geocode.Result{Lat: 3, Lon: 4}, Found: true, Stored: now},
	}
	got := prune(data, added, 30*24*time.Hour, now)
	for _, want := range []string{"fresh", "new", "updated"} {
		if _, ok := got[want]; !ok {
			t.Errorf("%s dropped", want)
		}
	}
	for _, gone := range []string{"expired", "garbage"} {
		if _, ok := got[gone]; ok {
			t.Errorf("%s kept", gone)
		}
	}
	if !strings.Contains(got["updated"], `"lat":3`) {
		t.Errorf("updated entry not replaced: %s", got["updated"])
	}
}

func TestPruneGeocodeCacheKeepsNewestWithinSize(t *testing.T) {
	now := time.Now()
	added := map[string]geocode.Entry{}
	for i := range 20000 {
		added[strings.Repeat("k", 20)+string(rune('a'+i%26))+time.Duration(i).String()] = geocode.Entry{Found: true, Stored: now.Add(-time.Duration(i) * time.Second)}
	}
	got := prune(nil, added, 30*24*time.Hour, now)
	size := 0
	for k, v := range got {
		size += len(k) + len(v)
	}
	if size > geocodeCacheMaxBytes || len(got) == 0 || len(got) == len(added) {
		t.Fatalf("kept %d of %d entries, %d bytes (bound %d)", len(got), len(added), size, geocodeCacheMaxBytes)
	}
	newest := strings.Repeat("k", 20) + "a" + time.Duration(0).String()
	if _, ok := got[newest]; !ok {
		t.Error("the newest entry was dropped")
	}
}

// newSolveConfigMap is a fake API server holding the empty result
// ConfigMap of opt, a solve in tenant-a.
func newSolveConfigMap() (client.Client, *v1alpha1.Optimization, *corev1.ConfigMap) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Name: "opt", Namespace: "tenant-a"}}
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: opt.ResultConfigMapName(), Namespace: opt.Namespace}}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(own).Build(), opt, own
}

// A retried solve pod finds the answers its first attempt kept in the
// solve's own ConfigMap; the controller's merge moves them into the
// tenant's cache and out of the solve's ConfigMap, and repeating it is
// harmless.
func TestGeocodeAnswersGoThroughTheSolvesConfigMap(t *testing.T) {
	ctx := context.Background()
	c, opt, own := newSolveConfigMap()
	now := time.Now()
	found := geocode.Entry{Result: geocode.Result{Lat: 52.5, Lon: 13.4}, Found: true, Stored: now}

	first, err := LoadGeocodeCache(ctx, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	_ = first.Put(ctx, "main street 1", found)
	if err := first.save(ctx); err != nil {
		t.Fatal(err)
	}
	retried, err := LoadGeocodeCache(ctx, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := retried.Get(ctx, "main street 1"); !ok || e.Result.Lat != 52.5 {
		t.Fatalf("the retried attempt did not find the first one's answer: %+v %v", e, ok)
	}

	for range 2 {
		if err := MergeGeocodeCache(ctx, c, opt, 0, now); err != nil {
			t.Fatal(err)
		}
	}
	cache := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: GeocodeCacheConfigMap}, cache); err != nil {
		t.Fatal(err)
	}
	if _, ok := cache.Data[cacheKeyHash("main street 1")]; !ok || len(cache.Data) != 1 {
		t.Errorf("tenant cache %v", cache.Data)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(own), own); err != nil {
		t.Fatal(err)
	}
	if _, left := own.Data[PendingGeocodesKey]; left {
		t.Error("the merged answers are still in the solve's ConfigMap")
	}
}

// The answers reach the solve's ConfigMap while geocoding goes on (every
// `every` answers), and the last ones when it stops, even after a cancel.
func TestGeocodeAnswersAreWrittenAsTheyCome(t *testing.T) {
	c, opt, own := newSolveConfigMap()
	written := func() int {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(own), cm); err != nil {
			t.Fatal(err)
		}
		return len(pendingGeocodes(cm))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cache, err := LoadGeocodeCache(ctx, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	stop := cache.keepSaving(ctx, 5, time.Hour)
	for i := range 7 {
		_ = cache.Put(ctx, fmt.Sprintf("street %d", i), geocode.Entry{Found: true, Stored: time.Now()})
	}
	deadline := time.Now().Add(10 * time.Second)
	for written() < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d answers written while geocoding, want at least 5", written())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	stop()
	if n := written(); n != 7 {
		t.Fatalf("%d answers written after stop, want 7", n)
	}
	retried, err := LoadGeocodeCache(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := retried.Get(context.Background(), "street 6"); !ok {
		t.Fatal("a retried solve does not find the last answer")
	}
}

// A refusal goes through the solve's ConfigMap to a retried attempt (or the
// solve Job) and is removed by the merge without reaching the tenant's
// cache, also when the solve found no answer at all.
func TestGeocodeRefusalsGoThroughTheSolvesConfigMap(t *testing.T) {
	ctx := context.Background()
	c, opt, own := newSolveConfigMap()

	first, err := LoadGeocodeCache(ctx, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	first.Refuse("bad query", "nominatim: HTTP 400: Nothing to search for.")
	if err := first.save(ctx); err != nil {
		t.Fatal(err)
	}
	job, err := LoadGeocodeCache(ctx, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := job.Refusal("bad query"); !ok || m != "nominatim: HTTP 400: Nothing to search for." {
		t.Fatalf("refusal %q %v, want the geocoder's message", m, ok)
	}
	if _, ok := job.Refusal("other query"); ok {
		t.Fatal("a query never refused has a refusal")
	}
	if err := MergeGeocodeCache(ctx, c, opt, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(own), own); err != nil {
		t.Fatal(err)
	}
	if _, left := own.Data[PendingRefusalsKey]; left {
		t.Error("the refusals are still in the solve's ConfigMap after the merge")
	}
	cache := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: GeocodeCacheConfigMap}, cache); err == nil && len(cache.Data) > 0 {
		t.Errorf("a refusal reached the tenant's cache: %v", cache.Data)
	}
}
