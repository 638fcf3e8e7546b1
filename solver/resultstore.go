package solver

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// EnsureResultConfigMap creates opt's result ConfigMap, empty and owned by
// opt (deleting the Optimization deletes it), before the solve starts: the
// solve may patch that one ConfigMap and create none.
func EnsureResultConfigMap(ctx context.Context, c client.Client, opt *v1alpha1.Optimization) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      opt.ResultConfigMapName(),
			Namespace: opt.Namespace,
			Labels:    map[string]string{v1alpha1.OptimizationLabel: opt.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.GroupVersion.String(),
				Kind:               "Optimization",
				Name:               opt.Name,
				UID:                opt.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
	}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("unable to create the result ConfigMap: %w", err)
	}
	return nil
}

// patchResultConfigMap merge-patches opt's result ConfigMap.
func patchResultConfigMap(ctx context.Context, c client.Client, opt *v1alpha1.Optimization, patch map[string]any) error {
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: opt.ResultConfigMapName(), Namespace: opt.Namespace}}
	return c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, raw))
}

// storeResult writes the result into opt's result ConfigMap. A retried
// solve overwrites it.
func storeResult(ctx context.Context, c client.Client, opt *v1alpha1.Optimization, r *v1alpha1.Result) error {
	data, err := v1alpha1.EncodeResult(r)
	if err != nil {
		return record.Failf(v1alpha1.ErrorInternal, "encoding the result failed: %v", err)
	}
	if err := patchResultConfigMap(ctx, c, opt, map[string]any{"binaryData": map[string]any{v1alpha1.ResultDataKey: data}}); err != nil {
		return fmt.Errorf("unable to store result: %w", err)
	}
	return nil
}
