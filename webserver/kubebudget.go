package webserver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// How long a request waits for the Kubernetes API. A request gets one
// budget (Options.RequestTimeout, --kube-timeout) for all its Kubernetes
// calls together, counted from its first call. Past the budget it goes on
// only while the API server demonstrably answers: a background probe
// (kubeProbe) reads through the API server from etcd several times per
// budget, and a request keeps waiting, up to Options.SlowRequestTimeout,
// only while those reads keep being answered, one within the last budget.
// Answers that keep coming, however late each one is, tell a busy control
// plane from a silent one: a silent API server or etcd gets a 503 at the
// budget, and a busy one the time its writes need.

// Causes of a request's Kubernetes context ending, for the logs.
var (
	errKubeSilent = errors.New("the Kubernetes API did not answer within the request's budget and its health probe is not answered either")
	errKubeSlow   = errors.New("the Kubernetes API answers too slowly: the request ran past its longest wait")
)

// kubeBudget is the Kubernetes deadline of one request, made at its first
// Kubernetes call and shared by all of them.
type kubeBudget struct {
	s      *Server
	parent context.Context

	once   sync.Once
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// context returns the request's Kubernetes context, starting its budget
// at the first call.
func (b *kubeBudget) context() context.Context {
	b.once.Do(func() {
		ctx, cancelDeadline := context.WithDeadlineCause(b.parent, time.Now().Add(b.s.opts.SlowRequestTimeout), errKubeSlow)
		ctx, cancel := context.WithCancelCause(ctx)
		b.ctx = ctx
		b.cancel = func(cause error) {
			cancel(cause)
			cancelDeadline()
		}
		b.mu.Lock()
		b.timer = time.AfterFunc(b.s.opts.RequestTimeout, b.check)
		b.mu.Unlock()
	})
	return b.ctx
}

// budgetCheckInterval is how often a request past its budget asks whether
// the API server still answers.
const budgetCheckInterval = 100 * time.Millisecond

// check runs once the budget is spent: the request waits on while the API
// server answers its probe, and ends as soon as it does not.
func (b *kubeBudget) check() {
	if b.ctx.Err() != nil {
		return
	}
	if !b.s.kubeProbe.answering(time.Now(), b.s.opts.RequestTimeout) {
		b.cancel(errKubeSilent)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.timer.Reset(budgetCheckInterval)
	}
}

// stop ends the budget once the request is answered.
func (b *kubeBudget) stop() {
	b.mu.Lock()
	b.done = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
	if b.cancel != nil {
		b.cancel(context.Canceled)
	}
}

// cause is why the request's Kubernetes context ended; nil while it runs
// or before its first call.
func (b *kubeBudget) cause() error {
	if b.ctx == nil {
		return nil
	}
	return context.Cause(b.ctx)
}

// ctxKubeBudget holds a request's *kubeBudget.
const ctxKubeBudget = "routeopt.kubeBudget"

// withKubeBudget gives the request its Kubernetes budget and ends it once
// the handlers have answered.
func (s *Server) withKubeBudget(c *gin.Context) {
	b := &kubeBudget{s: s, parent: c.Request.Context()}
	c.Set(ctxKubeBudget, b)
	defer b.stop()
	c.Next()
}

// kubeContext is the context of a call to the Kubernetes API: the
// request's one budget (see kubeBudget). The cancel function releases only
// this call's resources.
func (s *Server) kubeContext(c *gin.Context) (context.Context, context.CancelFunc) {
	if v, ok := c.Get(ctxKubeBudget); ok {
		return context.WithCancel(v.(*kubeBudget).context())
	}
	return context.WithTimeout(c.Request.Context(), s.opts.RequestTimeout)
}

// kubeProbe watches whether the API server, and etcd behind it, answer. It
// reads a named Optimization that never exists, around the cache and with
// no resourceVersion, so the API server asks etcd every time (a quorum
// read; the answer is 404). The API server's /readyz is no such evidence:
// it reuses the result of its etcd check for about a second and reports
// the last finished one while a new one hangs, so it stays ready for up to
// two seconds after etcd stops answering.
type kubeProbe struct {
	reader    client.Reader
	namespace string

	// answered is when a probe last got an answer (Unix nanoseconds);
	// zero before any.
	answered atomic.Int64
}

// probeName names the Optimization the probe reads. Reading it needs only
// the API's own permission to get Optimizations.
const probeName = "routeopt-api-probe"

// answering reports whether a probe got an answer within window before now.
func (p *kubeProbe) answering(now time.Time, window time.Duration) bool {
	if p == nil {
		return false
	}
	at := p.answered.Load()
	return at != 0 && now.Sub(time.Unix(0, at)) <= window
}

// run probes every interval until ctx ends, each probe bounded by timeout;
// probes overlap, so on a busy control plane answers keep coming every
// interval however long each one takes.
func (p *kubeProbe) run(ctx context.Context, interval, timeout time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		go p.probe(ctx, timeout)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *kubeProbe) probe(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := p.reader.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: probeName}, &v1alpha1.Optimization{})
	if err != nil && !answered(err) {
		return
	}
	now := time.Now().UnixNano()
	for {
		old := p.answered.Load()
		if old >= now || p.answered.CompareAndSwap(old, now) {
			return
		}
	}
}

// answered reports whether err is an answer of the API server that
// involved etcd: found or not found.
func answered(err error) bool {
	return err == nil || apierrors.IsNotFound(err)
}

// ProbeKubernetes starts the probe of the API server that lets requests
// wait past their budget while it answers (see kubeBudget); it runs until
// ctx ends. Without it every request answers 503 at its budget.
func (s *Server) ProbeKubernetes(ctx context.Context) {
	interval := min(max(s.opts.RequestTimeout/6, 50*time.Millisecond), time.Second)
	go s.kubeProbe.run(ctx, interval, s.opts.SlowRequestTimeout)
}
