package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// TestGeocodingResumesFromItsAnswers: a solve interrupted after K answers
// (the geocoder failing hard, or the pod's context cancelled) has written
// those answers into its result ConfigMap, so the retried solve asks
// Nominatim only for the other addresses, completes, and leaves all the
// answers for the controller's merge into the tenant's cache.
func TestGeocodingResumesFromItsAnswers(t *testing.T) {
	const orders, answered = 12, 5
	for _, mode := range []string{"geocoder fails", "context cancelled"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			var list []v1alpha1.Order
			for i := range orders {
				list = append(list, v1alpha1.Order{ID: fmt.Sprintf("o-%d", i), Address: ptr.To(fmt.Sprintf("Resumestraße %d, Berlin", i+1))})
			}
			opt := createAddressSolve(t, "geo-resume-", list)
			ns := opt.Namespace

			// The real fake answers the first `answered` requests; later
			// ones interrupt the run and get a 503.
			var requests, limit atomic.Int64
			limit.Store(answered)
			runCtx, cancelRun := context.WithCancel(ctx)
			defer cancelRun()
			nominatim := interceptedNominatim(t, func(w http.ResponseWriter, _ *http.Request) bool {
				if requests.Add(1) <= limit.Load() {
					return false
				}
				if mode == "context cancelled" {
					cancelRun()
				}
				http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
				return true
			})
			p := &solver.Pipeline{Client: k8sClient, Geocoder: nominatim}
			key := client.ObjectKeyFromObject(opt)

			err := p.Run(runCtx, key, nil)
			var f *record.Failure
			switch mode {
			case "geocoder fails":
				if !errors.As(err, &f) || f.Code != v1alpha1.ErrorGeocodingUnavailable {
					t.Fatalf("first run = %v, want %s", err, v1alpha1.ErrorGeocodingUnavailable)
				}
			default:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("first run = %v, want context.Canceled", err)
				}
			}
			if got := pending(t, opt); got != answered {
				t.Fatalf("the interrupted run kept %d answers, want %d", got, answered)
			}

			first := requests.Load()
			limit.Store(1 << 30)
			if err := p.Run(ctx, key, nil); err != nil {
				t.Fatalf("retried run: %v", err)
			}
			if asked := requests.Load() - first; asked != orders-answered {
				t.Fatalf("the retried run asked Nominatim %d times, want %d (only the addresses not answered before)", asked, orders-answered)
			}
			cm := &corev1.ConfigMap{}
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: opt.ResultConfigMapName()}, cm); err != nil {
				t.Fatal(err)
			}
			if len(cm.BinaryData[v1alpha1.ResultDataKey]) == 0 {
				t.Fatal("no result stored")
			}
			if got := pending(t, opt); got != orders {
				t.Fatalf("after the result was stored the solve's ConfigMap holds %d answers, want %d", got, orders)
			}
			if err := store.MergeGeocodeCache(ctx, k8sClient, opt, 0, metav1.Now().Time); err != nil {
				t.Fatal(err)
			}
			cache := &corev1.ConfigMap{}
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: store.GeocodeCacheConfigMap}, cache); err != nil {
				t.Fatal(err)
			}
			if len(cache.Data) != orders {
				t.Fatalf("tenant cache holds %d answers, want %d", len(cache.Data), orders)
			}
		})
	}
}

// interceptedNominatim is a client of the fake Nominatim (no rate limit,
// one request at a time, no retries) behind intercept, which may answer a
// request itself (and then returns true).
func interceptedNominatim(t *testing.T, intercept func(http.ResponseWriter, *http.Request) bool) *geocode.Nominatim {
	t.Helper()
	upstream := newFakeNominatim(t, 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			upstream.Config.Handler.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	nominatim, err := geocode.NewNominatim(geocode.NominatimOptions{BaseURL: srv.URL, RatePerSecond: -1, MaxConcurrent: 1, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return nominatim
}

// createAddressSolve creates, in a new namespace named from prefix, an
// Optimization of orders (a depot with coordinates, two vehicles, a 1 s
// solve) and its result ConfigMap, as the controller would before a solve.
func createAddressSolve(t *testing.T, prefix string, orders []v1alpha1.Order) *v1alpha1.Optimization {
	t.Helper()
	return createSolve(t, prefix, v1alpha1.OptimizationSpec{
		Depot:   v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
		Fleet:   &v1alpha1.Fleet{Count: 2, Capacity: 100},
		Options: &v1alpha1.Options{SolverSeconds: ptr.To[int32](1)},
		Orders:  orders,
	})
}

// createSolve creates, in a new namespace named from prefix, an
// Optimization of spec and its result ConfigMap, as the controller would
// before a solve.
func createSolve(t *testing.T, prefix string, spec v1alpha1.OptimizationSpec) *v1alpha1.Optimization {
	t.Helper()
	ctx := context.Background()
	ns := prefix + randomHex(4)
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid.NewString()}, Spec: spec}
	if err := k8sClient.Create(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureResultConfigMap(ctx, k8sClient, opt); err != nil {
		t.Fatal(err)
	}
	return opt
}

// pending counts the geocoding answers in opt's result ConfigMap.
func pending(t *testing.T, opt *v1alpha1.Optimization) int {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: opt.ResultConfigMapName()}, cm); err != nil {
		t.Fatal(err)
	}
	raw, ok := cm.Data[store.PendingGeocodesKey]
	if !ok {
		return 0
	}
	var answers map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &answers); err != nil {
		t.Fatalf("%s: %v", store.PendingGeocodesKey, err)
	}
	return len(answers)
}

// TestGeocodingRefusalReachesTheJob: an address Nominatim refuses (HTTP
// 400) while the manager geocodes for a solve Job is reported by the Job,
// which asks no geocoder, with Nominatim's own message rather than as "not
// geocoded".
func TestGeocodingRefusalReachesTheJob(t *testing.T) {
	ctx := context.Background()
	opt := createAddressSolve(t, "geo-refused-", []v1alpha1.Order{
		{ID: "fine", Address: ptr.To("Refusalweg 1, Berlin")},
		{ID: "refused", Address: ptr.To("refuse me 2, Berlin")},
	})
	ns := opt.Namespace
	const refusal = "Nominatim refuses this query for the test"
	nominatim := interceptedNominatim(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.Contains(r.URL.Query().Get("q"), "refuse me") {
			return false
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":{"code":400,"message":%q}}`, refusal)
		return true
	})
	key := client.ObjectKeyFromObject(opt)
	manager := &solver.Pipeline{Client: k8sClient, Geocoder: nominatim}
	if err := manager.Geocode(ctx, key, nil); err != nil {
		t.Fatalf("the manager's geocoding: %v", err)
	}
	job := &solver.Pipeline{Client: k8sClient, Geocoder: geocode.Prefetched{}}
	if err := job.Run(ctx, key, nil); err != nil {
		t.Fatalf("the Job's solve: %v", err)
	}
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: opt.ResultConfigMapName()}, cm); err != nil {
		t.Fatal(err)
	}
	result, err := v1alpha1.DecodeResult(cm.BinaryData[v1alpha1.ResultDataKey])
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Unassigned) != 1 || result.Unassigned[0].OrderRef != "refused" || result.Unassigned[0].Reason != v1alpha1.UnassignedGeocodeFailed {
		t.Fatalf("unassigned %+v, want only refused as %s", result.Unassigned, v1alpha1.UnassignedGeocodeFailed)
	}
	if msg := result.Unassigned[0].Message; !strings.Contains(msg, "HTTP 400") || !strings.Contains(msg, refusal) {
		t.Errorf("message %q, want Nominatim's HTTP 400 and its message", msg)
	}
}
