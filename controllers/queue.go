package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"routeopt.io/routeopt/api/v1alpha1"
)

// slotField indexes Optimizations by the solve slot they hold or wait for,
// so that the queue reads only the active ones, however many are stored.
const slotField = "routeopt.io/solve-slot"

// Values of slotField; every other Optimization is left out of the index.
const (
	slotRunning = "running"
	slotQueued  = "queued"
)

// slotOf is the slotField value of opt. A running optimization holds its
// slot until its state changes or it is gone, even while it is being
// cancelled or deleted: its solve may still run. A queued one that is
// cancelled or deleted will never start, so it waits for nothing.
func slotOf(opt *v1alpha1.Optimization) string {
	switch opt.Status.State {
	case v1alpha1.StateRunning:
		return slotRunning
	case v1alpha1.StateQueued:
		if !opt.Spec.Cancel && opt.DeletionTimestamp.IsZero() {
			return slotQueued
		}
	}
	return ""
}

// indexSlot is the slotField indexer.
func indexSlot(obj client.Object) []string {
	opt, ok := obj.(*v1alpha1.Optimization)
	if !ok {
		return nil
	}
	if slot := slotOf(opt); slot != "" {
		return []string{slot}
	}
	return nil
}

// ahead reports whether a is before b in the queue: first in, first out by
// QueuedAt (sub-second for REST creates, whole seconds for kubectl ones),
// then by name and namespace so that the order is total.
func ahead(a, b *v1alpha1.Optimization) bool {
	return compareQueued(a, b) < 0
}

func compareQueued(a, b *v1alpha1.Optimization) int {
	if c := a.QueuedAt().Compare(b.QueuedAt()); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Namespace, b.Namespace)
}

// solveQueue answers how many optimizations run and which may start, from
// the slotField index of the informer cache: its work grows with the
// optimizations running or queued, never with those stored.
type solveQueue struct {
	// reader is the manager's cache, with slotField registered.
	reader client.Reader
	// max bounds running optimizations; 0 means no bound.
	max int
}

// list returns the cached optimizations in slot. They are the cache's own
// objects (no deep copy): read them, never change them.
func (q *solveQueue) list(ctx context.Context, slot string) ([]v1alpha1.Optimization, error) {
	list := &v1alpha1.OptimizationList{}
	if err := q.reader.List(ctx, list, client.MatchingFields{slotField: slot}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("unable to list %s optimizations: %w", slot, err)
	}
	return list.Items, nil
}

// counts returns the optimizations running and queued.
func (q *solveQueue) counts(ctx context.Context) (running, queued int, err error) {
	r, err := q.list(ctx, slotRunning)
	if err != nil {
		return 0, 0, err
	}
	w, err := q.list(ctx, slotQueued)
	if err != nil {
		return 0, 0, err
	}
	return len(r), len(w), nil
}

// hasSlot reports whether opt may start now: fewer than max are running,
// and every queued one ahead of it fits too. This keeps the queue first in,
// first out, and safe on a stale cache: an optimization that has started
// but still shows queued counts as ahead, so the sum stays the same.
func (q *solveQueue) hasSlot(ctx context.Context, opt *v1alpha1.Optimization) (bool, error) {
	if q.max <= 0 {
		return true, nil
	}
	running, err := q.list(ctx, slotRunning)
	if err != nil {
		return false, err
	}
	if len(running) >= q.max {
		return false, nil
	}
	queued, err := q.list(ctx, slotQueued)
	if err != nil {
		return false, err
	}
	taken := len(running)
	for i := range queued {
		if ahead(&queued[i], opt) {
			taken++
		}
	}
	return taken < q.max, nil
}

// heads returns the queued optimizations that the free slots allow to
// start, first in line first.
func (q *solveQueue) heads(ctx context.Context) ([]types.NamespacedName, error) {
	if q.max <= 0 {
		return nil, nil // every queued one starts on its own event
	}
	running, err := q.list(ctx, slotRunning)
	if err != nil {
		return nil, err
	}
	free := q.max - len(running)
	if free <= 0 {
		return nil, nil
	}
	queued, err := q.list(ctx, slotQueued)
	if err != nil {
		return nil, err
	}
	items := make([]*v1alpha1.Optimization, len(queued))
	for i := range queued {
		items[i] = &queued[i]
	}
	slices.SortFunc(items, compareQueued)
	keys := make([]types.NamespacedName, 0, min(free, len(items)))
	for _, o := range items[:min(free, len(items))] {
		keys = append(keys, types.NamespacedName{Namespace: o.Namespace, Name: o.Name})
	}
	return keys, nil
}

// slotFreed enqueues the head of the queue whenever an optimization leaves
// a slot or the queue (a solve ended, was cancelled or deleted; a queued
// one started, was cancelled or deleted). Queued optimizations without a
// slot therefore wait without polling. The informer updates its index
// before it calls handlers, so the heads see the slot free.
func (q *solveQueue) slotFreed() handler.EventHandler {
	enqueue := func(ctx context.Context, wq workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		keys, err := q.heads(ctx)
		if err != nil {
			// Only a missing index fails here, a wiring bug: say so.
			ctrl.LoggerFrom(ctx).Error(err, "Unable to find the head of the solve queue")
			return
		}
		for _, k := range keys {
			wq.Add(reconcile.Request{NamespacedName: k})
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, wq workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if left(e.ObjectOld, e.ObjectNew) {
				enqueue(ctx, wq)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, wq workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if opt, ok := e.Object.(*v1alpha1.Optimization); ok && slotOf(opt) != "" {
				enqueue(ctx, wq)
			}
		},
	}
}

// left reports whether an update took an optimization out of its slot or
// out of the queue.
func left(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(*v1alpha1.Optimization)
	n, ok2 := newObj.(*v1alpha1.Optimization)
	if !ok1 || !ok2 {
		return false
	}
	before := slotOf(o)
	return before != "" && before != slotOf(n)
}
