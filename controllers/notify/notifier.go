package notify

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/controllers/internal/graceful"
)

// Reconciler hands the events that terminal Optimizations owe to the
// Dispatcher. It reads only the cache and returns at once: with nothing
// pending (the common case, including every record the notifier writes
// coming back as an update) a reconcile makes no API call.
type Reconciler struct {
	// Client is the manager's cached client.
	Client     client.Client
	Dispatcher *Dispatcher
}

// The notifier reads endpoints everywhere (routeopt's own kind), writes
// their status, removes their finalizer, and reads and deletes signing
// secrets in the operator's namespace only. optimizations/status patch is
// the controller's already.
// +kubebuilder:rbac:groups=routeopt.io,resources=webhookendpoints,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=routeopt.io,resources=webhookendpoints/status,verbs=patch
// +kubebuilder:rbac:groups="",namespace=routeopt-system,resources=secrets,verbs=get;delete

// Reconcile enqueues the deliveries one Optimization owes.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	opt := &v1alpha1.Optimization{}
	if err := r.Client.Get(ctx, req.NamespacedName, opt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !opt.Status.State.IsTerminal() {
		return ctrl.Result{}, nil
	}
	endpoints := &v1alpha1.WebhookEndpointList{}
	if err := r.Client.List(ctx, endpoints, client.InNamespace(opt.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("unable to list webhook endpoints: %w", err)
	}
	for _, ep := range Pending(opt, endpoints.Items) {
		r.Dispatcher.Enqueue(opt, ep)
	}
	return ctrl.Result{}, nil
}

// terminal keeps events of Optimizations in a terminal state: only those
// owe anything.
var terminal = predicate.NewPredicateFuncs(func(o client.Object) bool {
	opt, ok := o.(*v1alpha1.Optimization)
	return ok && opt.Status.State.IsTerminal()
})

// created keeps only the creation of objects (and their first listing at
// start-up).
var created = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return true },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// SetupWithManager registers the reconciler. A new endpoint also looks at
// the terminal optimizations of its namespace that finished no earlier
// than it was created: one that finished before the cache saw the
// endpoint would otherwise be missed.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Optimization{}, builder.WithPredicates(terminal)).
		Watches(&v1alpha1.WebhookEndpoint{}, handler.EnqueueRequestsFromMapFunc(r.finishedSince), builder.WithPredicates(created)).
		Named("webhook-notifier").
		Complete(graceful.Reconciler(r))
}

// finishedSince maps a new endpoint to the terminal optimizations of its
// namespace that finished at or after its creation. It reads the cache's
// own objects (no deep copy of a tenant's every optimization per endpoint).
func (r *Reconciler) finishedSince(ctx context.Context, o client.Object) []reconcile.Request {
	list := &v1alpha1.OptimizationList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Info("Unable to list optimizations for a new webhook endpoint", "error", err.Error())
		return nil
	}
	since := o.GetCreationTimestamp()
	var reqs []reconcile.Request
	for i := range list.Items {
		opt := &list.Items[i]
		if opt.Status.State.IsTerminal() && opt.Status.FinishedAt != nil && !opt.Status.FinishedAt.Before(&since) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(opt)})
		}
	}
	return reqs
}
