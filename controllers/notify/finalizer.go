package notify

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/controllers/internal/graceful"
)

// FinalizerReconciler deletes a WebhookEndpoint's signing secret when the
// endpoint is deleted, by the REST API, kubectl or anyone: the secret
// lives in another namespace, where an owner reference cannot reach, so
// the endpoint carries SigningSecretFinalizer until its secret is gone.
// It also stops the deliveries queued for the endpoint.
type FinalizerReconciler struct {
	// Client is the manager's cached client.
	Client client.Client
	// APIReader reads the Secret: Secrets are never cached.
	APIReader         client.Reader
	OperatorNamespace string
	// Dispatcher, when set, forgets the endpoint's queued deliveries.
	Dispatcher *Dispatcher
}

// Reconcile finishes the deletion of one endpoint.
func (r *FinalizerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ep := &v1alpha1.WebhookEndpoint{}
	if err := r.Client.Get(ctx, req.NamespacedName, ep); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ep.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(ep, v1alpha1.SigningSecretFinalizer) {
		return ctrl.Result{}, nil
	}
	if r.Dispatcher != nil {
		r.Dispatcher.Forget(ep.UID)
	}
	if err := r.deleteSecret(ctx, ep); err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFromWithOptions(ep.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(ep, v1alpha1.SigningSecretFinalizer)
	if err := r.Client.Patch(ctx, ep, patch); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("unable to remove the signing-secret finalizer: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted webhook endpoint's signing secret", "secret", ep.Spec.SecretName)
	return ctrl.Result{}, nil
}

// deleteSecret deletes ep's signing secret if it is there and labelled
// with ep's uid: a Secret of the same name that belongs to another
// endpoint is left alone.
func (r *FinalizerReconciler) deleteSecret(ctx context.Context, ep *v1alpha1.WebhookEndpoint) error {
	if ep.Spec.SecretName == "" {
		return nil
	}
	s := &corev1.Secret{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: r.OperatorNamespace, Name: ep.Spec.SecretName}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unable to read the signing secret: %w", err)
	}
	if s.Labels[v1alpha1.WebhookEndpointUIDLabel] != string(ep.UID) {
		return nil
	}
	if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("unable to delete the signing secret: %w", err)
	}
	return nil
}

// SetupWithManager registers the reconciler for endpoints being deleted.
func (r *FinalizerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	deleting := predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.WebhookEndpoint{}, builder.WithPredicates(deleting)).
		Named("webhook-endpoint-finalizer").
		Complete(graceful.Reconciler(r))
}
