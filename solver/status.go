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
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "Optimization",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"status":     status,
	}}
	return c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership)
}
