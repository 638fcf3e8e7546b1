// Package docstore reads the documents an optimization keeps beside it in
// ConfigMaps: the result the solve stored (its manifest, the result
// document and the polylines, each inline or in parts) and the input
// document the REST API stored. It never writes.
package docstore

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// ReadError is a failed read of a result or input ConfigMap (the
// Kubernetes API's error is wrapped), as opposed to stored data that does
// not decode.
type ReadError struct{ err error }

func (e *ReadError) Error() string { return e.err.Error() }
func (e *ReadError) Unwrap() error { return e.err }

// ReadResult reads opt's result in its stored form (see
// v1alpha1.ResultManifest): the result ConfigMap, and the polylines, inline
// or in parts, only when withPaths. The older form without a manifest is
// served as it is. A missing ConfigMap or a part of another attempt is an
// error, never a partial or mixed result.
func ReadResult(ctx context.Context, r client.Reader, opt *v1alpha1.Optimization, withPaths bool) (*v1alpha1.Result, error) {
	get := func(name string) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: name}, cm); err != nil {
			return nil, &ReadError{fmt.Errorf("completed optimization %s: reading ConfigMap %s: %w", opt.Name, name, err)}
		}
		return cm, nil
	}
	own, err := get(opt.ResultConfigMapName())
	if err != nil {
		return nil, err
	}
	raw, ok := own.Data[v1alpha1.ResultManifestKey]
	if !ok {
		result, err := v1alpha1.DecodeResult(own.BinaryData[v1alpha1.ResultDataKey])
		if err != nil {
			return nil, fmt.Errorf("completed optimization %s: result: %w", opt.Name, err)
		}
		if !withPaths {
			for i := range result.Routes {
				result.Routes[i].Polyline = ""
			}
		}
		return result, nil
	}
	manifest, err := v1alpha1.DecodeManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("completed optimization %s: %w", opt.Name, err)
	}
	read := func(b v1alpha1.StoredBlob) ([]byte, error) {
		if b.Key != "" {
			return b.Join([][]byte{own.BinaryData[b.Key]})
		}
		pieces := make([][]byte, 0, b.Parts)
		for _, i := range b.PartIndexes() {
			part, err := get(opt.ResultPartName(i))
			if err != nil {
				return nil, err
			}
			pieces = append(pieces, part.BinaryData[v1alpha1.ResultPartKey])
		}
		return b.Join(pieces)
	}
	doc, err := read(manifest.Result)
	if err != nil {
		return nil, err
	}
	result, err := v1alpha1.DecodeResult(doc)
	if err != nil {
		return nil, fmt.Errorf("completed optimization %s: result: %w", opt.Name, err)
	}
	if !withPaths || manifest.Paths == nil {
		return result, nil
	}
	blob, err := read(*manifest.Paths)
	if err != nil {
		return nil, err
	}
	paths, err := v1alpha1.DecodePaths(blob)
	if err != nil {
		return nil, fmt.Errorf("completed optimization %s: polylines: %w", opt.Name, err)
	}
	if len(paths) != len(result.Routes) {
		return nil, fmt.Errorf("completed optimization %s: %d polylines for %d routes", opt.Name, len(paths), len(result.Routes))
	}
	for i := range result.Routes {
		result.Routes[i].Polyline = paths[i]
	}
	return result, nil
}

// ReadInput fills opt's spec with the orders and vehicles of the ConfigMap
// spec.input names (an Optimization that lists them inline is left as it
// is). A failed read is a *ReadError; a document that cannot be
// decoded is another error.
func ReadInput(ctx context.Context, r client.Reader, opt *v1alpha1.Optimization) error {
	ref := opt.Spec.Input
	if ref == nil || opt.Spec.Orders != nil {
		return nil
	}
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: ref.Name}, cm); err != nil {
		return &ReadError{err}
	}
	in, err := v1alpha1.DecodeInput(cm.BinaryData, cm.Data, ref.SHA256)
	if err != nil {
		return fmt.Errorf("optimization %s: input ConfigMap %s: %w", opt.Name, ref.Name, err)
	}
	opt.Spec = opt.Spec.WithInput(in)
	return nil
}
