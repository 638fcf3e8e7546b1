package integration

import (
	"routeopt.io/routeopt/test/requests"

	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers"
	"routeopt.io/routeopt/webserver"
)

// bigBody is a problem that keeps the solver busy for solverSeconds.
func bigBody(solverSeconds int) map[string]any {
	body := requests.TenOrders(solverSeconds)
	body["fleet"] = map[string]any{"count": 3, "capacity": 100}
	return body
}

func TestCancel(t *testing.T) {
	for _, runner := range []string{"inprocess", "job"} {
		t.Run(runner, func(t *testing.T) {
			s := startSystem(t, runner)
			opt := createViaREST(t, s, "cancel-test-key-01", bigBody(30))
			if runner == "inprocess" {
				waitForState(t, s, opt.Name, v1alpha1.StateRunning)
			} else {
				waitForJob(t, opt)
			}
			start := time.Now()
			status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+opt.Name+"/cancel", nil, nil)
			if status != 200 {
				t.Fatalf("cancel: %d %v", status, rec)
			}
			if rec["status"] != "cancelled" {
				rec = waitForState(t, s, opt.Name, v1alpha1.StateCancelled)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("cancelled after %s, want within 2 s", took)
			}
			if rec["finished_at"] == nil {
				t.Errorf("cancelled record without finished_at: %v", rec)
			}
			// Cancel again: idempotent.
			if status, again, _ := s.call(t, "POST", "/v1/optimizations/"+opt.Name+"/cancel", nil, nil); status != 200 || again["status"] != "cancelled" {
				t.Errorf("second cancel: %d %v", status, again)
			}
			// No result, now or later (the ConfigMap made for it stays empty).
			time.Sleep(500 * time.Millisecond)
			cm := &corev1.ConfigMap{}
			if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: opt.ResultConfigMapName()}, cm); client.IgnoreNotFound(err) != nil || len(cm.BinaryData[v1alpha1.ResultDataKey]) > 0 {
				t.Errorf("a cancelled optimization has a result (err %v)", err)
			}
			if status, body, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result", nil, nil); status != 409 || errorCode(t, body) != webserver.CodeResultNotReady {
				t.Errorf("result of a cancelled optimization: %d %v", status, body)
			}
			if runner == "job" {
				// The solve's identity is gone: a pod still running can write nothing.
				for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
					err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: controllers.JobName(opt)}, obj)
					if err == nil && obj.GetDeletionTimestamp().IsZero() {
						t.Errorf("the cancelled solve's %T is still there", obj)
					}
				}
				job := &batchv1.Job{}
				err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: controllers.JobName(opt)}, job)
				if err == nil && job.DeletionTimestamp.IsZero() {
					t.Error("the solve job was not deleted")
				}
			}
		})
	}

	t.Run("a completed optimization cannot be cancelled", func(t *testing.T) {
		s := startSystem(t, "inprocess")
		opt := createViaREST(t, s, "cancel-done-key-01", requests.TenOrders(1))
		waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
		status, body, _ := s.call(t, "POST", "/v1/optimizations/"+opt.Name+"/cancel", nil, nil)
		if status != 409 || errorCode(t, body) != webserver.CodeInvalidState {
			t.Errorf("cancel of completed: %d %v", status, body)
		}
	})
}

// With one solve slot, optimizations wait in queued and start in the order
// they were created.
func TestQueueFirstInFirstOut(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 1}, nil)
	var ids []string
	for i := range 3 {
		opt := createViaREST(t, s, "fifo-test-key-00"+string(rune('a'+i)), requests.TenOrders(1))
		ids = append(ids, opt.Name)
		time.Sleep(1100 * time.Millisecond) // creation timestamps have second precision
	}
	started := map[string]time.Time{}
	waitFor(t, 60*time.Second, "all three to complete", func() (bool, error) {
		list := &v1alpha1.OptimizationList{}
		if err := k8sClient.List(context.Background(), list, client.InNamespace(s.namespace)); err != nil {
			return false, err
		}
		running, done := 0, 0
		for _, o := range list.Items {
			if o.Status.State == v1alpha1.StateRunning {
				running++
			}
			if o.Status.State == v1alpha1.StateCompleted {
				done++
			}
			if o.Status.StartedAt != nil {
				started[o.Name] = o.Status.StartedAt.Time
			}
		}
		if running > 1 {
			t.Fatalf("%d running at once with one slot", running)
		}
		return done == 3, nil
	})
	for i := 1; i < len(ids); i++ {
		if !started[ids[i-1]].Before(started[ids[i]]) && !started[ids[i-1]].Equal(started[ids[i]]) {
			t.Errorf("%s started at %s, before the older %s at %s", ids[i], started[ids[i]], ids[i-1], started[ids[i-1]])
		}
	}
}

// Finished optimizations are deleted once their retention has passed.
func TestRetention(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", Retention: 2 * time.Second}, nil)
	opt := createViaREST(t, s, "retention-key-0001", requests.TenOrders(1))
	waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	waitFor(t, 15*time.Second, "the expired optimization to be deleted", func() (bool, error) {
		err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(opt), &v1alpha1.Optimization{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	waitFor(t, 5*time.Second, "the API to stop serving the expired optimization", func() (bool, error) {
		status, _, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name, nil, nil)
		return status == 404, nil
	})
}

// The controller's metrics are registered and count transitions.
func TestMetrics(t *testing.T) {
	s := startSystem(t, "inprocess")
	opt := createViaREST(t, s, "metrics-key-000001", requests.TenOrders(1))
	waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "routeopt_") {
			found[f.GetName()] = true
		}
	}
	for _, want := range []string{"routeopt_optimizations_total", "routeopt_solve_duration_seconds", "routeopt_queue_depth", "routeopt_stage_duration_seconds"} {
		if !found[want] {
			t.Errorf("metric %s not exported; have %v", want, found)
		}
	}
}

// Cancels that race with completion end in exactly one terminal state, and
// the result endpoint agrees with it.
func TestCancelRacingCompletion(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 6}, nil)
	delays := []time.Duration{800, 1300, 1800, 2300, 2800, 3500}
	ids := make([]string, len(delays))
	for i := range delays {
		ids[i] = createViaREST(t, s, "cancel-race-key-0"+string(rune('a'+i)), requests.TenOrders(1)).Name
	}
	for i, d := range delays {
		go func() {
			time.Sleep(d * time.Millisecond)
			req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/optimizations/"+ids[i]+"/cancel", nil)
			req.Header.Set("Authorization", "Bearer "+s.apiKey)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close()
			}
		}()
	}
	final := map[string]string{}
	waitFor(t, 30*time.Second, "every optimization to finish", func() (bool, error) {
		for _, id := range ids {
			_, rec, _ := s.call(t, "GET", "/v1/optimizations/"+id, nil, nil)
			st := rec["status"].(string)
			if st != "completed" && st != "cancelled" {
				return false, nil
			}
			final[id] = st
		}
		return true, nil
	})
	time.Sleep(1500 * time.Millisecond) // a late writer would show now
	for _, id := range ids {
		_, rec, _ := s.call(t, "GET", "/v1/optimizations/"+id, nil, nil)
		if rec["status"] != final[id] {
			t.Errorf("%s went from %s to %v", id, final[id], rec["status"])
		}
		status, _, _ := s.call(t, "GET", "/v1/optimizations/"+id+"/result", nil, nil)
		if (final[id] == "completed") != (status == 200) {
			t.Errorf("%s is %s but its result answers %d", id, final[id], status)
		}
	}
	t.Logf("final states: %v", final)
}

// Each transition is recorded as a Kubernetes Event on the optimization
// (what kubectl describe shows).
func TestTransitionEvents(t *testing.T) {
	s := startSystem(t, "inprocess")
	opt := createViaREST(t, s, "events-test-key-01", requests.TenOrders(1))
	waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	want := []string{v1alpha1.ReasonQueued, v1alpha1.ReasonStarted, v1alpha1.ReasonCompleted}
	waitFor(t, 10*time.Second, "events "+strings.Join(want, ", "), func() (bool, error) {
		list := &eventsv1.EventList{}
		if err := k8sClient.List(context.Background(), list, client.InNamespace(s.namespace)); err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, e := range list.Items {
			if e.Regarding.UID == opt.UID && e.ReportingController == "routeopt-controller" {
				seen[e.Reason] = true
			}
		}
		for _, r := range want {
			if !seen[r] {
				return false, nil
			}
		}
		return true, nil
	})
}
