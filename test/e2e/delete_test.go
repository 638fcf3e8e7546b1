package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
)

// Deleting an optimization while its solve runs stops the solve: the
// installed manager (its least-privilege RBAC) holds the optimization by
// its finalizer until it has deleted the Job and revoked the solve's
// identity; the solver process ends (refused, or stopped when the real
// garbage collector deletes its pod) long before its 60 s budget, and the
// optimization is gone.
func TestDeletingRunningSolve(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	acme := onboard(t, "delete")
	url := startAPI(t, acme.key)
	k := startKubelet(t, acme.namespace, nil)
	startManager(t, "manager")

	id := createOptimization(t, url, acme.key, "delete-running-01", func(b map[string]any) {
		b["options"] = map[string]any{"solver_seconds": 60}
	})
	if _, err := k.WaitFor(ctx, func([]framework.PodRecord) bool {
		pods := solvePods(k, id)
		return len(pods) == 1 && !pods[0].Started.IsZero()
	}); err != nil {
		t.Fatal(err)
	}
	waitState(t, url, acme.key, id, "running", time.Minute)
	// The solver itself is at work, not only its process.
	for {
		_, rec := call(url, acme.key, http.MethodGet, "/v1/optimizations/"+id, nil, nil)
		if rec["stage"] == string(v1alpha1.StageOptimizing) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the solve never reached the optimizing stage: %v", rec)
		}
		time.Sleep(100 * time.Millisecond)
	}
	opt := &v1alpha1.Optimization{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: acme.namespace, Name: id}, opt); err != nil {
		t.Fatal(err)
	}
	if !hasFinalizer(opt.Finalizers) {
		t.Errorf("a running optimization has finalizers %v, want %s", opt.Finalizers, v1alpha1.SolveFinalizer)
	}

	started := time.Now()
	if err := env.Client.Delete(ctx, opt); err != nil {
		t.Fatal(err)
	}
	recs, err := k.WaitFor(ctx, func([]framework.PodRecord) bool {
		pods := solvePods(k, id)
		return len(pods) == 1 && !pods[0].Finished.IsZero()
	})
	if err != nil {
		t.Fatalf("the solve pod did not stop: %v (%+v)", err, recs)
	}
	if pod := solvePods(k, id)[0]; pod.Finished.Before(started) {
		t.Errorf("the solve pod ended before the delete: %+v", pod)
	} else {
		t.Logf("solve pod: exit %d, phase %s, ran %s, ended %s after the delete", pod.ExitCode, pod.Phase, pod.Finished.Sub(pod.Started).Round(time.Millisecond), pod.Finished.Sub(started).Round(time.Millisecond))
	}
	for _, obj := range []client.Object{opt, &batchv1.Job{}} {
		key := client.ObjectKey{Namespace: acme.namespace, Name: id}
		if _, isJob := obj.(*batchv1.Job); isJob {
			key.Name = id + "-solve"
		}
		for {
			err := env.Client.Get(ctx, key, obj)
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%T %s still there after the delete (%v)", obj, key.Name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("the solve stopped and its optimization and Job were gone %s after the delete", time.Since(started).Round(time.Millisecond))
}

func hasFinalizer(finalizers []string) bool {
	for _, f := range finalizers {
		if f == v1alpha1.SolveFinalizer {
			return true
		}
	}
	return false
}
