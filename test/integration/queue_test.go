package integration

import (
	"routeopt.io/routeopt/test/requests"

	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers"
)

// gauge is the value of the gauge name in the manager's metrics registry.
func gauge(t *testing.T, name string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("gauge %s is not exported", name)
	return 0
}

// waitForGauges waits until the queue gauges read queued and running.
func waitForGauges(t *testing.T, queued, running float64) {
	t.Helper()
	waitFor(t, 10*time.Second, "the queue gauges", func() (bool, error) {
		return gauge(t, "routeopt_queue_depth") == queued && gauge(t, "routeopt_running_solves") == running, nil
	})
}

// current reads opt from the API server.
func current(t *testing.T, opt *v1alpha1.Optimization) *v1alpha1.Optimization {
	t.Helper()
	cur := &v1alpha1.Optimization{}
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(opt), cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

// waitForStored waits until the stored opt is in state.
func waitForStored(t *testing.T, opt *v1alpha1.Optimization, state v1alpha1.State) {
	t.Helper()
	waitFor(t, 20*time.Second, opt.Name+" "+string(state), func() (bool, error) {
		return current(t, opt).Status.State == state, nil
	})
}

// waitForGone waits until obj no longer exists.
func waitForGone(t *testing.T, obj client.Object, what string) {
	t.Helper()
	waitFor(t, 20*time.Second, what+" to be gone", func() (bool, error) {
		err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// noJob fails unless opt has no solve Job.
func noJob(t *testing.T, opt *v1alpha1.Optimization) {
	t.Helper()
	err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: controllers.JobName(opt)}, &batchv1.Job{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("%s has a solve job while it waits (err %v)", opt.Name, err)
	}
}

// waitForNoFinalizer waits until the controller let go of opt.
func waitForNoFinalizer(t *testing.T, opt *v1alpha1.Optimization) {
	t.Helper()
	waitFor(t, 10*time.Second, "the solve finalizer to be removed from "+opt.Name, func() (bool, error) {
		return !slices.Contains(current(t, opt).Finalizers, v1alpha1.SolveFinalizer), nil
	})
}

// Deleting a running optimization stops its solve and then lets it go; its
// slot goes to the next in line.
func TestDeleteRunning(t *testing.T) {
	t.Run("inprocess", func(t *testing.T) {
		s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 1}, nil)
		before := gauge(t, "routeopt_inprocess_solves")
		first := createViaREST(t, s, "delete-inproc-key01", bigBody(60))
		waitForState(t, s, first.Name, v1alpha1.StateRunning)
		if f := current(t, first).Finalizers; !slices.Contains(f, v1alpha1.SolveFinalizer) {
			t.Errorf("a running optimization has finalizers %v, want %s", f, v1alpha1.SolveFinalizer)
		}
		waitFor(t, 10*time.Second, "the solve goroutine", func() (bool, error) {
			return gauge(t, "routeopt_inprocess_solves") == before+1, nil
		})
		second := createViaREST(t, s, "delete-inproc-key02", requests.TenOrders(1))
		waitForStored(t, second, v1alpha1.StateQueued)

		if err := k8sClient.Delete(context.Background(), first); err != nil {
			t.Fatal(err)
		}
		waitForGone(t, first, "the deleted optimization")
		// The runner has one slot, which the first solve's goroutine holds
		// until it returns: the second solve can only finish after that,
		// long before the first one's 60 s budget.
		waitForState(t, s, second.Name, v1alpha1.StateCompleted)
		waitFor(t, 10*time.Second, "no solve goroutine left", func() (bool, error) {
			return gauge(t, "routeopt_inprocess_solves") == before, nil
		})
		waitForNoFinalizer(t, second)
	})

	t.Run("job", func(t *testing.T) {
		s := startSystemWith(t, app.RunnerOptions{Kind: "job", MaxConcurrent: 1}, nil)
		first := createViaREST(t, s, "delete-job-key-0001", requests.TenOrders(1))
		job := waitForJob(t, first)
		if f := current(t, first).Finalizers; !slices.Contains(f, v1alpha1.SolveFinalizer) {
			t.Errorf("a running optimization has finalizers %v, want %s", f, v1alpha1.SolveFinalizer)
		}
		second := createViaREST(t, s, "delete-job-key-0002", requests.TenOrders(1))
		waitForStored(t, second, v1alpha1.StateQueued)
		noJob(t, second)

		if err := k8sClient.Delete(context.Background(), first); err != nil {
			t.Fatal(err)
		}
		waitForGone(t, first, "the deleted optimization")
		// envtest runs no garbage collector: only the controller deletes these.
		waitForGone(t, job, "the solve job")
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
			obj.SetNamespace(first.Namespace)
			obj.SetName(controllers.JobName(first))
			waitForGone(t, obj, "the solve identity")
		}
		waitForJob(t, second)
	})

	// A solve started before the finalizer existed gets it, so deleting it
	// stops the solve too.
	t.Run("running without the finalizer", func(t *testing.T) {
		s := startSystemWith(t, app.RunnerOptions{Kind: "job", MaxConcurrent: 1}, nil)
		opt := createViaREST(t, s, "delete-old-key-0001", requests.TenOrders(1))
		job := waitForJob(t, opt)
		s.stopManager()
		cur := current(t, opt)
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Finalizers = nil
		if err := k8sClient.Patch(context.Background(), cur, patch); err != nil {
			t.Fatal(err)
		}
		s.startManager(t)
		waitFor(t, 10*time.Second, "the finalizer on a running optimization", func() (bool, error) {
			return slices.Contains(current(t, opt).Finalizers, v1alpha1.SolveFinalizer), nil
		})
		if err := k8sClient.Delete(context.Background(), opt); err != nil {
			t.Fatal(err)
		}
		waitForGone(t, opt, "the deleted optimization")
		waitForGone(t, job, "the solve job")
	})
}

// With one slot, a finished or cancelled solve hands its slot to the next
// in line at once: queued optimizations do not poll.
func TestQueueHandoff(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "job", MaxConcurrent: 1}, nil)
	var opts []*v1alpha1.Optimization
	for i := range 3 {
		opts = append(opts, createViaREST(t, s, "handoff-test-key-0"+string(rune('a'+i)), requests.TenOrders(1)))
		time.Sleep(1100 * time.Millisecond) // creation timestamps have second precision
	}
	a, b, c := opts[0], opts[1], opts[2]
	jobA := waitForJob(t, a)
	waitForStored(t, b, v1alpha1.StateQueued)
	waitForStored(t, c, v1alpha1.StateQueued)
	waitForGauges(t, 2, 1)
	noJob(t, b)
	noJob(t, c)

	// The slim cache sizes the Job and counts from the full object.
	want := controllers.DefaultSolveResources().For(10)
	if got := jobA.Spec.Template.Spec.Containers[0].Resources; !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("a 10-order solve asks for %v, want %v", got, want)
	}
	if st := current(t, a).Status; st.OrderCount != 10 || st.VehicleCount != 2 {
		t.Errorf("status counts %d orders, %d vehicles, want 10 and 2", st.OrderCount, st.VehicleCount)
	}

	setJobStatus(t, jobA, true, "")
	waitForState(t, s, a.Name, v1alpha1.StateCompleted)
	jobB := waitForJob(t, b)
	noJob(t, c)
	waitForNoFinalizer(t, a)

	if status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+b.Name+"/cancel", nil, nil); status != 200 {
		t.Fatalf("cancel: %d %v", status, rec)
	}
	waitForState(t, s, b.Name, v1alpha1.StateCancelled)
	waitForGone(t, jobB, "the cancelled solve's job")
	jobC := waitForJob(t, c)
	waitForNoFinalizer(t, b)
	waitForGauges(t, 0, 1)

	setJobStatus(t, jobC, true, "")
	waitForState(t, s, c.Name, v1alpha1.StateCompleted)
	waitForGauges(t, 0, 0)
	waitForNoFinalizer(t, c)
}

// The standalone manager's cache keeps Optimizations without their orders,
// vehicles and managed fields, with the counts reconciling needs.
func TestManagerCacheIsSlim(t *testing.T) {
	s := startSystem(t, "inprocess")
	opt := createViaREST(t, s, "slim-cache-key-0001", requests.TenOrders(1))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := app.ManagerCacheOptions()
	opts.Scheme = app.NewScheme()
	opts.DefaultNamespaces = map[string]cache.Config{s.namespace: {}}
	c, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &v1alpha1.Optimization{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	defer func() { cancel(); <-done }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	cached := &v1alpha1.Optimization{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(opt), cached); err != nil {
		t.Fatal(err)
	}
	if cached.Spec.Orders != nil || cached.Spec.Vehicles != nil || cached.ManagedFields != nil {
		t.Errorf("cached copy keeps %d orders, %d vehicles, %d managed fields", len(cached.Spec.Orders), len(cached.Spec.Vehicles), len(cached.ManagedFields))
	}
	if cached.Status.OrderCount != 10 || cached.Status.VehicleCount != 2 || cached.Spec.Fleet == nil {
		t.Errorf("cached counts %d orders, %d vehicles (fleet %v), want 10 and 2", cached.Status.OrderCount, cached.Status.VehicleCount, cached.Spec.Fleet)
	}
	if stored := current(t, opt); stored.Spec.OrderTotal() != 10 || stored.Spec.Input == nil {
		t.Errorf("the stored optimization has %d orders (input %+v), want 10 in its input ConfigMap", stored.Spec.OrderTotal(), stored.Spec.Input)
	}

	// One written by hand with its orders and vehicles inline.
	inline := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: crSpec()}
	if err := k8sClient.Create(ctx, inline); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the inline optimization in the cache", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(inline), cached)
		return err == nil, client.IgnoreNotFound(err)
	})
	if cached.Spec.Orders != nil || cached.Spec.Vehicles != nil || cached.ManagedFields != nil {
		t.Errorf("cached inline copy keeps %d orders, %d vehicles, %d managed fields", len(cached.Spec.Orders), len(cached.Spec.Vehicles), len(cached.ManagedFields))
	}
	if cached.Status.OrderCount != 3 || cached.Status.VehicleCount != 1 {
		t.Errorf("cached inline counts %d orders, %d vehicles, want 3 and 1", cached.Status.OrderCount, cached.Status.VehicleCount)
	}
	if stored := current(t, inline); len(stored.Spec.Orders) != 3 {
		t.Errorf("the stored inline optimization has %d orders, want 3", len(stored.Spec.Orders))
	}
}
