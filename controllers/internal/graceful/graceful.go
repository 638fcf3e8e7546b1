// Package graceful keeps a manager's shutdown out of its error log.
package graceful

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Reconciler wraps r so that a reconcile cut short by the manager stopping
// (its context cancelled, so its API calls fail) is not reported as an
// error: controller-runtime would log a "Reconciler error" for it on every
// rolling update, and nothing is lost, since the next manager reconciles
// every object once its caches have synced. A reconcile that fails for
// another reason, a deadline included, keeps its error.
func Reconciler(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		res, err := r.Reconcile(ctx, req)
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			log.FromContext(ctx).V(1).Info("Reconcile cut short by shutdown", "error", err.Error())
			return reconcile.Result{}, nil
		}
		return res, err
	})
}
