package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/test/internal/optwatch"
)

// BenchmarkQueueHandoff measures, with one solve slot and b.N+1 queued
// one-second solves, the time from one solve's terminal state to the next
// queued one's running state, both as a watcher of the API server sees
// them. With stored terminal optimizations beside them, it shows that the
// handoff does not grow with the number stored:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench QueueHandoff -benchtime 5x ./test/integration/
func BenchmarkQueueHandoff(b *testing.B) {
	for _, stored := range []int{0, 1000} {
		b.Run(fmt.Sprintf("stored-%d", stored), func(b *testing.B) { queueHandoff(b, stored) })
	}
}

func queueHandoff(b *testing.B, stored int) {
	b.StopTimer()
	ctx := context.Background()
	company := "bench-" + randomHex(4)
	if _, err := tenant.Create(ctx, k8sClient, company, "Bench "+company, operatorNamespace); err != nil {
		b.Fatal(err)
	}
	ns := v1alpha1.TenantNamespace(company)
	stop := runManager(b, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 1}, ns)
	defer stop()
	for range stored {
		createCancelled(b, ns)
	}
	waitUntil(b, time.Now(), 5*time.Minute, func() bool {
		list := &v1alpha1.OptimizationList{}
		if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil {
			return false
		}
		done := 0
		for _, o := range list.Items {
			if o.Status.State.IsTerminal() {
				done++
			}
		}
		return done == stored
	})

	w, err := optwatch.Start(ctx, k8sClient, ns, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	names := map[string]bool{}
	spec := smallSpec()
	spec.Options = &v1alpha1.Options{SolverSeconds: ptr.To[int32](1)}
	b.StartTimer()
	for range b.N + 1 {
		opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid.NewString()}, Spec: *spec.DeepCopy()}
		if err := k8sClient.Create(ctx, opt); err != nil {
			b.Fatal(err)
		}
		names[opt.Name] = true
	}
	running, finished := map[string]time.Time{}, map[string]time.Time{}
	deadline := time.After(time.Duration(b.N+1)*10*time.Second + time.Minute)
	for len(finished) < len(names) {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				b.Fatal("the watch ended")
			}
			opt, now := ev.Opt, ev.At
			if !names[opt.Name] {
				continue
			}
			if _, seen := running[opt.Name]; !seen && opt.Status.State == v1alpha1.StateRunning {
				running[opt.Name] = now
			}
			if _, seen := finished[opt.Name]; !seen && opt.Status.State.IsTerminal() {
				if opt.Status.State != v1alpha1.StateCompleted {
					b.Fatalf("%s ended %s: %s", opt.Name, opt.Status.State, opt.Status.ErrorMessage)
				}
				finished[opt.Name] = now
			}
		case <-deadline:
			b.Fatalf("%d of %d solves finished in time", len(finished), len(names))
		}
	}
	b.StopTimer()

	// Each start but the first follows the latest end before it.
	ends := sortedTimes(finished)
	starts := sortedTimes(running)
	var total, worst time.Duration
	for _, s := range starts[1:] {
		i, _ := slices.BinarySearchFunc(ends, s, func(e, t time.Time) int { return e.Compare(t) })
		if i == 0 {
			b.Fatalf("a solve started at %s before any ended, with one slot", s)
		}
		d := s.Sub(ends[i-1])
		total += d
		worst = max(worst, d)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(len(starts)-1)/1000, "ms/handoff")
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst-handoff")
}

func sortedTimes(m map[string]time.Time) []time.Time {
	out := make([]time.Time, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}
