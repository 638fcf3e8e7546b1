package controllers

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"routeopt.io/routeopt/api/v1alpha1"
)

// backgroundRuns is the bookkeeping the two kinds of work the manager runs
// in goroutines share (in-process solves, and geocoding before a solve
// Job): one run per optimization, keyed by UID so that a recreated
// optimization never adopts an old run, cancellable, remembered until
// forgotten, its end announced on Events.
type backgroundRuns struct {
	// Events receives the optimization of every run that ended other than
	// by a cancel; wire it to the controller with source.Channel.
	Events chan event.GenericEvent

	base context.Context
	mu   sync.Mutex
	runs map[types.UID]*backgroundRun
	wg   sync.WaitGroup
}

// backgroundRun is one optimization's run; done and err are guarded by the
// backgroundRuns' lock.
type backgroundRun struct {
	cancel context.CancelFunc
	done   bool
	err    error
}

// newBackgroundRuns makes the bookkeeping of runs that stop when base ends.
func newBackgroundRuns(base context.Context) backgroundRuns {
	return backgroundRuns{base: base, Events: make(chan event.GenericEvent, 1024), runs: map[types.UID]*backgroundRun{}}
}

// lookup returns a copy of uid's run.
func (b *backgroundRuns) lookup(uid types.UID) (backgroundRun, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	run, ok := b.runs[uid]
	if !ok {
		return backgroundRun{}, false
	}
	return *run, true
}

// add records run for uid unless uid already has one; it reports whether
// run was added.
func (b *backgroundRuns) add(uid types.UID, run *backgroundRun) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.runs[uid]; ok {
		return false
	}
	b.runs[uid] = run
	return true
}

// end records that run ended with err.
func (b *backgroundRuns) end(run *backgroundRun, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	run.done, run.err = true, err
}

// notify asks the controller to reconcile opt.
func (b *backgroundRuns) notify(opt *v1alpha1.Optimization) {
	obj := &v1alpha1.Optimization{}
	obj.Namespace, obj.Name = opt.Namespace, opt.Name
	select {
	case b.Events <- event.GenericEvent{Object: obj}:
	case <-b.base.Done():
	}
}

// stop cancels uid's run and forgets it.
func (b *backgroundRuns) stop(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if run, ok := b.runs[uid]; ok {
		run.cancel()
		delete(b.runs, uid)
	}
}

// forget drops uid's run once it has ended.
func (b *backgroundRuns) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if run, ok := b.runs[uid]; ok && run.done {
		delete(b.runs, uid)
	}
}

// Wait blocks until every run's goroutine has returned; call it after
// cancelling base so that no run outlives the process's shutdown.
func (b *backgroundRuns) Wait() { b.wg.Wait() }
