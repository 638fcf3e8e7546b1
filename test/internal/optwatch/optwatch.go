// Package optwatch records the events of a watch on a namespace's
// Optimizations with their arrival times, for the benchmarks that time the
// operator as a watcher of the API server (kubectl get --watch) sees it.
package optwatch

import (
	"context"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Event is an Optimization as an event carried it, and when it arrived.
type Event struct {
	At  time.Time
	Opt *v1alpha1.Optimization
}

// Watcher receives the added and modified Optimizations of a namespace.
type Watcher struct {
	w       watch.Interface
	events  chan Event
	stopped atomic.Bool // closing the watch ends it with an error event
}

// Start watches namespace's Optimizations from its current
// resourceVersion, so the ones already stored are not sent again. logf,
// when set, hears the watch's errors.
func Start(ctx context.Context, c client.WithWatch, namespace string, logf func(format string, args ...any)) (*Watcher, error) {
	list := &v1alpha1.OptimizationList{}
	if err := c.List(ctx, list, client.InNamespace(namespace), client.Limit(1)); err != nil {
		return nil, err
	}
	w, err := c.Watch(ctx, &v1alpha1.OptimizationList{}, client.InNamespace(namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		return nil, err
	}
	out := &Watcher{w: w, events: make(chan Event, 1024)}
	go func() {
		defer close(out.events)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error && !out.stopped.Load() && logf != nil {
				logf("watch error: %v", ev.Object)
			}
			if opt, ok := ev.Object.(*v1alpha1.Optimization); ok && ev.Type != watch.Deleted {
				out.events <- Event{At: time.Now(), Opt: opt}
			}
		}
	}()
	return out, nil
}

// Events delivers the events in order; it is closed when the watch ends.
func (w *Watcher) Events() <-chan Event { return w.events }

// Stop ends the watch.
func (w *Watcher) Stop() {
	w.stopped.Store(true)
	w.w.Stop()
}
