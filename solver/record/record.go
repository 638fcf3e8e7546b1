// Package record is the contract between routeopt's writers of an
// Optimization's status: which writer owns which field, a typed
// server-side-apply writer for each, and the Failure a solve ends with.
// The controller and the solve pipeline (in a Job or in process) both use
// it, so neither can write a field the other owns.
//
// Server-side apply removes a field its manager stops sending, so every
// write carries all the fields its owner wants to keep.
package record

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Field managers of the status writers. Each field of the status has
// exactly one of them as owner.
const (
	FieldOwnerController = "routeopt-controller"
	FieldOwnerSolver     = "routeopt-solver"
	FieldOwnerNotifier   = "routeopt-notifier"
)

// ControllerStatus is the part of the status the controller owns: the
// state and everything decided with it.
type ControllerStatus struct {
	State              v1alpha1.State     `json:"state"`
	ErrorCode          string             `json:"errorCode,omitempty"`
	ErrorMessage       string             `json:"errorMessage,omitempty"`
	StartedAt          *metav1.Time       `json:"startedAt,omitempty"`
	FinishedAt         *metav1.Time       `json:"finishedAt,omitempty"`
	OrderCount         int32              `json:"orderCount,omitempty"`
	VehicleCount       int32              `json:"vehicleCount,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// SolverStatus is the part the solve pipeline owns: how far it got and
// what it found. Stage is the solver's alone; while no solve has reported
// one, readers show the state's own (v1alpha1.OptimizationStatus.DisplayStage).
type SolverStatus struct {
	Stage     v1alpha1.Stage    `json:"stage,omitempty"`
	Progress  int32             `json:"progress,omitempty"`
	ResultRef string            `json:"resultRef,omitempty"`
	Summary   *v1alpha1.Summary `json:"summary,omitempty"`
}

// NotifierStatus is the part the webhook notifier owns.
type NotifierStatus struct {
	Webhooks []v1alpha1.WebhookDelivery `json:"webhooks,omitempty"`
}

// ApplyController writes the controller's fields of the named Optimization.
// A non-empty resourceVersion makes the write conditional: a decision taken
// on a stale copy is refused with a conflict.
func ApplyController(ctx context.Context, c client.Client, key types.NamespacedName, resourceVersion string, st ControllerStatus) error {
	return apply(ctx, c, key, resourceVersion, FieldOwnerController, st)
}

// ApplySolver writes the solver's fields of the named Optimization.
func ApplySolver(ctx context.Context, c client.Client, key types.NamespacedName, st SolverStatus) error {
	return apply(ctx, c, key, "", FieldOwnerSolver, st)
}

// ApplyNotifier writes the notifier's fields, conditionally on
// resourceVersion as ApplyController does.
func ApplyNotifier(ctx context.Context, c client.Client, key types.NamespacedName, resourceVersion string, st NotifierStatus) error {
	return apply(ctx, c, key, resourceVersion, FieldOwnerNotifier, st)
}

func apply(ctx context.Context, c client.Client, key types.NamespacedName, resourceVersion, owner string, fields any) error {
	status, err := toMap(fields)
	if err != nil {
		return err
	}
	meta := map[string]any{"name": key.Name, "namespace": key.Namespace}
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

// toMap turns a typed status part into the JSON object apply sends.
func toMap(fields any) (map[string]any, error) {
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("unable to encode status: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("unable to encode status: %w", err)
	}
	return m, nil
}
