package docstore

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
)

const namespace = "tenant-acme"

func testOptimization() *v1alpha1.Optimization {
	return &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Name: "3f0c1a2e-6b1d-4d7e-9c55-0d1f2a3b4c5d", Namespace: namespace}}
}

func testResult() *v1alpha1.Result {
	return &v1alpha1.Result{ID: testOptimization().Name, Status: v1alpha1.StateCompleted, Routes: []v1alpha1.Route{
		{VehicleRef: "Van 1", Stops: []v1alpha1.Stop{{Seq: 1, OrderRef: "A-1"}}},
		{VehicleRef: "Van 2", Stops: []v1alpha1.Stop{{Seq: 1, OrderRef: "A-2"}}},
	}}
}

var polylines = []string{"_p~iF~ps|U_ulLnnqC", "_mqNvxq`@_p~iF~ps|U"}

func configMap(name string, binary map[string][]byte, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, BinaryData: binary, Data: data}
}

// mustEncode fails t when an encoding fails.
func mustEncode(t *testing.T) func([]byte, error) []byte {
	return func(data []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
}

// storedForms are the ways a solve stores testResult with polylines: the
// older form without a manifest, both documents inline, and the polylines
// in two parts.
func storedForms(t *testing.T) map[string][]client.Object {
	opt := testOptimization()
	withPaths := testResult()
	for i := range withPaths.Routes {
		withPaths.Routes[i].Polyline = polylines[i]
	}
	older := mustEncode(t)(v1alpha1.EncodeResult(withPaths))
	result := mustEncode(t)(v1alpha1.EncodeResult(testResult()))
	paths := mustEncode(t)(v1alpha1.EncodePaths(polylines))
	manifest := func(m v1alpha1.ResultManifest) map[string]string {
		raw, err := v1alpha1.EncodeManifest(&m)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{v1alpha1.ResultManifestKey: raw}
	}
	inline := func(key string, data []byte) v1alpha1.StoredBlob {
		b := v1alpha1.NewStoredBlob(data)
		b.Key = key
		return b
	}
	pieces := v1alpha1.SplitBlob(paths, len(paths)/2+1)
	inParts := v1alpha1.NewStoredBlob(paths)
	inParts.First, inParts.Parts = 1, len(pieces)
	return map[string][]client.Object{
		"older form": {configMap(opt.ResultConfigMapName(), map[string][]byte{v1alpha1.ResultDataKey: older}, nil)},
		"inline": {configMap(opt.ResultConfigMapName(),
			map[string][]byte{v1alpha1.ResultDataKey: result, v1alpha1.ResultPathsKey: paths},
			manifest(v1alpha1.ResultManifest{Result: inline(v1alpha1.ResultDataKey, result), Paths: ptr(inline(v1alpha1.ResultPathsKey, paths))}))},
		"polylines in parts": {
			configMap(opt.ResultConfigMapName(), map[string][]byte{v1alpha1.ResultDataKey: result},
				manifest(v1alpha1.ResultManifest{Result: inline(v1alpha1.ResultDataKey, result), Paths: &inParts})),
			configMap(opt.ResultPartName(1), map[string][]byte{v1alpha1.ResultPartKey: pieces[0]}, nil),
			configMap(opt.ResultPartName(2), map[string][]byte{v1alpha1.ResultPartKey: pieces[1]}, nil),
		},
	}
}

func ptr[T any](v T) *T { return &v }

func newClient(t *testing.T, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

// Every stored form reads back as the same result: polylines only when
// asked for.
func TestReadResult(t *testing.T) {
	for name, objs := range storedForms(t) {
		for _, withPaths := range []bool{false, true} {
			res, err := ReadResult(context.Background(), newClient(t, objs...), testOptimization(), withPaths)
			if err != nil {
				t.Fatalf("%s, paths %v: %v", name, withPaths, err)
			}
			if len(res.Routes) != 2 || res.Routes[1].VehicleRef != "Van 2" || res.Routes[1].Stops[0].OrderRef != "A-2" {
				t.Errorf("%s: routes %+v", name, res.Routes)
			}
			for i, r := range res.Routes {
				want := ""
				if withPaths {
					want = polylines[i]
				}
				if r.Polyline != want {
					t.Errorf("%s, paths %v: route %d polyline %q, want %q", name, withPaths, i, r.Polyline, want)
				}
			}
		}
	}
}

// A ConfigMap that cannot be read is a ReadError carrying the API's error;
// stored data that does not hold together is another error, never a
// partial result.
func TestReadResultFailures(t *testing.T) {
	forms := storedForms(t)
	parts := forms["polylines in parts"]
	otherAttempt := parts[2].DeepCopyObject().(*corev1.ConfigMap)
	otherAttempt.BinaryData[v1alpha1.ResultPartKey] = append([]byte{0}, otherAttempt.BinaryData[v1alpha1.ResultPartKey][1:]...)
	onePolyline := forms["inline"][0].DeepCopyObject().(*corev1.ConfigMap)
	short := mustEncode(t)(v1alpha1.EncodePaths(polylines[:1]))
	blob := v1alpha1.NewStoredBlob(short)
	blob.Key = v1alpha1.ResultPathsKey
	onePolyline.BinaryData[v1alpha1.ResultPathsKey] = short
	m, err := v1alpha1.DecodeManifest(onePolyline.Data[v1alpha1.ResultManifestKey])
	if err != nil {
		t.Fatal(err)
	}
	m.Paths = &blob
	if onePolyline.Data[v1alpha1.ResultManifestKey], err = v1alpha1.EncodeManifest(m); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		objs     []client.Object
		wantRead bool // a *ReadError wrapping NotFound
	}{
		{"no result ConfigMap", nil, true},
		{"a part missing", parts[:2], true},
		{"a part of another attempt", []client.Object{parts[0], parts[1], otherAttempt}, false},
		{"fewer polylines than routes", []client.Object{onePolyline}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ReadResult(context.Background(), newClient(t, tc.objs...), testOptimization(), true)
			if err == nil {
				t.Fatalf("read %+v", res)
			}
			var read *ReadError
			if got := errors.As(err, &read) && apierrors.IsNotFound(err); got != tc.wantRead {
				t.Errorf("%v: a ReadError of a missing ConfigMap %v, want %v", err, got, tc.wantRead)
			}
		})
	}
}

func TestReadInput(t *testing.T) {
	lat := 52.5
	in := &v1alpha1.Input{
		Orders:   []v1alpha1.Order{{ID: "A-1", Latitude: &lat, Longitude: &lat}},
		Vehicles: []v1alpha1.Vehicle{{ID: "Van 1", Capacity: 3}},
	}
	data, sum, err := v1alpha1.EncodeInput(in)
	if err != nil {
		t.Fatal(err)
	}
	withInput := func() *v1alpha1.Optimization {
		opt := testOptimization()
		opt.Spec.Input = &v1alpha1.InputRef{Name: opt.InputConfigMapName(), Orders: 1, Vehicles: 1, SHA256: sum}
		return opt
	}
	stored := configMap(withInput().InputConfigMapName(), map[string][]byte{v1alpha1.InputDataKey: data}, nil)

	opt := withInput()
	if err := ReadInput(context.Background(), newClient(t, stored), opt); err != nil {
		t.Fatal(err)
	}
	if len(opt.Spec.Orders) != 1 || opt.Spec.Orders[0].ID != "A-1" || len(opt.Spec.Vehicles) != 1 || opt.Spec.Vehicles[0].ID != "Van 1" {
		t.Errorf("spec after reading its input: %+v", opt.Spec)
	}

	inline := testOptimization()
	inline.Spec.Orders = []v1alpha1.Order{{ID: "inline"}}
	if err := ReadInput(context.Background(), newClient(t), inline); err != nil || inline.Spec.Orders[0].ID != "inline" {
		t.Errorf("an inline spec was not left as it is: %v %+v", err, inline.Spec.Orders)
	}

	var read *ReadError
	if err := ReadInput(context.Background(), newClient(t), withInput()); !errors.As(err, &read) || !apierrors.IsNotFound(err) {
		t.Errorf("missing input ConfigMap: %v, want a ReadError of NotFound", err)
	}
	changed := stored.DeepCopy()
	changed.BinaryData[v1alpha1.InputDataKey] = mustEncode(t)(func() ([]byte, error) {
		d, _, err := v1alpha1.EncodeInput(&v1alpha1.Input{Orders: []v1alpha1.Order{{ID: "B-1"}}})
		return d, err
	}())
	if err := ReadInput(context.Background(), newClient(t, changed), withInput()); err == nil || errors.As(err, &read) {
		t.Errorf("an input whose SHA-256 differs: %v, want a decoding error", err)
	}
}
