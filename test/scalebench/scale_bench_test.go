// Package scalebench is the scale benchmark: routeopt's manager and
// REST API run as separate processes of the real binary, as in production,
// against envtest's kube-apiserver and etcd holding -scale stored (terminal)
// optimizations, 30% of them with 500 orders. The same figures are taken
// first with -baseline stored, in the same run on the same control plane, so
// that whether they grow with the number stored shows as a ratio on a noisy
// machine. It has benchmarks only: plain `go test` runs nothing. Run:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench Scale -benchtime 1x -timeout 2h ./test/scalebench/ -scale 10000
package scalebench

import (
	"routeopt.io/routeopt/test/requests"

	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/test/e2e/framework"
	"routeopt.io/routeopt/test/internal/optwatch"
	"routeopt.io/routeopt/webserver/apikey"
)

var (
	scale    = flag.Int("scale", 1000, "stored optimizations of the measured phase (10000 for the published figures)")
	baseline = flag.Int("baseline", 100, "stored optimizations of the reference phase, measured first in the same run")
	writers  = flag.Int("writers", 8, "concurrent writers filling etcd (not measured)")
	creates  = flag.Int("creates", 20, "REST creates whose reconcile latency is measured")
	handoffs = flag.Int("handoffs", 5, "solve-to-solve hand-offs measured with one solve slot")
	gets     = flag.Int("gets", 500, "REST GETs of stored records measured for p99")
	pages    = flag.Int("pages", 20, "REST list pages (page_size 100) measured")
)

const (
	operatorNamespace = v1alpha1.DefaultOperatorNamespace
	company           = "scale"
	// largeShare of the stored optimizations have largeOrders orders, the
	// rest 10 to 100.
	largeShare  = 0.3
	largeOrders = 500
)

// env is the control plane and what every phase shares.
var env struct {
	testEnv    *envtest.Environment
	client     client.WithWatch
	kubeconfig string
	binary     string
	namespace  string
	key        string
	stored     []string // names of the stored optimizations
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if env.testEnv != nil {
		_ = env.testEnv.Stop()
	}
	// WorkDir holds the binary and the processes' logs: kept on failure.
	if dir, err := framework.WorkDir(); err == nil {
		if code == 0 {
			_ = os.RemoveAll(dir)
		} else {
			fmt.Fprintln(os.Stderr, "scalebench: logs kept in", dir)
		}
	}
	os.Exit(code)
}

// figures are one phase's measurements; reconcileMeanSec is the manager's
// own mean reconcile time over the creates and hand-offs.
type figures struct {
	managerRSS, managerHWM     float64 // MB
	apiRSS, apiHWM             float64 // MB
	managerStartup             time.Duration
	reconcileP50, reconcileMax time.Duration
	handoffMean, handoffMax    time.Duration
	getP50, getP99, listP99    time.Duration
	reconcileMeanSec           float64 // manager's mean reconcile time, s
}

// BenchmarkScale measures the reference phase (-baseline stored), then fills
// etcd up to -scale and measures again with fresh manager and API
// processes, and reports the second phase's figures with their ratio to
// the first. The fill is not measured. See the package comment.
func BenchmarkScale(b *testing.B) {
	if *scale < *baseline {
		b.Fatalf("-scale %d is below -baseline %d", *scale, *baseline)
	}
	startEnv(b)
	var ref figures
	b.Run(fmt.Sprintf("stored=%d", *baseline), func(b *testing.B) {
		fill(b, *baseline)
		ref = measure(b)
		report(b, ref, nil)
	})
	b.Run(fmt.Sprintf("stored=%d", *scale), func(b *testing.B) {
		fill(b, *scale)
		f := measure(b)
		report(b, f, &ref)
	})
}

func report(b *testing.B, f figures, ref *figures) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(f.managerRSS, "manager-RSS-MB")
	b.ReportMetric(f.managerHWM, "manager-HWM-MB")
	b.ReportMetric(f.apiRSS, "api-RSS-MB")
	b.ReportMetric(f.apiHWM, "api-HWM-MB")
	b.ReportMetric(f.managerStartup.Seconds(), "manager-settle-s")
	b.ReportMetric(ms(f.reconcileP50), "create-to-queued-p50-ms")
	b.ReportMetric(ms(f.reconcileMax), "create-to-queued-max-ms")
	b.ReportMetric(f.reconcileMeanSec*1000, "reconcile-mean-ms")
	b.ReportMetric(ms(f.handoffMean), "handoff-mean-ms")
	b.ReportMetric(ms(f.handoffMax), "handoff-max-ms")
	b.ReportMetric(ms(f.getP50), "get-p50-ms")
	b.ReportMetric(ms(f.getP99), "get-p99-ms")
	b.ReportMetric(ms(f.listP99), "list-p99-ms")
	if ref == nil {
		return
	}
	ratio := func(a, r float64) float64 {
		if r == 0 {
			return 0
		}
		return a / r
	}
	b.ReportMetric(ratio(f.managerRSS, ref.managerRSS), "manager-RSS-x")
	b.ReportMetric(ratio(ms(f.reconcileP50), ms(ref.reconcileP50)), "create-to-queued-p50-x")
	b.ReportMetric(ratio(f.reconcileMeanSec, ref.reconcileMeanSec), "reconcile-mean-x")
	b.ReportMetric(ratio(ms(f.handoffMean), ms(ref.handoffMean)), "handoff-mean-x")
	b.ReportMetric(ratio(ms(f.getP99), ms(ref.getP99)), "get-p99-x")
}

// startEnv starts etcd and kube-apiserver with routeopt's CRDs, builds the
// binary, writes an admin kubeconfig and onboards one tenant with a key.
func startEnv(b *testing.B) {
	b.Helper()
	built := make(chan error, 1)
	go func() { _, err := framework.BuildRouteopt(); built <- err }()
	crds, err := crd.CRDs()
	if err != nil {
		b.Fatal(err)
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		root, err := framework.RepoRoot()
		if err != nil {
			b.Fatal(err)
		}
		assets = filepath.Join(root, "bin", "k8s")
	}
	env.testEnv = &envtest.Environment{BinaryAssetsDirectory: assets, CRDs: crds}
	if _, err := env.testEnv.Start(); err != nil {
		b.Fatalf("unable to start envtest (run make envtest): %v", err)
	}
	admin, err := env.testEnv.AddUser(envtest.User{Name: "scale-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	dir, err := framework.WorkDir()
	if err != nil {
		b.Fatal(err)
	}
	env.kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(env.kubeconfig, kc, 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := admin.Config()
	cfg.QPS, cfg.Burst = -1, 0 // the fill is throttled by its writers only
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if env.client, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := env.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		b.Fatal(err)
	}
	t, err := tenant.Create(ctx, env.client, company, "Scale benchmark", operatorNamespace)
	if err != nil {
		b.Fatal(err)
	}
	env.namespace = t.Namespace
	if env.key, _, err = apikey.Create(ctx, env.client, apikey.Spec{
		Namespace: operatorNamespace, Tenant: t.ID, CompanyName: t.DisplayName, Name: "scale", Scopes: apikey.AllScopes,
	}); err != nil {
		b.Fatal(err)
	}
	if err := <-built; err != nil {
		b.Fatal(err)
	}
	env.binary, _ = framework.BuildRouteopt()
}

// fill stores completed optimizations until there are n, with *writers
// writers: a create, then the status through its subresource as the
// controller would have left it. The result ConfigMaps are not written: the
// record GET and the list never read them.
func fill(b *testing.B, n int) {
	b.Helper()
	todo := n - len(env.stored)
	if todo <= 0 {
		return
	}
	began := time.Now()
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, *writers)
	for w := range *writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(len(env.stored))))
			for next.Add(1) <= int64(todo) {
				name, err := storeCompleted(rng)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				env.stored = append(env.stored, name)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("fill: %v", err)
	}
	b.Logf("stored %d optimizations in %s (%d in all)", todo, time.Since(began).Round(time.Second), len(env.stored))
}

// storeCompleted writes one completed optimization of a random size.
func storeCompleted(rng *rand.Rand) (string, error) {
	orders := 10 + rng.IntN(91)
	if rng.Float64() < largeShare {
		orders = largeOrders
	}
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Namespace: env.namespace, Name: uuid.NewString()},
		Spec:       requests.Spec("scale benchmark", orders),
	}
	ctx := context.Background()
	if err := env.client.Create(ctx, opt); err != nil {
		return "", err
	}
	// Finished within the last 29 days: inside the default 30-day
	// retention, so the manager keeps them all.
	finished := time.Now().Add(-time.Duration(rng.Int64N(int64(29 * 24 * time.Hour)))).Truncate(time.Second)
	opt.Status = v1alpha1.OptimizationStatus{
		State:              v1alpha1.StateCompleted,
		Progress:           100,
		OrderCount:         int32(orders),
		VehicleCount:       opt.Spec.Fleet.Count,
		StartedAt:          &metav1.Time{Time: finished.Add(-30 * time.Second)},
		FinishedAt:         &metav1.Time{Time: finished},
		ResultRef:          opt.ResultConfigMapName(),
		ObservedGeneration: opt.Generation,
	}
	return opt.Name, env.client.Status().Update(ctx, opt)
}

// measure starts the manager and the API, waits until both have synced and
// the manager has worked off its start-up reconciles, and takes one phase's
// figures. Both processes stop when b ends.
func measure(b *testing.B) figures {
	b.Helper()
	var f figures
	metrics := freeAddr(b)
	began := time.Now()
	mgr := framework.StartProcess(b, framework.ProcessOptions{Name: "manager", Path: env.binary, Args: []string{
		"manager", "--kubeconfig=" + env.kubeconfig,
		"--runner=inprocess", "--max-concurrent-solves=1",
		// Plain HTTP so that the benchmark can read the work queue
		// without a token; leader election off so that the second
		// phase's manager never waits for the first one's Lease.
		"--metrics-bind-address=" + metrics, "--metrics-secure=false",
		"--health-probe-bind-address=" + freeAddr(b), "--leader-elect=false",
	}})
	listen := freeAddr(b)
	base := "http://" + listen
	api := framework.StartProcess(b, framework.ProcessOptions{Name: "api", Path: env.binary, Args: []string{
		"api", "--kubeconfig=" + env.kubeconfig, "--listen=" + listen, "--public-url=" + base,
		"--rate-limit=0", // the benchmark's GETs would otherwise meet the per-key limit
	}})
	waitAPI(b, api, base)
	waitSettled(b, mgr, "http://"+metrics+"/metrics")
	f.managerStartup = time.Since(began)
	f.managerRSS, f.managerHWM = memory(b, mgr.Pid())
	f.apiRSS, f.apiHWM = memory(b, api.Pid())

	before := scrape(b, "http://"+metrics+"/metrics")
	f.reconcileP50, f.reconcileMax = createLatency(b, base)
	f.handoffMean, f.handoffMax = handoff(b, base)
	after := scrape(b, "http://"+metrics+"/metrics")
	if n := metricSum(after, `controller_runtime_reconcile_time_seconds_count{controller="optimization"}`) -
		metricSum(before, `controller_runtime_reconcile_time_seconds_count{controller="optimization"}`); n > 0 {
		f.reconcileMeanSec = (metricSum(after, `controller_runtime_reconcile_time_seconds_sum{controller="optimization"}`) -
			metricSum(before, `controller_runtime_reconcile_time_seconds_sum{controller="optimization"}`)) / n
	}
	f.getP50, f.getP99, f.listP99 = getLatency(b, base)
	return f
}

// waitAPI waits until the API answers and lists every stored optimization:
// it listens only once its informers have synced.
func waitAPI(b *testing.B, api *framework.Process, base string) {
	b.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if api.Exited() {
			b.Fatalf("the API exited: %s", api.LogTail(30))
		}
		status, body := call(base, http.MethodGet, "/v1/optimizations?page_size=1", nil, "")
		var page struct{ Total int }
		if status == http.StatusOK && json.Unmarshal(body, &page) == nil && page.Total >= len(env.stored) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the API did not list %d optimizations: %d %s", len(env.stored), status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitSettled waits until the manager's work queues have stayed empty for
// a second after it reconciled every stored optimization once at start-up:
// a create measured before that would wait behind them.
func waitSettled(b *testing.B, mgr *framework.Process, metricsURL string) {
	b.Helper()
	deadline := time.Now().Add(20 * time.Minute)
	quiet := 0
	for quiet < 5 {
		if mgr.Exited() {
			b.Fatalf("the manager exited: %s", mgr.LogTail(30))
		}
		if time.Now().After(deadline) {
			b.Fatal("the manager did not settle")
		}
		time.Sleep(200 * time.Millisecond)
		text, err := get(metricsURL)
		if err != nil {
			quiet = 0
			continue
		}
		reconciled := metricSum(text, `controller_runtime_reconcile_total{controller="optimization"`)
		if reconciled >= float64(len(env.stored)) && metricSum(text, "workqueue_depth{") == 0 && metricSum(text, "controller_runtime_active_workers{") == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// createLatency creates *creates small optimizations through the REST API,
// one at a time, and times each from its 202 to the arrival, on a watch of
// the Kubernetes API, of the first status the controller writes (queued).
// An event arriving before the 202 counts as 0. Each is deleted once
// measured, so that no solve runs meanwhile.
func createLatency(b *testing.B, base string) (p50, worst time.Duration) {
	b.Helper()
	ctx := context.Background()
	w := watchOptimizations(b)
	defer w.Stop()
	var lat []time.Duration
	for i := range *creates {
		status, body := call(base, http.MethodPost, "/v1/optimizations", requestBody(60), fmt.Sprintf("latency-%d-%d", len(env.stored), i))
		accepted := time.Now()
		if status != http.StatusAccepted {
			b.Fatalf("create: %d %s", status, body)
		}
		id := recordID(b, body)
		seen := waitEvent(b, w, func(o *v1alpha1.Optimization) bool { return o.Name == id && o.Status.State != "" })
		lat = append(lat, max(0, seen.Sub(accepted)))
		opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: env.namespace, Name: id}}
		if err := env.client.Delete(ctx, opt); err != nil {
			b.Fatal(err)
		}
		waitDeleted(b, id)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)-1]
}

// handoff creates *handoffs+1 one-second solves at once with one solve
// slot and times, on a watch of the Kubernetes API, each start after the
// first from the latest end before it: the status's second-resolution
// timestamps are too coarse.
func handoff(b *testing.B, base string) (mean, worst time.Duration) {
	b.Helper()
	w := watchOptimizations(b)
	defer w.Stop()
	ids := map[string]bool{}
	for i := range *handoffs + 1 {
		status, body := call(base, http.MethodPost, "/v1/optimizations", requestBody(10), fmt.Sprintf("handoff-%d-%d", len(env.stored), i))
		if status != http.StatusAccepted {
			b.Fatalf("create: %d %s", status, body)
		}
		ids[recordID(b, body)] = true
	}
	running, finished := map[string]time.Time{}, map[string]time.Time{}
	for len(finished) < len(ids) {
		at, opt := nextEvent(b, w, func(o *v1alpha1.Optimization) bool { return ids[o.Name] })
		if _, seen := running[opt.Name]; !seen && opt.Status.State == v1alpha1.StateRunning {
			running[opt.Name] = at
		}
		if _, seen := finished[opt.Name]; !seen && opt.Status.State.IsTerminal() {
			if opt.Status.State != v1alpha1.StateCompleted {
				b.Fatalf("%s ended %s: %s", opt.Name, opt.Status.State, opt.Status.ErrorMessage)
			}
			finished[opt.Name] = at
		}
	}
	ends, starts := sortedTimes(finished), sortedTimes(running)
	if len(starts) != len(ids) {
		b.Fatalf("%d of %d solves were seen running", len(starts), len(ids))
	}
	var total time.Duration
	for _, s := range starts[1:] {
		i, _ := slices.BinarySearchFunc(ends, s, time.Time.Compare)
		if i == 0 {
			b.Fatalf("a solve started at %s before any ended, with one slot", s)
		}
		d := s.Sub(ends[i-1])
		total += d
		worst = max(worst, d)
	}
	return total / time.Duration(len(starts)-1), worst
}

func sortedTimes(m map[string]time.Time) []time.Time {
	out := make([]time.Time, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// waitDeleted waits until optimization id is gone: its solve (if any)
// stopped and its finalizer removed. It is not measured, so it polls.
func waitDeleted(b *testing.B, id string) {
	b.Helper()
	opt := &v1alpha1.Optimization{}
	deadline := time.Now().Add(time.Minute)
	for {
		err := env.client.Get(context.Background(), client.ObjectKey{Namespace: env.namespace, Name: id}, opt)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("optimization %s not deleted after a minute (%v): finalizers %v, status %+v", id, err, opt.Finalizers, opt.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func watchOptimizations(b *testing.B) *optwatch.Watcher {
	b.Helper()
	w, err := optwatch.Start(context.Background(), env.client, env.namespace, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// waitEvent returns the arrival time of the next event whose optimization
// matches (any event with a nil match).
func waitEvent(b *testing.B, w *optwatch.Watcher, match func(*v1alpha1.Optimization) bool) time.Time {
	b.Helper()
	at, _ := nextEvent(b, w, match)
	return at
}

func nextEvent(b *testing.B, w *optwatch.Watcher, match func(*v1alpha1.Optimization) bool) (time.Time, *v1alpha1.Optimization) {
	b.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				b.Fatal("the watch ended")
			}
			if match == nil || match(ev.Opt) {
				return ev.At, ev.Opt
			}
		case <-timeout:
			b.Fatal("no matching optimization event within 2 minutes")
		}
	}
}

// getLatency GETs *gets random stored records and *pages list pages and
// returns the GETs' p50 and p99 and the pages' p99.
func getLatency(b *testing.B, base string) (p50, p99, listP99 time.Duration) {
	b.Helper()
	if len(env.stored) == 0 {
		return 0, 0, 0
	}
	rng := rand.New(rand.NewPCG(1, uint64(len(env.stored))))
	timed := func(path string) time.Duration {
		start := time.Now()
		status, body := call(base, http.MethodGet, path, nil, "")
		d := time.Since(start)
		if status != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, status, body)
		}
		return d
	}
	var getTimes, listTimes []time.Duration
	for range *gets {
		getTimes = append(getTimes, timed("/v1/optimizations/"+env.stored[rng.IntN(len(env.stored))]))
	}
	last := (len(env.stored)+99)/100 + 1
	for i := range *pages {
		listTimes = append(listTimes, timed(fmt.Sprintf("/v1/optimizations?page_size=100&page=%d", 1 + i*last / *pages)))
	}
	return percentile(getTimes, 50), percentile(getTimes, 99), percentile(listTimes, 99)
}

func percentile(d []time.Duration, p int) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)]
}

// requestBody is a REST create of n orders that solves in one second.
func requestBody(n int) map[string]any {
	var orders []map[string]any
	for i := range n {
		orders = append(orders, map[string]any{"id": fmt.Sprintf("A-%d", i+1), "latitude": 52.45 + float64(i%97)/1000, "longitude": 13.30 + float64(i%89)/1000, "demand": 1})
	}
	return map[string]any{
		"name":    "scale benchmark",
		"depot":   map[string]any{"label": "Depot", "latitude": 52.52, "longitude": 13.405},
		"orders":  orders,
		"fleet":   map[string]any{"count": 5, "capacity": 100},
		"options": map[string]any{"solver_seconds": 1},
	}
}

func recordID(b *testing.B, body []byte) string {
	b.Helper()
	var rec struct{ ID string }
	if err := json.Unmarshal(body, &rec); err != nil || rec.ID == "" {
		b.Fatalf("no id in %s", body)
	}
	return rec.ID
}

// call sends a request with the tenant's key (and an Idempotency-Key when
// given) and returns the status and body.
func call(base, method, path string, body any, idempotencyKey string) (int, []byte) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+env.key)
	req.Header.Set("Content-Type", "application/json")
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	return string(raw), err
}

func scrape(b *testing.B, url string) string {
	b.Helper()
	text, err := get(url)
	if err != nil {
		b.Fatal(err)
	}
	return text
}

// metricSum adds the values of the samples whose line starts with prefix.
func metricSum(text, prefix string) float64 {
	var sum float64
	for line := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// memory reads a process's resident set and its peak, in MB.
func memory(b *testing.B, pid int) (rss, hwm float64) {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || name != "VmRSS" && name != "VmHWM" {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 64)
		if err != nil {
			b.Fatalf("/proc/%d/status: %q", pid, line)
		}
		if name == "VmRSS" {
			rss = kb / 1024
		} else {
			hwm = kb / 1024
		}
	}
	return rss, hwm
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(b *testing.B) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}
