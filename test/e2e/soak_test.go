//go:build soak

package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
)

// TestSoak (make soak) loads the service for a bounded time as a busy
// cluster would, kills the process that runs the solves three times on the
// way, and reports what clients got, what became of every optimization and
// its webhook event, and how the processes' memory went. Two phases: the
// production layout (REST API, manager with the Job runner, solve pods on
// the simulated kubelet) and dev mode (one process with the in-process
// runner and its own control plane).

var (
	soakLoad      = flag.Duration("soak.load", 150*time.Second, "how long each phase of TestSoak loads the service")
	soakReportDir = flag.String("soak.report-dir", "", "where TestSoak writes soak-report.md and soak-report.json; default test-output/ of the repository")
)

// The load of each phase.
const (
	// soakCreateEvery is the pace of new optimizations.
	soakCreateEvery = 1500 * time.Millisecond
	// soakReaders are the clients that read records, list pages and
	// results in a loop, each pausing up to soakReadPause between requests.
	soakReaders   = 50
	soakReadPause = 400 * time.Millisecond
	// Every soakCancelEvery-th optimization is cancelled by its client
	// soon after its create, so every kind of event is sent.
	soakCancelEvery = 10
	// soakRetryFor bounds how long a client retries a create or a cancel
	// that got a 5xx or no answer (the same Idempotency-Key each time).
	soakRetryFor = 2 * time.Minute
	// soakSampleEvery is the pace of the RSS readings.
	soakSampleEvery = 5 * time.Second
	// soakWarmUp is left out of a process's memory trend: caches fill,
	// and a restarted process reads every optimization again.
	soakWarmUp = 30 * time.Second
	// soakDrainTimeout bounds the wait for every optimization to end once
	// the load has stopped; soakEventTimeout the wait for their events.
	soakDrainTimeout = 3 * time.Minute
	soakEventTimeout = time.Minute
	// soakMaxConcurrentSolves is dev mode's solve pool, as many as the
	// rendered manager's solve Jobs that a 1.5 s pace keeps busy (its
	// default, half the CPUs, would queue most of the load).
	soakMaxConcurrentSolves = 4
)

// soakKillsAt are the times of the SIGKILLs, as fractions of the load:
// the last leaves the process started after it 60 % of the load to judge
// its memory by (a dozen readings after its warm-up at 150 s of load).
var soakKillsAt = []float64{0.1, 0.25, 0.4}

// The memory rule (framework.Trend.Growing): the last third of the
// readings after the warm-up may exceed the middle third by at most 10 %
// or 16 MiB, whichever is more. A quiet run moves by a few MiB; a leak
// of L MiB a minute over a window of W minutes moves it by about L×W/3,
// so the default load catches leaks of a few tens of MiB a minute and a
// longer -soak.load slower ones.
const (
	soakMemoryRelative = 0.10
	soakMemoryAbsolute = 16 << 20
)

func TestSoak(t *testing.T) {
	ctrllog.SetLogger(logr.Discard()) // the watch's client logs nothing worth reading
	report := &soakReport{Started: time.Now().UTC(), CPUs: cpus(), LoadPerPhase: seconds(*soakLoad)}
	t.Cleanup(func() { report.write(t) })
	t.Run("JobRunner", func(t *testing.T) { soakJobRunner(t, report.add("Job runner on envtest")) })
	t.Run("DevMode", func(t *testing.T) { soakDevMode(t, report.add("Dev mode")) })
}

// soakTarget is the service one phase loads, and the process it kills.
type soakTarget struct {
	url, key, namespace string
	hooks               *hookReceiver
	// victim names the process killed and started again.
	victim string
	// kill SIGKILLs the victim and waits for it to be gone.
	kill func()
	// restart starts the victim again and returns once it is started
	// (apiDown: once the REST API answers again).
	restart func()
	// victimExited tells whether the victim has exited; one that exits on
	// its own is started again, as its Deployment or a supervisor would,
	// and fails the run.
	victimExited func() bool
	// apiDown says the REST API is down while the victim is, so that its
	// failures then are expected.
	apiDown bool
	// watchConfig is the config of the solve watch; with watchRestarts it
	// is read again after each restart (the API server restarted too).
	watchConfig   func() *rest.Config
	watchRestarts bool
	// pids are the processes whose memory is sampled, in report order.
	pids  []string
	pidOf map[string]func() int
	// exited names the processes other than the victim that ended.
	exited func() []string
	// solveRuns counts the solve runs of an optimization that succeeded,
	// as the node saw them; nil where the solves run in the victim.
	solveRuns func(id string) int
	// extra adds the phase's own figures to the report.
	extra func(rep *phaseReport)
}

// soakJobRunner is the production layout: the REST API and the manager as
// their ServiceAccounts with the rendered arguments, the Job runner, and
// every solve pod run by the simulated kubelet. The manager is killed.
func soakJobRunner(t *testing.T, rep *phaseReport) {
	install(t)
	acme := onboard(t, "soak")
	hooks := newHookReceiver()
	t.Cleanup(hooks.Close)
	allow := "--webhook-allow-target=" + hooks.target()
	// One key for all fifty clients: the per-key rate limit would answer
	// most of them 429, where a busy cluster spreads them over many keys.
	api, url := startAPIProcess(t, acme.key, allow, "--rate-limit=0")
	registerHooks(t, url, acme.key, hooks)
	kubelet := startKubelet(t, acme.namespace, nil)
	var mgr atomic.Pointer[manager]
	managerArgs := append([]string{allow}, managerLeaderElection...)
	mgr.Store(startManager(t, "manager", managerArgs...))
	restarts := 0
	runSoak(t, rep, &soakTarget{
		url: url, key: acme.key, namespace: acme.namespace, hooks: hooks,
		victim: "manager",
		kill:   func() { mgr.Load().Kill() },
		restart: func() {
			restarts++
			mgr.Store(startManager(t, fmt.Sprintf("manager-%d", restarts), managerArgs...))
		},
		victimExited: func() bool { return mgr.Load().Exited() },
		watchConfig:  func() *rest.Config { return env.Config },
		pids:         []string{"api", "manager"},
		pidOf: map[string]func() int{
			"api":     func() int { return livePid(api) },
			"manager": func() int { return livePid(mgr.Load().Process) },
		},
		exited: func() []string {
			if api.Exited() {
				return []string{"api"}
			}
			return nil
		},
		solveRuns: func(id string) int {
			n := 0
			for _, p := range solvePods(kubelet, id) {
				if p.Phase == corev1.PodSucceeded {
					n++
				}
			}
			return n
		},
		extra: func(rep *phaseReport) {
			for _, p := range kubelet.Pods() {
				switch p.Phase {
				case corev1.PodSucceeded:
					rep.SolvePods.Succeeded++
				case corev1.PodFailed:
					rep.SolvePods.Failed++
				default:
					rep.SolvePods.Other++
				}
			}
		},
	})
}

// managerLeaderElection is the binary's default leader election timing,
// which the rendered Deployment keeps, in place of startManager's fast one:
// a killed leader's lease blocks its successor for 15 s, as in production,
// and a manager on a busy control plane has 10 s to renew it.
var managerLeaderElection = []string{
	"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s",
}

// soakDevMode is `routeopt dev` on a data directory of its own, killed
// and started again on the same directory.
func soakDevMode(t *testing.T, rep *phaseReport) {
	hooks := newHookReceiver()
	t.Cleanup(hooks.Close)
	dataDir := t.TempDir()
	addr := freeAddr(t)
	url := "http://" + addr
	args := []string{
		"dev", "--data-dir=" + dataDir, "--listen=" + addr, "--control-plane-dir=" + controlPlaneAssets(t),
		"--webhook-allow-target=" + hooks.target(), "--rate-limit=0",
		fmt.Sprintf("--max-concurrent-solves=%d", soakMaxConcurrentSolves),
	}
	var dev atomic.Pointer[framework.Process]
	var key string
	start := func(n int) {
		p := framework.StartProcess(t, framework.ProcessOptions{
			Name: fmt.Sprintf("dev-%d", n), Path: framework.Routeopt(t), Args: args, Dir: dataDir, StopTimeout: 30 * time.Second,
		})
		dev.Store(p)
		key = waitDevReady(t, p, dataDir, url)
	}
	start(0)
	registerHooks(t, url, key, hooks)
	restarts := 0
	runSoak(t, rep, &soakTarget{
		url: url, key: key, namespace: v1alpha1.TenantNamespace("dev"), hooks: hooks,
		victim: "dev",
		// The process alone, as the kernel's OOM killer or a crash ends
		// it: its etcd and kube-apiserver must not outlive it.
		kill: func() {
			p := dev.Load()
			_ = syscall.Kill(p.Pid(), syscall.SIGKILL)
			<-p.Done()
		},
		restart: func() {
			restarts++
			start(restarts)
		},
		victimExited: func() bool { return dev.Load().Exited() },
		apiDown:      true,
		watchConfig: func() *rest.Config {
			cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dataDir, "kubeconfig"))
			if err != nil {
				t.Errorf("dev mode's kubeconfig: %v", err)
				return nil
			}
			return cfg
		},
		watchRestarts: true,
		pids:          []string{"dev"},
		pidOf:         map[string]func() int{"dev": func() int { return livePid(dev.Load()) }},
		exited:        func() []string { return nil },
	})
}

// waitDevReady waits for dev mode to answer GET /v1/me with the key it
// keeps in its data directory, and returns the key.
func waitDevReady(t *testing.T, p *framework.Process, dataDir, url string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if p.Exited() {
			t.Fatalf("%s exited (code %d) before it was ready", p.Name, p.ExitCode())
		}
		if raw, err := os.ReadFile(filepath.Join(dataDir, "api-key")); err == nil {
			key := strings.TrimSpace(string(raw))
			if status, _ := call(url, key, http.MethodGet, "/v1/me", nil, nil); status == http.StatusOK {
				return key
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not answer GET /v1/me with 200 within 2 minutes; last lines of its log:\n%s", p.Name, p.LogTail(40))
	return ""
}

// registerHooks registers the receiver as the tenant's webhook endpoint
// and gives it the signing secret.
func registerHooks(t *testing.T, url, key string, hooks *hookReceiver) {
	t.Helper()
	status, endpoint := call(url, key, http.MethodPost, "/v1/webhooks", map[string]any{"url": hooks.URL + "/events"}, nil)
	secret, _ := endpoint["secret"].(string)
	if status != http.StatusCreated || secret == "" {
		t.Fatalf("register a webhook: %d %v", status, endpoint)
	}
	hooks.secret.Store(&secret)
}

// livePid is p's pid while it runs, else 0.
func livePid(p *framework.Process) int {
	if p == nil || p.Exited() {
		return 0
	}
	return p.Pid()
}

// runSoak loads tg for -soak.load, killing and restarting its victim at
// soakKillsAt, drains, and fills rep with what it measured, failing the
// test where a figure is off its bound.
func runSoak(t *testing.T, rep *phaseReport, tg *soakTarget) {
	rep.LoadAverageBefore = loadAverage()
	tr := newTraffic()
	c := newAPIClient(tg.url, tg.key, tr)
	watch := newSolveWatch()
	// The watch runs for the whole phase, or for each life of the API
	// server it watches.
	var stopWatch func()
	startWatch := func() {
		cfg := tg.watchConfig()
		if cfg == nil {
			stopWatch = func() {}
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		var done sync.WaitGroup
		done.Go(func() { _ = watch.run(ctx, cfg, tg.namespace) })
		stopWatch = func() {
			cancel()
			done.Wait()
		}
	}
	startWatch()
	defer func() { stopWatch() }()
	memory := framework.StartMemorySampler(soakSampleEvery, tg.pidOf)
	defer memory.Stop()
	stalls := startStallMeter()
	defer stalls.Stop()

	var accepted ledger
	loadCtx, endLoad := context.WithTimeout(context.Background(), *soakLoad)
	defer endLoad()
	began := time.Now()
	rep.Began = began
	retryUntil := began.Add(*soakLoad + soakRetryFor)
	var readers, clients sync.WaitGroup
	var refused atomic.Int32
	for i := range soakReaders {
		rng := rand.New(rand.NewPCG(uint64(i), 0x7ead))
		readers.Go(func() { soakRead(loadCtx, c, &accepted, rng) })
	}
	readers.Go(func() {
		tick := time.NewTicker(soakCreateEvery)
		defer tick.Stop()
		for i := 0; ; i++ {
			clients.Go(func() {
				if !soakCreate(c, &accepted, &clients, i, retryUntil) {
					refused.Add(1)
				}
			})
			select {
			case <-loadCtx.Done():
				return
			case <-tick.C:
			}
		}
	})

	// The kills and restarts, from the test's goroutine: a restart that
	// fails ends the test.
	outage := func(killed bool) {
		if tg.watchRestarts {
			stopWatch()
		}
		o := soakOutage{At: time.Now(), Killed: killed}
		if killed {
			tg.kill()
		}
		tg.restart()
		o.Back = time.Now()
		rep.Outages = append(rep.Outages, o)
		if tg.watchRestarts {
			startWatch()
		}
	}
	// supervise starts a victim that exited on its own again.
	supervise := func() {
		if tg.victimExited() {
			outage(false)
		}
	}
	for _, at := range soakKillsAt {
		for next := began.Add(time.Duration(at * float64(*soakLoad))); loadCtx.Err() == nil && time.Now().Before(next); {
			supervise()
			sleepCtx(loadCtx, min(500*time.Millisecond, time.Until(next)))
		}
		if loadCtx.Err() != nil {
			break
		}
		outage(true)
	}
	for loadCtx.Err() == nil {
		supervise()
		sleepCtx(loadCtx, 500*time.Millisecond)
	}
	readers.Wait()
	clients.Wait()
	rep.LoadSeconds = seconds(time.Since(began))

	// Drain: every optimization ends, then its event arrives.
	drainBegan := time.Now()
	ids := accepted.all()
	states := map[string]string{}
	for {
		supervise()
		pending := 0
		for _, o := range ids {
			if isTerminal(states[o.id]) {
				continue
			}
			states[o.id], _ = soakState(c, o.id)
			if !isTerminal(states[o.id]) {
				pending++
			}
		}
		if pending == 0 || time.Since(drainBegan) > soakDrainTimeout {
			break
		}
		time.Sleep(2 * time.Second)
	}
	rep.DrainSeconds = seconds(time.Since(drainBegan))
	eventsBegan := time.Now()
	for missingEvents(ids, states, tg.hooks.eventsOf()) > 0 && time.Since(eventsBegan) < soakEventTimeout {
		supervise()
		time.Sleep(500 * time.Millisecond)
	}
	// Memory is judged over the load and the drain.
	memory.Stop()

	// The verdict on every optimization, read once more.
	failures := map[string]string{}
	for _, o := range ids {
		states[o.id], failures[o.id] = soakState(c, o.id)
	}
	rep.LoadAverageAfter = loadAverage()
	rep.Stalls = stalls.Stop()
	rep.evaluate(t, tg, tr, ids, states, failures, watch, memory, int(refused.Load()))
}

// soakCreate creates the i-th optimization, retrying a 5xx or no answer
// with the same Idempotency-Key until retryUntil, and cancels every
// soakCancelEvery-th soon after. It reports whether the service took it.
func soakCreate(c *apiClient, accepted *ledger, clients *sync.WaitGroup, i int, retryUntil time.Time) bool {
	body, orders := soakRequest(i)
	headers := map[string]string{"Idempotency-Key": fmt.Sprintf("soak-%05d", i)}
	for {
		var rec struct {
			ID string `json:"id"`
		}
		status := c.do(context.Background(), "create", http.MethodPost, "/v1/optimizations", body, headers, &rec)
		switch {
		case status >= 200 && status < 300 && rec.ID != "":
			accepted.add(created{id: rec.ID, index: i, orders: orders, at: time.Now()})
			if i%soakCancelEvery == soakCancelEvery-1 {
				clients.Go(func() { soakCancel(c, rec.ID, i, retryUntil) })
			}
			return true
		case status == 0 || status >= 500:
			if time.Now().After(retryUntil) {
				return false
			}
			time.Sleep(time.Second)
		default:
			return false
		}
	}
}

// soakCancel cancels optimization id half a second to three seconds after
// its create, while it is queued or running (or, 409, already ended).
func soakCancel(c *apiClient, id string, i int, retryUntil time.Time) {
	time.Sleep(500*time.Millisecond + time.Duration(i%6)*500*time.Millisecond)
	for {
		status := c.do(context.Background(), "cancel", http.MethodPost, "/v1/optimizations/"+id+"/cancel", nil, nil, nil)
		if (status != 0 && status < 500) || time.Now().After(retryUntil) {
			return
		}
		time.Sleep(time.Second)
	}
}

// soakRead is one reader: a record (half the time), a page of the list
// (three in ten) or a result (one in five, a quarter of them with the
// polylines), then a pause, until ctx ends.
func soakRead(ctx context.Context, c *apiClient, accepted *ledger, rng *rand.Rand) {
	for ctx.Err() == nil {
		id, n, ok := accepted.random(rng)
		switch p := rng.IntN(10); {
		case !ok || p < 3:
			page := 1 + rng.IntN(max(1, (n+24)/25))
			c.do(ctx, "list", http.MethodGet, fmt.Sprintf("/v1/optimizations?page=%d&page_size=25", page), nil, nil, nil)
		case p < 8:
			c.do(ctx, "record", http.MethodGet, "/v1/optimizations/"+id, nil, nil, nil)
		default:
			path := "/v1/optimizations/" + id + "/result"
			if rng.IntN(4) == 0 {
				path += "?include_path=true"
			}
			c.do(ctx, "result", http.MethodGet, path, nil, nil, nil)
		}
		sleepCtx(ctx, time.Duration(rng.Int64N(int64(soakReadPause))))
	}
}

// soakState reads optimization id's status ("not found" for a 404, ""
// when no answer came) and, when it failed, its error code and message.
func soakState(c *apiClient, id string) (string, string) {
	var rec struct {
		Status       string  `json:"status"`
		ErrorCode    *string `json:"error_code"`
		ErrorMessage *string `json:"error_message"`
	}
	switch c.do(context.Background(), "check", http.MethodGet, "/v1/optimizations/"+id, nil, nil, &rec) {
	case http.StatusOK:
		if rec.ErrorCode != nil {
			return rec.Status, *rec.ErrorCode + ": " + ptr.Deref(rec.ErrorMessage, "")
		}
		return rec.Status, ""
	case http.StatusNotFound:
		return notFound, ""
	}
	return "", ""
}

const notFound = "not found"

func isTerminal(state string) bool { return v1alpha1.State(state).IsTerminal() }

// missingEvents counts terminal optimizations without an event of their
// state.
func missingEvents(ids []created, states map[string]string, events map[string][]hookEvent) int {
	n := 0
	for _, o := range ids {
		if isTerminal(states[o.id]) && !hasEvent(events[o.id], "optimization."+states[o.id]) {
			n++
		}
	}
	return n
}

func hasEvent(events []hookEvent, typ string) bool {
	for _, e := range events {
		if e.typ == typ {
			return true
		}
	}
	return false
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
