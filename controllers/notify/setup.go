package notify

import (
	"context"
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Setup registers the notifier on mgr: the Dispatcher (a leader-only
// Runnable), the Reconciler that feeds it and the FinalizerReconciler of
// endpoints. It returns the Dispatcher.
//
// The informers the notifier reads (Optimizations, WebhookEndpoints) are
// made here, before the manager starts, so that they start and sync with
// its cache rather than later when a controller first asks for them.
func Setup(ctx context.Context, mgr ctrl.Manager, o Options) (*Dispatcher, error) {
	if o.Policy == nil {
		return nil, errors.New("the webhook notifier needs a target policy")
	}
	if o.OperatorNamespace == "" {
		return nil, errors.New("the webhook notifier needs the operator namespace")
	}
	for _, obj := range []client.Object{&v1alpha1.Optimization{}, &v1alpha1.WebhookEndpoint{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return nil, fmt.Errorf("unable to watch %T: %w", obj, err)
		}
	}
	d := NewDispatcher(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetLogger().WithName("webhook-notifier"), o)
	if err := mgr.Add(d); err != nil {
		return nil, fmt.Errorf("unable to add the webhook dispatcher: %w", err)
	}
	if err := (&Reconciler{Client: mgr.GetClient(), Dispatcher: d}).SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("unable to set up the webhook notifier: %w", err)
	}
	f := &FinalizerReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OperatorNamespace: o.OperatorNamespace, Dispatcher: d}
	if err := f.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("unable to set up the webhook endpoint finalizer: %w", err)
	}
	return d, nil
}
