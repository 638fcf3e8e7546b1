package notify

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/controllers/notify/delivery"
)

// DefaultWorkersPerEndpoint bounds the deliveries in flight to one
// endpoint. A receiver that never answers holds a worker for about 18 s
// per event (three attempts of 5 s, 1 s and 2 s apart), and it is disabled
// only after 20 such events: with one worker that takes six minutes during
// which every other event for it waits; with four, a minute and a half.
// Four is also what the delivery client keeps as idle connections per host
// (delivery.Client), so a healthy receiver is served over reused
// connections, and at most four requests at once is a load that any
// receiver of a hosted API's webhooks takes. More would not speed up a
// healthy receiver much: each delivery also makes a few API calls, which
// then dominate. Workers exist only while their endpoint's queue has work,
// so idle endpoints cost nothing.
const DefaultWorkersPerEndpoint = 4

// Retry delays. A Secret missing from a young endpoint is looked for again
// soon (the REST API writes it a moment after the endpoint); an API error
// backs off from minRetry to maxRetry.
const (
	secretGrace = 30 * time.Second
	secretRetry = time.Second
	minRetry    = 500 * time.Millisecond
	maxRetry    = 30 * time.Second
	// recordGrace is how long the record of a finished delivery may still
	// be written after the manager began to stop: one that is lost costs a
	// repeated delivery.
	recordGrace = 2 * time.Second
)

// Options configure the notifier.
type Options struct {
	// Policy is which receivers deliveries may reach (SSRF guard, allowed
	// local targets, trusted roots); delivery.Client dials under it.
	Policy *webhook.Policy
	// PublicURL is the base of the links in events.
	PublicURL string
	// OperatorNamespace holds the signing-secret Secrets.
	OperatorNamespace string
	// WorkersPerEndpoint: 0 means DefaultWorkersPerEndpoint.
	WorkersPerEndpoint int
	// Clock: nil means the real one.
	Clock clock.Clock
}

// pair is one event (an optimization's terminal state) for one endpoint.
type pair struct{ optimization, endpoint types.UID }

// job is the delivery of a pair, and how far it got.
type job struct {
	pair
	key          types.NamespacedName // the optimization
	endpointName string               // in the optimization's namespace
	queued       time.Time
	finishedAt   time.Time
	eventID      string
	done         *outcome // the delivery ended: only recording is left
	recorded     bool
	errors       int // consecutive API errors, for the backoff
}

// endpointQueue is one endpoint's FIFO of jobs and its workers.
type endpointQueue struct {
	uid     types.UID
	ctx     context.Context // cancelled when the endpoint is forgotten or the dispatcher stops
	cancel  context.CancelFunc
	items   []*job
	workers int
	delayed int // jobs waiting on a retry timer
}

// Dispatcher delivers events, per endpoint through a queue and at most
// WorkersPerEndpoint workers, so a slow or dead receiver delays only its
// own events. It is a manager Runnable that runs on the leader only; it
// stops, cancelling requests in flight, when the manager stops or loses
// leadership, and what it had not recorded is delivered by the next leader.
type Dispatcher struct {
	client    client.Client
	apiReader client.Reader
	opts      Options
	http      *http.Client
	clock     clock.Clock
	workers   int
	log       logr.Logger

	mu       sync.Mutex
	ctx      context.Context // set by Start
	stopped  bool
	queues   map[types.UID]*endpointQueue
	inflight map[pair]struct{}
	wg       sync.WaitGroup

	readMu sync.Mutex
	reads  map[types.NamespacedName]*readCall // optimization reads before sending

	batchMu sync.Mutex
	batches map[types.UID]*batch // by optimization

	endpointLocks keyedLocks
	stateMu       sync.Mutex
	states        map[types.UID]*endpointState    // by endpoint
	secrets       map[types.UID]signingSecretCopy // by endpoint
}

// NewDispatcher delivers with o, writing records with c and reading
// around the cache with apiReader.
func NewDispatcher(c client.Client, apiReader client.Reader, log logr.Logger, o Options) *Dispatcher {
	d := &Dispatcher{
		client: c, apiReader: apiReader, opts: o, http: delivery.Client(o.Policy), clock: o.Clock,
		workers: o.WorkersPerEndpoint, log: log,
		queues: map[types.UID]*endpointQueue{}, inflight: map[pair]struct{}{},
		batches: map[types.UID]*batch{}, states: map[types.UID]*endpointState{},
		secrets: map[types.UID]signingSecretCopy{}, reads: map[types.NamespacedName]*readCall{},
	}
	if d.clock == nil {
		d.clock = clock.RealClock{}
	}
	if d.workers <= 0 {
		d.workers = DefaultWorkersPerEndpoint
	}
	return d
}

// NeedLeaderElection: only the leader delivers.
func (d *Dispatcher) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx ends, then waits for them: requests in
// flight are cancelled at once.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	d.ctx = ctx
	for _, q := range d.queues {
		q.ctx, q.cancel = context.WithCancel(ctx)
		d.spawn(q)
	}
	d.mu.Unlock()
	<-ctx.Done()
	d.mu.Lock()
	d.stopped = true // no worker starts after this, so Wait is safe
	d.mu.Unlock()
	d.wg.Wait()
	d.http.CloseIdleConnections()
	return nil
}

// Enqueue asks for the delivery of opt's event to ep unless that pair is
// already queued or in flight. It never blocks.
func (d *Dispatcher) Enqueue(opt *v1alpha1.Optimization, ep *v1alpha1.WebhookEndpoint) {
	j := &job{
		pair:         pair{optimization: opt.UID, endpoint: ep.UID},
		key:          types.NamespacedName{Namespace: opt.Namespace, Name: opt.Name},
		endpointName: ep.Name,
		queued:       time.Now(),
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if _, ok := d.inflight[j.pair]; ok {
		return
	}
	d.inflight[j.pair] = struct{}{}
	q := d.queues[ep.UID]
	if q == nil {
		q = &endpointQueue{uid: ep.UID}
		if d.ctx != nil {
			q.ctx, q.cancel = context.WithCancel(d.ctx)
		}
		d.queues[ep.UID] = q
	}
	q.items = append(q.items, j)
	d.spawn(q)
}

// Forget cancels what is queued or in flight for endpoint uid (it is being
// deleted): nothing more is sent to it.
func (d *Dispatcher) Forget(uid types.UID) {
	d.forgetEndpoint(uid)
	d.mu.Lock()
	defer d.mu.Unlock()
	q := d.queues[uid]
	if q == nil {
		return
	}
	delete(d.queues, uid)
	if q.cancel != nil {
		q.cancel() // its workers and timers drop its jobs
		return
	}
	for _, j := range q.items {
		delete(d.inflight, j.pair)
	}
	q.items = nil
}

// spawn starts workers for q's jobs, up to the bound. Called with d.mu held.
func (d *Dispatcher) spawn(q *endpointQueue) {
	if d.ctx == nil || d.stopped {
		return
	}
	for q.workers < d.workers && q.workers < len(q.items) {
		q.workers++
		d.wg.Add(1)
		go d.work(q)
	}
}

// retire removes q once nothing refers to it. Called with d.mu held.
func (d *Dispatcher) retire(q *endpointQueue) {
	if q.workers > 0 || len(q.items) > 0 || q.delayed > 0 {
		return
	}
	if d.queues[q.uid] == q {
		delete(d.queues, q.uid)
	}
	if q.cancel != nil {
		q.cancel()
	}
}

// work takes q's jobs one by one until q is empty or cancelled.
func (d *Dispatcher) work(q *endpointQueue) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		if q.ctx.Err() != nil {
			for _, j := range q.items {
				delete(d.inflight, j.pair)
			}
			q.items = nil
		}
		if len(q.items) == 0 {
			q.workers--
			d.retire(q)
			d.mu.Unlock()
			return
		}
		j := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		d.mu.Unlock()

		retry := d.handle(q.ctx, j)

		d.mu.Lock()
		if retry > 0 && q.ctx.Err() == nil {
			q.delayed++
			time.AfterFunc(retry, func() { d.requeue(q, j) })
		} else {
			delete(d.inflight, j.pair)
		}
		d.mu.Unlock()
	}
}

// requeue puts j back on q after its retry delay.
func (d *Dispatcher) requeue(q *endpointQueue, j *job) {
	d.mu.Lock()
	defer d.mu.Unlock()
	q.delayed--
	if q.ctx.Err() != nil || d.stopped {
		delete(d.inflight, j.pair)
		d.retire(q)
		return
	}
	q.items = append(q.items, j)
	d.spawn(q)
}

// handle takes j as far as it goes and returns when to try again, or 0
// when j is finished (delivered and recorded, skipped, or abandoned).
func (d *Dispatcher) handle(ctx context.Context, j *job) time.Duration {
	log := d.log.WithValues("optimization", j.key, "endpoint", j.endpointName, "endpointUID", j.endpoint)
	retry, err := d.process(ctx, j)
	if err != nil {
		j.errors++
		retry = min(maxRetry, minRetry<<min(j.errors, 10))
		if ctx.Err() == nil {
			log.Info("Unable to deliver webhook event, retrying", "error", err.Error(), "retryAfter", retry.String())
		}
		return retry
	}
	j.errors = 0
	return retry
}

// process sends j's event unless that already happened, then records the
// outcome on the optimization and on the endpoint.
func (d *Dispatcher) process(ctx context.Context, j *job) (time.Duration, error) {
	if j.done == nil {
		o, retry, err := d.send(ctx, j)
		if err != nil || o == nil {
			return retry, err
		}
		j.done = o
	}
	// A delivery that ended as the manager stopped is still recorded,
	// briefly, so that it is not repeated.
	rctx, cancel := withGrace(ctx, recordGrace)
	defer cancel()
	if !j.recorded {
		if err := d.record(rctx, j); err != nil {
			return 0, err
		}
		j.recorded = true
		observe(j.done, j.finishedAt)
	}
	if j.done.result == v1alpha1.WebhookDropped {
		return 0, nil
	}
	return 0, d.updateEndpoint(rctx, j)
}

// withGrace is a context that ends grace after parent does.
func withGrace(parent context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(parent, func() { time.AfterFunc(grace, cancel) })
	return ctx, func() {
		stop()
		cancel()
	}
}

// keyedLocks serializes work per key (an optimization's or endpoint's uid).
type keyedLocks struct {
	mu    sync.Mutex
	locks map[types.UID]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	refs int
}

// lock locks key and returns its unlock.
func (k *keyedLocks) lock(key types.UID) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[types.UID]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
