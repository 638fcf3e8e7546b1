package store

import (
	"context"
	"encoding/json"
	"fmt"

	polyline "github.com/twpayne/go-polyline"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// resultObjectMeta names one of opt's result ConfigMaps, owned by opt so
// that deleting the Optimization deletes it. blockOwnerDeletion needs
// permission on opt's finalizers, which the controller has and a solve has not.
func resultObjectMeta(opt *v1alpha1.Optimization, name string, blockOwnerDeletion bool) metav1.ObjectMeta {
	ref := metav1.OwnerReference{
		APIVersion: v1alpha1.GroupVersion.String(),
		Kind:       "Optimization",
		Name:       opt.Name,
		UID:        opt.UID,
		Controller: ptr.To(true),
	}
	if blockOwnerDeletion {
		ref.BlockOwnerDeletion = ptr.To(true)
	}
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       opt.Namespace,
		Labels:          map[string]string{v1alpha1.OptimizationLabel: opt.Name},
		OwnerReferences: []metav1.OwnerReference{ref},
	}
}

// EnsureResultConfigMap creates opt's result ConfigMap, empty, before the
// solve starts: the solve may patch that one but not create it.
func EnsureResultConfigMap(ctx context.Context, c client.Client, opt *v1alpha1.Optimization) error {
	cm := &corev1.ConfigMap{ObjectMeta: resultObjectMeta(opt, opt.ResultConfigMapName(), true)}
	err := c.Create(ctx, cm)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("unable to create the result ConfigMap: %w", err)
	}
	// One that exists but is not opt's (a leftover, or made ahead of a
	// predictable id by someone who may create ConfigMaps in the tenant's
	// namespace) is taken over and emptied, never trusted.
	existing := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), existing); err != nil {
		return fmt.Errorf("unable to read the result ConfigMap: %w", err)
	}
	if owner := metav1.GetControllerOf(existing); owner != nil && owner.UID == opt.UID {
		return nil
	}
	existing.Labels = cm.Labels
	existing.Annotations = nil
	existing.OwnerReferences = cm.OwnerReferences
	existing.Data, existing.BinaryData = nil, nil
	if err := c.Update(ctx, existing); err != nil {
		return fmt.Errorf("unable to take over the result ConfigMap: %w", err)
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

// StoreResult writes r in its stored form (v1alpha1.ResultManifest): the
// parts it needs first, the result ConfigMap with the manifest last, so a
// reader sees one attempt whole or the previous one. A retried solve
// overwrites. Road geometry too large for MaxResultParts is replaced by
// straight legs through the stops, with a warning, rather than failing.
// API errors stay retryable.
func StoreResult(ctx context.Context, c client.Client, opt *v1alpha1.Optimization, r *v1alpha1.Result) error {
	own, err := getConfigMap(ctx, c, opt.Namespace, opt.ResultConfigMapName())
	if err != nil {
		return fmt.Errorf("unable to read the result ConfigMap: %w", err)
	}
	plan, err := planResult(r, otherBytes(own))
	if err != nil {
		return err
	}
	for i, part := range plan.parts {
		if err := writeResultPart(ctx, c, opt, i+1, part); err != nil {
			return err
		}
	}
	manifest, err := v1alpha1.EncodeManifest(&plan.manifest)
	if err != nil {
		return record.Failf(v1alpha1.ErrorInternal, "encoding the result manifest failed: %v", err)
	}
	patch := map[string]any{
		"data":       map[string]any{v1alpha1.ResultManifestKey: manifest},
		"binaryData": map[string]any{v1alpha1.ResultDataKey: plan.inline[v1alpha1.ResultDataKey], v1alpha1.ResultPathsKey: plan.inline[v1alpha1.ResultPathsKey]},
	}
	if err := patchResultConfigMap(ctx, c, opt, patch); err != nil {
		return fmt.Errorf("unable to store result: %w", err)
	}
	return nil
}

// otherBytes is what cm holds besides the result's own keys (the solve's
// geocoding answers), keys included.
func otherBytes(cm *corev1.ConfigMap) int {
	n := 0
	for k, v := range cm.Data {
		if k != v1alpha1.ResultManifestKey {
			n += len(k) + len(v)
		}
	}
	for k, v := range cm.BinaryData {
		if k != v1alpha1.ResultDataKey && k != v1alpha1.ResultPathsKey {
			n += len(k) + len(v)
		}
	}
	return n
}

// resultPlan is where each stored document of a result goes.
type resultPlan struct {
	manifest v1alpha1.ResultManifest
	// inline are the result ConfigMap's binaryData values (nil: removed).
	inline map[string][]byte
	// parts are the part ConfigMaps' values, part 1 first.
	parts [][]byte
}

// manifestReserve is room kept for the manifest in the result ConfigMap.
const manifestReserve = 1024

// maxParts is v1alpha1.MaxResultParts; tests lower it.
var maxParts = v1alpha1.MaxResultParts

// planResult encodes r without polylines and its polylines apart and places
// them: inline while the result ConfigMap (holding other bytes besides) has
// room, in parts otherwise. When the polylines need more than
// maxParts they become straight legs and r gets a warning.
func planResult(r *v1alpha1.Result, other int) (*resultPlan, error) {
	polylines := make([]string, len(r.Routes))
	bare := *r
	bare.Routes = make([]v1alpha1.Route, len(r.Routes))
	hasPaths := false
	for i, route := range r.Routes {
		polylines[i] = route.Polyline
		hasPaths = hasPaths || route.Polyline != ""
		route.Polyline = ""
		bare.Routes[i] = route
	}
	for attempt := 0; ; attempt++ {
		doc, err := v1alpha1.EncodeResult(&bare)
		if err != nil {
			return nil, record.Failf(v1alpha1.ErrorInternal, "encoding the result failed: %v", err)
		}
		var paths []byte
		if hasPaths {
			if paths, err = v1alpha1.EncodePaths(polylines); err != nil {
				return nil, record.Failf(v1alpha1.ErrorInternal, "encoding the route polylines failed: %v", err)
			}
		}
		plan, ok := placeResult(doc, paths, v1alpha1.ResultConfigMapBudget-other-len(v1alpha1.ResultManifestKey)-manifestReserve)
		if ok {
			return plan, nil
		}
		if attempt > 0 || !hasPaths {
			return nil, record.Failf(v1alpha1.ErrorInternal, "the result is too large to store: %d bytes compressed, and %d of road geometry", len(doc), len(paths))
		}
		// Straight legs are a few bytes a stop: they always fit.
		for i := range bare.Routes {
			polylines[i] = routeStraightLegs(polylines[i], &bare.Routes[i])
		}
		w := v1alpha1.Warning{Code: v1alpha1.WarningGeometryUnavailable, Message: fmt.Sprintf(
			"the road geometry of the routes is too large to store (%d bytes compressed, at most %d); polylines use straight legs", len(paths), maxParts*v1alpha1.ResultPartSize)}
		bare.Warnings = append(append([]v1alpha1.Warning{}, bare.Warnings...), w)
		r.Warnings = append(r.Warnings, w)
	}
}

// placeResult places doc and paths (nil: none) given free bytes in the
// result ConfigMap; false when more than MaxResultParts parts are needed.
func placeResult(doc, paths []byte, free int) (*resultPlan, bool) {
	plan := &resultPlan{inline: map[string][]byte{v1alpha1.ResultDataKey: nil, v1alpha1.ResultPathsKey: nil}}
	place := func(key string, data []byte) v1alpha1.StoredBlob {
		b := v1alpha1.NewStoredBlob(data)
		if need := len(key) + len(data); need <= free {
			free -= need
			b.Key = key
			plan.inline[key] = data
			return b
		}
		pieces := v1alpha1.SplitBlob(data, v1alpha1.ResultPartSize)
		b.First, b.Parts = len(plan.parts)+1, len(pieces)
		plan.parts = append(plan.parts, pieces...)
		return b
	}
	plan.manifest.Result = place(v1alpha1.ResultDataKey, doc)
	if paths != nil {
		b := place(v1alpha1.ResultPathsKey, paths)
		plan.manifest.Paths = &b
	}
	return plan, len(plan.parts) <= maxParts
}

// straightLegs is the polyline from the depot (road's first point) through
// stops and back: the geometry every result can afford.
func straightLegs(road string, stops []v1alpha1.Stop) string {
	coords, _, err := polyline.DecodeCoords([]byte(road))
	if err != nil || len(coords) == 0 {
		return ""
	}
	depot := coords[0]
	out := make([][]float64, 0, len(stops)+2)
	out = append(out, depot)
	for _, s := range stops {
		out = append(out, []float64{s.Latitude, s.Longitude})
	}
	out = append(out, depot)
	return string(polyline.EncodeCoords(out))
}

// routeStraightLegs is straightLegs for route, which may say where it
// starts and ends: then from its start through its stops to its end, or to
// its last stop when it is open.
func routeStraightLegs(road string, route *v1alpha1.Route) string {
	if route.Start == nil {
		return straightLegs(road, route.Stops)
	}
	if road == "" {
		return ""
	}
	out := make([][]float64, 0, len(route.Stops)+2)
	out = append(out, []float64{route.Start.Latitude, route.Start.Longitude})
	for _, s := range route.Stops {
		out = append(out, []float64{s.Latitude, s.Longitude})
	}
	if at := route.End.At; at != nil {
		out = append(out, []float64{at.Latitude, at.Longitude})
	}
	return string(polyline.EncodeCoords(out))
}

// writeResultPart creates or overwrites opt's i-th result part, owned by
// opt without blockOwnerDeletion (the solve may not touch opt's
// finalizers, which that needs).
func writeResultPart(ctx context.Context, c client.Client, opt *v1alpha1.Optimization, i int, data []byte) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: resultObjectMeta(opt, opt.ResultPartName(i), false),
		BinaryData: map[string][]byte{v1alpha1.ResultPartKey: data},
	}
	err := c.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		raw, merr := json.Marshal(map[string]any{"binaryData": map[string]any{v1alpha1.ResultPartKey: data}})
		if merr != nil {
			return merr
		}
		err = c.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace}}, client.RawPatch(types.MergePatchType, raw))
	}
	if err != nil {
		return fmt.Errorf("unable to store result part %d: %w", i, err)
	}
	return nil
}
