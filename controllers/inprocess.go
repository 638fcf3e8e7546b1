package controllers

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// InProcessRunner runs solves in a bounded pool of goroutines of the manager
// process (dev mode and tests). Each solve has its own context, cancelled by
// Stop. When a solve ends it sends an event on Events so the controller
// reconciles at once.
type InProcessRunner struct {
	solver Solver
	slots  chan struct{}
	// Budget, when set, admits each solve's geocoding before any request is
	// sent, as the Job runner's Geocoding does; Recorder (may be nil) tells
	// the Optimization when it will be slow.
	Budget   *geobudget.Budget
	Recorder events.EventRecorder

	backgroundRuns
}

// NewInProcessRunner runs at most concurrency solves of s at once (at
// least one). Solves stop when base is cancelled.
func NewInProcessRunner(base context.Context, s Solver, concurrency int) *InProcessRunner {
	return &InProcessRunner{
		solver:         s,
		slots:          make(chan struct{}, max(1, concurrency)),
		backgroundRuns: newBackgroundRuns(base),
	}
}

// Start implements Runner.
func (r *InProcessRunner) Start(_ context.Context, opt *v1alpha1.Optimization) error {
	ctx, cancel := context.WithCancel(r.base)
	run := &backgroundRun{cancel: cancel}
	if !r.add(opt.UID, run) {
		cancel()
		return nil
	}
	opt = opt.DeepCopy() // the goroutine outlives the caller's copy
	r.wg.Add(1)
	inProcessSolves.Inc()
	go func() {
		defer r.wg.Done()
		defer inProcessSolves.Dec()
		defer cancel()
		var err error
		select {
		case r.slots <- struct{}{}:
			err = r.run(ctx, opt)
			<-r.slots
		case <-ctx.Done():
			err = ctx.Err()
		}
		r.end(run, err)
		if errors.Is(err, context.Canceled) {
			return // stopped on purpose; the controller already knows
		}
		r.notify(opt)
	}()
	return nil
}

// run admits the solve's geocoding on the budget, then runs the pipeline.
// Admission reads the orders: it waits, as the pipeline does, for an input
// ConfigMap its create has not written yet.
func (r *InProcessRunner) run(ctx context.Context, opt *v1alpha1.Optimization) error {
	ticket, err := admitGeocoding(ctx, r.solver, r.Budget, r.Recorder, opt)
	for errors.Is(err, store.ErrInputPending) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(store.InputPoll):
		}
		ticket, err = admitGeocoding(ctx, r.solver, r.Budget, r.Recorder, opt)
	}
	if err != nil {
		return err
	}
	defer ticket.Release()
	return r.solver.Run(ctx, types.NamespacedName{Namespace: opt.Namespace, Name: opt.Name}, ticket)
}

// Observe implements Runner.
func (r *InProcessRunner) Observe(_ context.Context, opt *v1alpha1.Optimization) (Outcome, error) {
	run, ok := r.lookup(opt.UID)
	switch {
	case !ok:
		return Outcome{Phase: PhaseUnknown}, nil
	case !run.done:
		return Outcome{Phase: PhaseRunning}, nil
	case run.err == nil:
		return Outcome{Phase: PhaseSucceeded}, nil
	case errors.Is(run.err, context.Canceled) && r.base.Err() != nil:
		// The process is shutting down: not a failure of this solve.
		return Outcome{Phase: PhaseRunning}, nil
	default:
		return Outcome{Phase: PhaseFailed, Failure: record.AsFailure(run.err)}, nil
	}
}

// Stop implements Runner.
func (r *InProcessRunner) Stop(_ context.Context, opt *v1alpha1.Optimization) error {
	r.stop(opt.UID)
	return nil
}

// Finish implements Runner; an in-process solve leaves nothing behind.
func (r *InProcessRunner) Finish(context.Context, *v1alpha1.Optimization) error { return nil }

// Forget implements Runner.
func (r *InProcessRunner) Forget(opt *v1alpha1.Optimization) { r.forget(opt.UID) }

var _ Runner = &InProcessRunner{}
