package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers/tenant"
)

// fanOutSize is how many optimizations become terminal at once.
const fanOutSize = 200

// BenchmarkWebhookFanOut: fanOutSize optimizations of one tenant become
// terminal at once (created asking to be cancelled, so the controller
// cancels them in a burst), and the tenant has five endpoints, one of them
// a black hole that accepts connections and never answers. It measures
// how long each healthy endpoint takes to receive its events, how long the
// dead one takes to be disabled, and how long an unrelated ten-order
// optimization created with the burst takes to complete, against the same
// solve on a quiet system. Run it alone (docs/PERFORMANCE.md, "Webhooks"):
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench WebhookFanOut -benchtime 1x -timeout 30m ./test/integration/
//
// Two controls run the same burst: with no endpoint (the controller's
// figures without the notifier's load) and with the four healthy endpoints
// only (what the black hole adds).
func BenchmarkWebhookFanOut(b *testing.B) {
	for _, v := range []struct {
		name    string
		healthy int
		dead    bool
	}{{"no-endpoints", 0, false}, {"four-healthy", 4, false}, {"four-healthy-one-dead", 4, true}} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				fanOut(b, v.healthy, v.dead)
			}
		})
	}
}

func fanOut(b *testing.B, healthyEndpoints int, withDead bool) {
	b.StopTimer()
	ctx := context.Background()
	company := "bench-" + randomHex(4)
	if _, err := tenant.Create(ctx, k8sClient, company, "Bench "+company, operatorNamespace); err != nil {
		b.Fatal(err)
	}
	ns := v1alpha1.TenantNamespace(company)
	var healthy []*receiver
	for range healthyEndpoints {
		healthy = append(healthy, newReceiver(b, nil))
	}
	hole := blackHole(b)
	ro := app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 2, PublicURL: notifyPublicURL, WebhookPolicy: webhookPolicy(b, healthy, hole)}
	startManagerFor(b, ro, ns)
	for i, rc := range healthy {
		registerEndpoint(b, ns, i+1, rc.URL, true)
	}
	var dead *v1alpha1.WebhookEndpoint
	if withDead {
		dead, _ = registerEndpoint(b, ns, 5, "https://"+hole, true)
	}

	// The unrelated solve on a quiet system (its own events go out too),
	// after a first one that warms the process up.
	solveOne(b, ns)
	quiet := solveOne(b, ns)

	terminal := watchTerminal(b, ns)
	requestsBefore := apiRequests(b)
	b.StartTimer()
	start := time.Now()
	var busy time.Duration
	solved := make(chan struct{})
	go func() {
		defer close(solved)
		busy = solveOne(b, ns)
	}()
	ids := createCancelledConcurrently(b, ns, fanOutSize)

	cancelledAll := terminal.wait(b, start, ids)
	slowest := time.Duration(0)
	for i, rc := range healthy {
		waitUntil(b, start, 5*time.Minute, func() bool { return len(eventsFor(rc, ids)) == len(ids) })
		last := time.Time{}
		for _, at := range eventsFor(rc, ids) {
			last = later(last, at)
		}
		slowest = max(slowest, last.Sub(start))
		b.Logf("healthy endpoint %d: %d events in %s (%d requests)", i+1, len(ids), last.Sub(start).Round(10*time.Millisecond), len(rc.got()))
	}
	<-solved
	b.StopTimer()
	b.Logf("controller: all %d cancelled after %s", len(ids), cancelledAll.Round(10*time.Millisecond))
	b.Logf("unrelated solve: %s during the burst, %s on a quiet system", busy.Round(10*time.Millisecond), quiet.Round(10*time.Millisecond))
	logRequests(b, requestsBefore, apiRequests(b))
	b.ReportMetric(cancelledAll.Seconds(), "s-terminal-all")
	b.ReportMetric(busy.Seconds(), "s-unrelated")
	b.ReportMetric(quiet.Seconds(), "s-unrelated-quiet")
	if len(healthy) > 0 {
		b.ReportMetric(slowest.Seconds(), "s-healthy-all")
	}
	if dead == nil {
		return
	}

	// The dead endpoint: disabled, and every event of the burst recorded.
	disabled := waitUntil(b, start, 10*time.Minute, func() bool {
		ep := &v1alpha1.WebhookEndpoint{}
		return k8sClient.Get(ctx, client.ObjectKeyFromObject(dead), ep) == nil && ep.Status.Disabled
	})
	var failed, dropped int
	drained := waitUntil(b, start, 10*time.Minute, func() bool {
		failed, dropped = 0, 0
		list := &v1alpha1.OptimizationList{}
		if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		for _, o := range list.Items {
			if !ids[o.Name] {
				continue
			}
			for _, r := range o.Status.Webhooks {
				if r.Endpoint == string(dead.UID) {
					switch r.Result {
					case v1alpha1.WebhookFailed:
						failed++
					case v1alpha1.WebhookDropped:
						dropped++
					}
				}
			}
		}
		return failed+dropped == len(ids)
	})
	b.Logf("black hole: disabled after %s; all its events recorded after %s (%d failed, %d dropped)",
		disabled.Round(10*time.Millisecond), drained.Round(10*time.Millisecond), failed, dropped)
	b.ReportMetric(disabled.Seconds(), "s-dead-disabled")
}

// waitUntil polls cond and returns when it held, as time since start.
func waitUntil(b *testing.B, start time.Time, timeout time.Duration, cond func() bool) time.Duration {
	b.Helper()
	for !cond() {
		if time.Since(start) > timeout {
			b.Fatalf("not done %s after the start", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// solveOne creates a ten-order optimization (as kubectl would) and returns
// how long it took to complete.
func solveOne(b *testing.B, ns string) time.Duration {
	spec := smallSpec()
	spec.Orders = nil
	for i := range 10 {
		spec.Orders = append(spec.Orders, v1alpha1.Order{ID: fmt.Sprintf("o-%d", i), Latitude: ptr.To(52.50 + float64(i)/200), Longitude: ptr.To(13.36 + float64(i)/100)})
	}
	spec.Fleet = &v1alpha1.Fleet{Count: 2, Capacity: 10}
	spec.Options = &v1alpha1.Options{SolverSeconds: ptr.To[int32](1)}
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid.NewString()}, Spec: spec}
	start := time.Now()
	if err := k8sClient.Create(context.Background(), opt); err != nil {
		b.Error(err)
		return 0
	}
	for time.Since(start) < 2*time.Minute {
		cur := &v1alpha1.Optimization{}
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(opt), cur); err == nil && cur.Status.State.IsTerminal() {
			if cur.Status.State != v1alpha1.StateCompleted {
				b.Errorf("the unrelated optimization ended %s: %s", cur.Status.State, cur.Status.ErrorMessage)
			}
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Error("the unrelated optimization did not complete in 2 minutes")
	return 0
}

// createCancelledConcurrently creates n optimizations that ask to be
// cancelled, from 8 clients at once, and returns their names.
func createCancelledConcurrently(b *testing.B, ns string, n int) map[string]bool {
	names := make([]string, n)
	for i := range names {
		names[i] = uuid.NewString()
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan string, n)
	for _, name := range names {
		next <- name
	}
	close(next)
	for range 8 {
		wg.Go(func() {
			for name := range next {
				opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: smallSpec()}
				opt.Spec.Cancel = true
				if err := k8sClient.Create(context.Background(), opt); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	ids := map[string]bool{}
	for _, name := range names {
		ids[name] = true
	}
	return ids
}

// terminalWatch records when each optimization of a namespace was first
// seen terminal, from a watch (polling a list of hundreds of objects would
// load the machine it measures).
type terminalWatch struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func watchTerminal(b *testing.B, ns string) *terminalWatch {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	w, err := k8sClient.Watch(ctx, &v1alpha1.OptimizationList{}, client.InNamespace(ns))
	if err != nil {
		b.Fatal(err)
	}
	tw := &terminalWatch{seen: map[string]time.Time{}}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(*v1alpha1.Optimization); ok && o.Status.State.IsTerminal() {
				tw.mu.Lock()
				if _, ok := tw.seen[o.Name]; !ok {
					tw.seen[o.Name] = time.Now()
				}
				tw.mu.Unlock()
			}
		}
	}()
	return tw
}

// wait waits until every optimization of ids was seen terminal and returns
// when the last one was, as time since start.
func (tw *terminalWatch) wait(b *testing.B, start time.Time, ids map[string]bool) time.Duration {
	var last time.Time
	waitUntil(b, start, 2*time.Minute, func() bool {
		tw.mu.Lock()
		defer tw.mu.Unlock()
		n := 0
		for id := range ids {
			if at, ok := tw.seen[id]; ok {
				n++
				last = later(last, at)
			}
		}
		return n == len(ids)
	})
	return last.Sub(start)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// eventsFor tells when rc first received the event of each optimization of
// ids that it received.
func eventsFor(rc *receiver, ids map[string]bool) map[string]time.Time {
	seen := rc.firstArrivals()
	maps.DeleteFunc(seen, func(id string, _ time.Time) bool { return !ids[id] })
	return seen
}

// apiRequests counts the requests this process (managers, test client)
// made to the API server, by method, from client-go's metrics.
func apiRequests(b *testing.B) map[string]float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "rest_client_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// logRequests logs the requests made between two counts.
func logRequests(b *testing.B, before, after map[string]float64) {
	var parts []string
	for _, method := range slices.Sorted(maps.Keys(after)) {
		if n := after[method] - before[method]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", method, int(n)))
		}
	}
	b.Logf("API requests during the burst: %s", strings.Join(parts, ", "))
}
