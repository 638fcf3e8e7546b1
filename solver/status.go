package solver

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Field managers of the two status writers. Each applies only the status
// fields it owns (server-side apply), so neither overwrites the other.
const (
	FieldOwnerSolver     = "routeopt-solver"
	FieldOwnerController = "routeopt-controller"
)

// ApplyStatus server-side-applies the given status fields of the named
// Optimization as owner. Values must be JSON-compatible (int64, not int).
func ApplyStatus(ctx context.Context, c client.Client, namespace, name, owner string, status map[string]any) error {
	return ApplyStatusAt(ctx, c, namespace, name, "", owner, status)
}

// ApplyStatusAt is ApplyStatus that succeeds only while the object is still
// at resourceVersion (a conflict otherwise); empty means unconditional.
func ApplyStatusAt(ctx context.Context, c client.Client, namespace, name, resourceVersion, owner string, status map[string]any) error {
	meta := map[string]any{"name": name, "namespace": namespace}
	if resourceVersion != "" {
		meta["resourceVersion"] = resourceVersion
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "Optimization",
		"metadata":   meta,
		"status":     status,
	}}
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership)
}
