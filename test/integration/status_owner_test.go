package integration

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/test/requests"
)

// statusOwners maps each top-level status field of opt to the field
// managers that own it, from metadata.managedFields of the status
// subresource.
func statusOwners(t *testing.T, opt *v1alpha1.Optimization) map[string][]string {
	t.Helper()
	owners := map[string][]string{}
	for _, mf := range opt.ManagedFields {
		if mf.Subresource != "status" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatalf("managed fields of %s: %v", mf.Manager, err)
		}
		for key := range fields["f:status"] {
			if name, ok := strings.CutPrefix(key, "f:"); ok {
				owners[name] = append(owners[name], mf.Manager)
			}
		}
	}
	return owners
}

// fieldsOf is the sorted status fields owners gives to manager.
func fieldsOf(owners map[string][]string, manager string) []string {
	var out []string
	for field, ms := range owners {
		if slices.Contains(ms, manager) {
			out = append(out, field)
		}
	}
	sort.Strings(out)
	return out
}

// recordStatuses watches every optimization of namespace and returns a
// function that stops watching and returns each status seen, in order.
func recordStatuses(t *testing.T, namespace string) func() []v1alpha1.OptimizationStatus {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := k8sClient.Watch(ctx, &v1alpha1.OptimizationList{}, client.InNamespace(namespace))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen []v1alpha1.OptimizationStatus
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			if opt, ok := ev.Object.(*v1alpha1.Optimization); ok {
				mu.Lock()
				seen = append(seen, opt.Status)
				mu.Unlock()
			}
		}
	}()
	return func() []v1alpha1.OptimizationStatus {
		w.Stop()
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// TestStatusFieldOwners runs optimizations to completed, failed and
// cancelled with the in-process runner and checks that every status field
// has exactly one writer (server-side apply's field managers), that each
// writer owns exactly its part of the record, and that no record ever
// showed a solver stage the solver did not write.
func TestStatusFieldOwners(t *testing.T) {
	s := startSystem(t, "inprocess")
	ctx := context.Background()
	statuses := recordStatuses(t, s.namespace)

	completed := createViaREST(t, s, "owner-completed-01", requests.TenOrders(1))

	spec := crSpec()
	spec.Orders[1].TimeWindowStart, spec.Orders[1].TimeWindowEnd = ptr.To("12:00"), ptr.To("09:00")
	failed := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: spec}
	if err := k8sClient.Create(ctx, failed); err != nil {
		t.Fatal(err)
	}

	cancelled := createViaREST(t, s, "owner-cancelled-01", bigBody(30))
	waitForState(t, s, cancelled.Name, v1alpha1.StateRunning)
	waitFor(t, 30*time.Second, "the solver to report a stage", func() (bool, error) {
		return getOpt(t, cancelled).Status.Stage != "", nil
	})
	if status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+cancelled.Name+"/cancel", nil, nil); status != 200 {
		t.Fatalf("cancel: %d %v", status, rec)
	}

	waitForState(t, s, completed.Name, v1alpha1.StateCompleted)
	waitForState(t, s, failed.Name, v1alpha1.StateFailed)
	waitForState(t, s, cancelled.Name, v1alpha1.StateCancelled)

	controllerFields := []string{"conditions", "finishedAt", "observedGeneration", "orderCount", "startedAt", "state", "vehicleCount"}
	solverFields := []string{"progress", "resultRef", "stage", "summary"}
	for _, c := range []struct {
		name string
		opt  *v1alpha1.Optimization
		// controller is what routeopt-controller owns beyond controllerFields.
		controller []string
		// solverAll: the solve ran to its end, so the solver owns all its fields.
		solverAll bool
	}{
		{name: "completed", opt: completed, solverAll: true},
		{name: "failed", opt: failed, controller: []string{"errorCode", "errorMessage"}},
		{name: "cancelled", opt: cancelled},
	} {
		t.Run(c.name, func(t *testing.T) {
			cur := getOpt(t, c.opt)
			owners := statusOwners(t, cur)
			t.Logf("status owners: %v", owners)
			for field, ms := range owners {
				if len(ms) != 1 {
					t.Errorf("status.%s has %d owners %v, want one", field, len(ms), ms)
				}
			}
			wantController := slices.Sorted(slices.Values(append(slices.Clone(controllerFields), c.controller...)))
			if got := fieldsOf(owners, record.FieldOwnerController); !slices.Equal(got, wantController) {
				t.Errorf("%s owns %v, want %v", record.FieldOwnerController, got, wantController)
			}
			gotSolver := fieldsOf(owners, record.FieldOwnerSolver)
			if c.solverAll && !slices.Equal(gotSolver, solverFields) {
				t.Errorf("%s owns %v, want %v", record.FieldOwnerSolver, gotSolver, solverFields)
			}
			for _, f := range gotSolver {
				if !slices.Contains(solverFields, f) {
					t.Errorf("%s owns status.%s, which is not its own", record.FieldOwnerSolver, f)
				}
			}
			for _, m := range slices.Sorted(maps.Keys(managersOf(owners))) {
				if m != record.FieldOwnerController && m != record.FieldOwnerSolver {
					t.Errorf("status written by %s, want only the controller and the solver (no webhooks here)", m)
				}
			}
		})
	}

	seen := statuses()
	t.Logf("%d statuses seen", len(seen))
	if len(seen) == 0 {
		t.Fatal("the watch saw no status")
	}
	for _, st := range seen {
		if st.Stage == v1alpha1.StageQueued {
			t.Errorf("stage queued was written: %+v", st)
		}
		if st.State == v1alpha1.StateRunning && st.DisplayStage() == v1alpha1.StageQueued {
			t.Errorf("a running record shows stage queued: %+v", st)
		}
	}
}

// managersOf is the set of managers owning any field in owners.
func managersOf(owners map[string][]string) map[string]bool {
	out := map[string]bool{}
	for _, ms := range owners {
		for _, m := range ms {
			out[m] = true
		}
	}
	return out
}
