package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers"
)

// timedNominatim is the fake Nominatim behind a recorder of when each
// /search request arrived.
type timedNominatim struct {
	*httptest.Server
	mu    sync.Mutex
	times []time.Time
}

func newTimedNominatim(t *testing.T) *timedNominatim {
	upstream := newFakeNominatim(t, 0)
	n := &timedNominatim{}
	n.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.times = append(n.times, time.Now())
		n.mu.Unlock()
		upstream.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(n.Close)
	return n
}

func (n *timedNominatim) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.times)
}

// busiestSecond is the most requests that arrived within any one second.
func (n *timedNominatim) busiestSecond() int {
	n.mu.Lock()
	times := slices.Clone(n.times)
	n.mu.Unlock()
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	most := 0
	for i := range times {
		j := i
		for j < len(times) && times[j].Sub(times[i]) < time.Second {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// budgetBody is a request with a depot at known coordinates and orders
// with addresses only, each unique to prefix.
func budgetBody(prefix string, orders int) map[string]any {
	list := []map[string]any{}
	for i := range orders {
		list = append(list, map[string]any{"id": fmt.Sprintf("%s-%d", prefix, i), "address": fmt.Sprintf("%s-Straße %d", prefix, i+1), "city": "Berlin", "country": "de"})
	}
	return map[string]any{
		"depot":   map[string]any{"latitude": 52.52, "longitude": 13.405},
		"orders":  list,
		"fleet":   map[string]any{"count": 4, "capacity": 1000},
		"options": map[string]any{"solver_seconds": 1},
	}
}

// TestGeocodeBudget runs the Job runner with a geocoder: the manager
// geocodes every solve with its one client before the Job starts, so the
// configured rate holds across concurrent solves, the Jobs send no
// requests, a request that cannot be geocoded within --geocode-max-wait
// fails before any request is sent, and a cancel stops the geocoding.
func TestGeocodeBudget(t *testing.T) {
	const rate, burst, perSolve = 4, 1, 20
	nominatim := newTimedNominatim(t)
	providers, err := app.NewProviderOptions(
		"--geocoder=nominatim", "--nominatim-url="+nominatim.URL, fmt.Sprintf("--nominatim-rate=%d", rate), "--nominatim-concurrency=4",
		"--geocode-max-wait=20s",
	)
	if err != nil {
		t.Fatal(err)
	}
	s := startSystemWith(t, app.RunnerOptions{Kind: "job", Providers: providers}, nil)

	t.Run("the shared rate holds across two concurrent Jobs", func(t *testing.T) {
		a := createViaREST(t, s, "geo-budget-a-0001", budgetBody("alpha", perSolve))
		b := createViaREST(t, s, "geo-budget-b-0001", budgetBody("beta", perSolve))
		jobs := map[string]*batchv1.Job{}
		waitFor(t, 60*time.Second, "both solve jobs", func() (bool, error) {
			for _, opt := range []*v1alpha1.Optimization{a, b} {
				job := &batchv1.Job{}
				err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: controllers.JobName(opt)}, job)
				if err != nil {
					return false, client.IgnoreNotFound(err)
				}
				jobs[opt.Name] = job
			}
			return true, nil
		})
		if got := nominatim.count(); got != 2*perSolve {
			t.Fatalf("the manager sent %d requests before the Jobs started, want %d (one per address)", got, 2*perSolve)
		}
		most := nominatim.busiestSecond()
		t.Logf("%d requests, at most %d within one second", nominatim.count(), most)
		if most > rate+burst {
			t.Errorf("%d requests within one second over both solves, want at most %d (rate %d + burst %d)", most, rate+burst, rate, burst)
		}
		for _, opt := range []*v1alpha1.Optimization{a, b} {
			job := jobs[opt.Name]
			cmd := job.Spec.Template.Spec.Containers[0].Command
			if !slices.Contains(cmd, "--geocoder=prefetched") || slices.ContainsFunc(cmd, func(a string) bool { return strings.HasPrefix(a, "--nominatim-") }) {
				t.Errorf("solve command %v: want --geocoder=prefetched and no Nominatim flags", cmd)
			}
			// Play the kubelet: the pipeline of the Job's command line
			// (cmd is /routeopt solve --namespace N --name ID, then the
			// provider flags), in-process.
			jobProviders, err := app.NewProviderOptions(cmd[6:]...)
			if err != nil {
				t.Fatal(err)
			}
			p, err := jobProviders.SolvePipeline(k8sClient)
			if err != nil {
				t.Fatal(err)
			}
			before := nominatim.count()
			if err := p.Run(context.Background(), client.ObjectKeyFromObject(opt), nil); err != nil {
				t.Fatalf("the job's solve failed: %v", err)
			}
			if sent := nominatim.count() - before; sent != 0 {
				t.Errorf("the solve Job sent %d Nominatim requests, want 0", sent)
			}
			setJobStatus(t, job, true, "")
			waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
			status, res, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result", nil, nil)
			if status != 200 || res["kpis"].(map[string]any)["orders_assigned"] != float64(perSolve) {
				t.Errorf("result %d %v, want all %d orders placed", status, res, perSolve)
			}
		}
	})

	t.Run("a request that cannot be geocoded in time fails up front", func(t *testing.T) {
		before := nominatim.count()
		// 100 addresses at 4/s take 25 s, past the 20 s limit.
		opt := createViaREST(t, s, "geo-budget-toolong-01", budgetBody("gamma", 100))
		rec := waitForState(t, s, opt.Name, v1alpha1.StateFailed)
		msg, _ := rec["error_message"].(string)
		if rec["error_code"] != v1alpha1.ErrorGeocodingUnavailable || !strings.Contains(msg, "100 address(es) need geocoding at 4 request(s)/s") || !strings.Contains(msg, "the limit is 20s") {
			t.Errorf("error %v %q, want %s with the numbers", rec["error_code"], msg, v1alpha1.ErrorGeocodingUnavailable)
		}
		if sent := nominatim.count() - before; sent != 0 {
			t.Errorf("%d requests sent for a request refused up front, want 0", sent)
		}
		err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: controllers.JobName(opt)}, &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("solve job of a refused request: %v, want none", err)
		}
	})

	t.Run("a cancel stops the manager's geocoding", func(t *testing.T) {
		before := nominatim.count()
		// 60 addresses at 4/s: 15 s, within the limit.
		opt := createViaREST(t, s, "geo-budget-cancel-01", budgetBody("delta", 60))
		waitFor(t, 20*time.Second, "geocoding requests", func() (bool, error) { return nominatim.count()-before >= 3, nil })
		if status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+opt.Name+"/cancel", nil, nil); status != http.StatusOK {
			t.Fatalf("cancel: %d %v", status, rec)
		}
		waitForState(t, s, opt.Name, v1alpha1.StateCancelled)
		stopped := nominatim.count()
		// At 4/s the geocoding would have sent several more by now.
		time.Sleep(1500 * time.Millisecond)
		if more := nominatim.count() - stopped; more != 0 {
			t.Errorf("%d requests after the cancel, want 0", more)
		}
		if sent := stopped - before; sent >= 60 {
			t.Errorf("%d requests: the geocoding finished before the cancel, so the test shows nothing", sent)
		}
		err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: controllers.JobName(opt)}, &batchv1.Job{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("solve job of a request cancelled while geocoding: %v, want none", err)
		}
	})
}

// TestGeocodeBudgetInProcess: dev mode's runner applies the same up-front
// check before its pipeline sends any request.
func TestGeocodeBudgetInProcess(t *testing.T) {
	nominatim := newTimedNominatim(t)
	providers, err := app.NewProviderOptions(
		"--geocoder=nominatim", "--nominatim-url="+nominatim.URL, "--nominatim-rate=4", "--geocode-max-wait=5s",
	)
	if err != nil {
		t.Fatal(err)
	}
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", Providers: providers}, nil)
	// 40 addresses at 4/s take 10 s, past the 5 s limit.
	opt := createViaREST(t, s, "geo-budget-inproc-01", budgetBody("epsilon", 40))
	rec := waitForState(t, s, opt.Name, v1alpha1.StateFailed)
	if msg, _ := rec["error_message"].(string); rec["error_code"] != v1alpha1.ErrorGeocodingUnavailable || !strings.Contains(msg, "40 address(es) need geocoding") {
		t.Errorf("error %v %q, want %s with the numbers", rec["error_code"], msg, v1alpha1.ErrorGeocodingUnavailable)
	}
	if n := nominatim.count(); n != 0 {
		t.Errorf("%d requests sent for a request refused up front, want 0", n)
	}
}
