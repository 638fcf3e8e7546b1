// Package kubebudget decides how long a REST request waits for the
// Kubernetes API, and tells an API that cannot answer from one that
// refused.
//
// A request gets one budget for all its Kubernetes calls together, counted
// from its first call. Past the budget it goes on only while the API
// server demonstrably answers: a background Probe reads through the API
// server from etcd several times per budget, and a request keeps waiting,
// up to its longest wait, only while those reads keep being answered, one
// within the last budget. Answers that keep coming, however late each one
// is, tell a busy control plane from a silent one: a silent API server or
// etcd gets a 503 at the budget, and a busy one the time its writes need.
package kubebudget

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Causes of a request's Kubernetes context ending, for the logs.
var (
	errSilent = errors.New("the Kubernetes API did not answer within the request's budget and its health probe is not answered either")
	errSlow   = errors.New("the Kubernetes API answers too slowly: the request ran past its longest wait")
)

// Budget is the Kubernetes deadline of one request, made at its first
// Kubernetes call and shared by all of them.
type Budget struct {
	parent context.Context
	// timeout is the budget; slowTimeout the longest wait while the probe
	// is answered.
	timeout, slowTimeout time.Duration
	probe                *Probe

	once   sync.Once
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// New is the budget of a request whose context is parent: timeout for all
// its Kubernetes calls, and up to slowTimeout while probe is answered.
func New(parent context.Context, timeout, slowTimeout time.Duration, probe *Probe) *Budget {
	return &Budget{parent: parent, timeout: timeout, slowTimeout: slowTimeout, probe: probe}
}

// Context returns the request's Kubernetes context, starting its budget
// at the first call.
func (b *Budget) Context() context.Context {
	b.once.Do(func() {
		ctx, cancelDeadline := context.WithDeadlineCause(b.parent, time.Now().Add(b.slowTimeout), errSlow)
		ctx, cancel := context.WithCancelCause(ctx)
		b.ctx = ctx
		b.cancel = func(cause error) {
			cancel(cause)
			cancelDeadline()
		}
		b.mu.Lock()
		b.timer = time.AfterFunc(b.timeout, b.check)
		b.mu.Unlock()
	})
	return b.ctx
}

// checkInterval is how often a request past its budget asks whether
// the API server still answers.
const checkInterval = 100 * time.Millisecond

// check runs once the budget is spent: the request waits on while the API
// server answers its probe, and ends as soon as it does not.
func (b *Budget) check() {
	if b.ctx.Err() != nil {
		return
	}
	if !b.probe.Answering(time.Now(), b.timeout) {
		b.cancel(errSilent)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.timer.Reset(checkInterval)
	}
}

// Stop ends the budget once the request is answered.
func (b *Budget) Stop() {
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

// Cause is why the request's Kubernetes context ended; nil while it runs
// or before its first call.
func (b *Budget) Cause() error {
	if b.ctx == nil {
		return nil
	}
	return context.Cause(b.ctx)
}
