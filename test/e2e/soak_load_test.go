//go:build soak

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// traffic counts the requests the soak's clients sent and what they got,
// by kind of request.
type traffic struct {
	mu       sync.Mutex
	kinds    map[string]*kindTraffic
	failures []failedRequest
}

// kindTraffic is the traffic of one kind of request.
type kindTraffic struct {
	total    int
	noAnswer int
	byStatus map[int]int
	// latencies are those of answered requests.
	latencies []time.Duration
}

// failedRequest is a request answered with a 5xx or not at all.
type failedRequest struct {
	Kind   string    `json:"kind"`
	Status int       `json:"status"` // 0: no answer
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Detail string    `json:"detail"`
}

func newTraffic() *traffic { return &traffic{kinds: map[string]*kindTraffic{}} }

// maxKeptFailures bounds the failures kept for the report.
const maxKeptFailures = 10000

func (tr *traffic) record(kind string, status int, start, end time.Time, detail string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	k := tr.kinds[kind]
	if k == nil {
		k = &kindTraffic{byStatus: map[int]int{}}
		tr.kinds[kind] = k
	}
	k.total++
	if status == 0 {
		k.noAnswer++
	} else {
		k.byStatus[status]++
		k.latencies = append(k.latencies, end.Sub(start))
	}
	if (status == 0 || status >= 500) && len(tr.failures) < maxKeptFailures {
		tr.failures = append(tr.failures, failedRequest{Kind: kind, Status: status, Start: start, End: end, Detail: detail})
	}
}

// apiClient is a REST client of the soak whose requests traffic counts.
type apiClient struct {
	base, key string
	http      *http.Client
	traffic   *traffic
}

func newAPIClient(base, key string, tr *traffic) *apiClient {
	// Enough idle connections for every reader, so that they keep theirs
	// as clients behind an ingress do.
	transport := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	return &apiClient{base: base, key: key, traffic: tr, http: &http.Client{Timeout: 30 * time.Second, Transport: transport}}
}

// do sends a request of the given kind and decodes a 2xx JSON answer into
// out (nil discards it). It returns the status, 0 when no answer came. A
// request cut short by ctx (the load ended) is not counted.
func (c *apiClient) do(ctx context.Context, kind, method, path string, body any, headers map[string]string, out any) int {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		panic(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err == nil {
		var raw []byte
		raw, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err == nil {
			end := time.Now()
			detail := ""
			if resp.StatusCode >= 500 {
				detail = fmt.Sprintf("X-Request-ID %s: %.300s", resp.Header.Get("X-Request-ID"), raw)
			}
			c.traffic.record(kind, resp.StatusCode, start, end, detail)
			if out != nil && resp.StatusCode < 300 {
				_ = json.Unmarshal(raw, out)
			}
			return resp.StatusCode
		}
	}
	if ctx.Err() != nil {
		return 0
	}
	c.traffic.record(kind, 0, start, time.Now(), err.Error())
	return 0
}

// created is an optimization the service accepted.
type created struct {
	id     string
	index  int
	orders int
	at     time.Time
}

// ledger is what the soak's clients created, for the readers to pick from.
type ledger struct {
	mu    sync.Mutex
	items []created
}

func (l *ledger) add(c created) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, c)
}

func (l *ledger) random(rng *rand.Rand) (string, int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) == 0 {
		return "", 0, false
	}
	return l.items[rng.IntN(len(l.items))].id, len(l.items), true
}

func (l *ledger) all() []created {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

// orderMix are the order counts the creates cycle through; each count
// alternates between the solver budgets of budgetMix.
var (
	orderMix  = []int{10, 50, 150, 500}
	budgetMix = []int{1, 2}
)

// soakRequest is the i-th create: orders spread over Berlin (some with
// time windows), a fleet big enough to carry them, a short solver budget.
func soakRequest(i int) (map[string]any, int) {
	n := orderMix[i%len(orderMix)]
	budget := budgetMix[(i/len(orderMix))%len(budgetMix)]
	rng := rand.New(rand.NewPCG(uint64(i), 0x50a4))
	orders := make([]map[string]any, n)
	for j := range orders {
		o := map[string]any{
			"id":        fmt.Sprintf("S%d-%d", i, j+1),
			"latitude":  52.45 + rng.Float64()*0.15,
			"longitude": 13.25 + rng.Float64()*0.30,
			"demand":    1,
		}
		if j%5 == 0 {
			o["time_window_start"], o["time_window_end"] = "09:00", "14:00"
		}
		orders[j] = o
	}
	return map[string]any{
		"name":    fmt.Sprintf("soak %d, %d orders", i, n),
		"depot":   map[string]any{"label": "Depot", "latitude": 52.52, "longitude": 13.405},
		"orders":  orders,
		"fleet":   map[string]any{"count": n/12 + 1, "capacity": 15},
		"options": map[string]any{"solver_seconds": budget},
	}, n
}

// hookReceiver is the tenant's webhook endpoint: it answers 200 to every
// delivery and keeps when each event came, checking every signature.
type hookReceiver struct {
	*httptest.Server
	secret atomic.Pointer[string]

	mu            sync.Mutex
	events        map[string]*hookEvent
	deliveries    int
	badSignatures int
	unreadable    int
}

// hookEvent is one event id and every time it was delivered.
type hookEvent struct {
	id, typ, optimization string
	received              []time.Time
}

func newHookReceiver() *hookReceiver {
	r := &hookReceiver{events: map[string]*hookEvent{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		now := time.Now()
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				OptimizationID string `json:"optimization_id"`
			} `json:"data"`
		}
		if err == nil {
			err = json.Unmarshal(body, &ev)
		}
		secret := r.secret.Load()
		r.mu.Lock()
		r.deliveries++
		switch {
		case err != nil || ev.ID == "":
			r.unreadable++
		case secret == nil || !signatureValid(req.Header.Get("Service-Signature"), body, *secret):
			r.badSignatures++
		default:
			e := r.events[ev.ID]
			if e == nil {
				e = &hookEvent{id: ev.ID, typ: ev.Type, optimization: ev.Data.OptimizationID}
				r.events[ev.ID] = e
			}
			e.received = append(e.received, now)
		}
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	return r
}

// target is the receiver's HOST:PORT, for --webhook-allow-target.
func (r *hookReceiver) target() string { return strings.TrimPrefix(r.URL, "http://") }

// eventsOf is a copy of the events of every optimization, by optimization.
func (r *hookReceiver) eventsOf() map[string][]hookEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]hookEvent{}
	for _, e := range r.events {
		c := *e
		c.received = slices.Clone(e.received)
		out[e.optimization] = append(out[e.optimization], c)
	}
	return out
}

// solveWatch follows every Optimization of a namespace through a watch
// and counts, per optimization, the results stored: status.resultRef is
// written by a solve only once its result is stored, as its last write,
// and a solve that starts again removes it first (server-side apply drops
// a field its manager stops sending). So each appearance of resultRef is
// one solve run to success, and so is a change of the time of the solve's
// last write (its managedFields entry) while resultRef stays: another run
// came and went while the watch was away (the API server restarted with
// the process, whose solves start before the watch is back). It also
// counts terminal states that changed.
type solveWatch struct {
	mu     sync.Mutex
	traces map[string]*solveTrace
	// relists counts the lists after the first (a watch that ended).
	relists int
}

type solveTrace struct {
	resultRef bool
	// storedAt is the time of the solve's last write while resultRef is set.
	storedAt     metav1.Time
	state        v1alpha1.State
	stores       int
	leftTerminal int
}

func newSolveWatch() *solveWatch { return &solveWatch{traces: map[string]*solveTrace{}} }

func (w *solveWatch) observe(opt *v1alpha1.Optimization) {
	w.mu.Lock()
	defer w.mu.Unlock()
	tr := w.traces[opt.Name]
	if tr == nil {
		tr = &solveTrace{}
		w.traces[opt.Name] = tr
	}
	ref := opt.Status.ResultRef != ""
	var solverWrote metav1.Time
	for _, f := range opt.ManagedFields {
		if f.Manager == record.FieldOwnerSolver && f.Subresource == "status" && f.Time != nil {
			solverWrote = *f.Time
		}
	}
	if ref && (!tr.resultRef || !solverWrote.Equal(&tr.storedAt)) {
		tr.stores++
	}
	if ref {
		tr.storedAt = solverWrote
	}
	if tr.state.IsTerminal() && opt.Status.State != tr.state {
		tr.leftTerminal++
	}
	tr.resultRef, tr.state = ref, opt.Status.State
}

// trace is a copy of what the watch saw of optimization id.
func (w *solveWatch) trace(id string) solveTrace {
	w.mu.Lock()
	defer w.mu.Unlock()
	if tr := w.traces[id]; tr != nil {
		return *tr
	}
	return solveTrace{}
}

// run lists and watches the namespace's Optimizations with cfg until ctx
// ends, listing again whenever a watch ends (an API server that restarted,
// a watch that fell behind).
func (w *solveWatch) run(ctx context.Context, cfg *rest.Config, namespace string) error {
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return err
	}
	first := true
	for ctx.Err() == nil {
		list := &v1alpha1.OptimizationList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			sleepCtx(ctx, 500*time.Millisecond)
			continue
		}
		if !first {
			w.mu.Lock()
			w.relists++
			w.mu.Unlock()
		}
		first = false
		for i := range list.Items {
			w.observe(&list.Items[i])
		}
		watch, err := c.Watch(ctx, &v1alpha1.OptimizationList{}, &client.ListOptions{
			Namespace: namespace, Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion},
		})
		if err != nil {
			sleepCtx(ctx, 500*time.Millisecond)
			continue
		}
		for ev := range watch.ResultChan() {
			if opt, ok := ev.Object.(*v1alpha1.Optimization); ok {
				w.observe(opt)
			}
		}
		watch.Stop()
	}
	return nil
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// percentile is the p-th percentile (0-100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// sortedDurations is a sorted copy of d.
func sortedDurations(d []time.Duration) []time.Duration {
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

// stallMeter measures how late the test process wakes from 100 ms sleeps:
// on a machine so busy that the test itself stalls, the service stalls
// too, and its answers then say more about the machine than about it.
type stallMeter struct {
	stop, done chan struct{}

	mu     sync.Mutex
	stalls []stall
}

// stall is a wake-up at least minStall late.
type stall struct {
	At   time.Time     `json:"at"`
	Late time.Duration `json:"late_ns"`
}

const minStall = 500 * time.Millisecond

func startStallMeter() *stallMeter {
	m := &stallMeter{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		const tick = 100 * time.Millisecond
		for {
			began := time.Now()
			select {
			case <-m.stop:
				return
			case <-time.After(tick):
			}
			if late := time.Since(began) - tick; late >= minStall {
				m.mu.Lock()
				m.stalls = append(m.stalls, stall{At: began, Late: late})
				m.mu.Unlock()
			}
		}
	}()
	return m
}

// Stop ends the measure and returns the stalls seen.
func (m *stallMeter) Stop() []stall {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.stalls)
}
