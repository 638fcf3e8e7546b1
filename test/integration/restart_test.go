package integration

import (
	"routeopt.io/routeopt/test/requests"

	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
)

// Stopping the manager while optimizations are queued or running loses none
// of them; a new manager finishes them, with no second Job for one.
func TestManagerRestart(t *testing.T) {
	t.Run("job", func(t *testing.T) {
		s := startSystem(t, "job")
		opt := createViaREST(t, s, "restart-job-key-01", requests.TenOrders(1))
		job := waitForJob(t, opt)
		waitForState(t, s, opt.Name, v1alpha1.StateRunning)
		s.stopManager()
		s.startManager(t)
		time.Sleep(2 * time.Second) // time for the new manager to act on it
		jobs := &batchv1.JobList{}
		if err := k8sClient.List(context.Background(), jobs, client.InNamespace(s.namespace)); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) != 1 || jobs.Items[0].UID != job.UID {
			t.Fatalf("after the restart: %d jobs (first uid %v), want the one job %s", len(jobs.Items), jobs.Items, job.UID)
		}
		setJobStatus(t, &jobs.Items[0], true, "")
		waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	})

	t.Run("inprocess", func(t *testing.T) {
		s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 1}, nil)
		first := createViaREST(t, s, "restart-inproc-k01", requests.TenOrders(3))
		waitForState(t, s, first.Name, v1alpha1.StateRunning)
		second := createViaREST(t, s, "restart-inproc-k02", requests.TenOrders(1))
		time.Sleep(300 * time.Millisecond)
		s.stopManager()
		for _, o := range []*v1alpha1.Optimization{first, second} {
			current := &v1alpha1.Optimization{}
			if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(o), current); err != nil {
				t.Fatal(err)
			}
			if current.Status.State.IsTerminal() {
				t.Fatalf("%s became %s while its manager stopped", o.Name, current.Status.State)
			}
		}
		s.startManager(t)
		waitForState(t, s, first.Name, v1alpha1.StateCompleted)
		waitForState(t, s, second.Name, v1alpha1.StateCompleted)
		for _, o := range []*v1alpha1.Optimization{first, second} {
			if status, _, _ := s.call(t, "GET", "/v1/optimizations/"+o.Name+"/result", nil, nil); status != 200 {
				t.Errorf("%s: result %d after the restart", o.Name, status)
			}
		}
	})
}
