package createbench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/requests"
)

// BenchmarkWrite measures what one write to an existing Optimization costs
// the kube-apiserver, by kind of write, number of orders and where the
// orders are: in an input ConfigMap (as the REST API stores every
// optimization) or inline in the spec (as kubectl may). The writes are the
// ones the service makes to a live optimization: a status apply (the
// solver's progress, the controller's state, the notifier's ledger are all
// status applies), a cancel (a merge patch of spec.cancel, sent as a
// dry run so that every iteration cancels again) and a label patch (the
// state label). It reports the apiserver's CPU time per write, read from
// /proc, and the wall time of one write with nothing else in flight.
// /proc counts 10 ms ticks: use -benchtime 100x or more.
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run '^$' -bench Write -benchtime 200x ./test/createbench/
func BenchmarkWrite(b *testing.B) {
	startEnv(b)
	ctx := context.Background()
	for _, placement := range []string{"input", "inline"} {
		for _, orders := range []int{10, 500} {
			item := createForWrites(b, placement, orders)
			name := item[len(item)-36:]
			writes := []struct {
				kind string
				do   func(i int) error
			}{
				{"status", func(i int) error {
					body := fmt.Sprintf(`{"apiVersion":%q,"kind":"Optimization","metadata":{"name":%q,"namespace":%q},"status":{"stage":"optimizing","progress":%d}}`,
						v1alpha1.GroupVersion.String(), name, namespace, i%100)
					return env.rest.Patch("application/apply-patch+yaml").AbsPath(item+"/status").
						Param("fieldManager", "routeopt-solver").Param("force", "true").Body([]byte(body)).Do(ctx).Error()
				}},
				{"cancel", func(int) error {
					return env.rest.Patch("application/merge-patch+json").AbsPath(item).Param("dryRun", "All").
						Body([]byte(`{"spec":{"cancel":true}}`)).Do(ctx).Error()
				}},
				{"label", func(i int) error {
					return env.rest.Patch("application/merge-patch+json").AbsPath(item).
						Body(fmt.Appendf(nil, `{"metadata":{"labels":{"routeopt.io/bench":"v%d"}}}`, i)).Do(ctx).Error()
				}},
			}
			for _, w := range writes {
				b.Run(fmt.Sprintf("orders=%s-%d/%s", placement, orders, w.kind), func(b *testing.B) {
					start, t0 := cpuTime(b, env.apiserver), time.Now()
					for i := range b.N {
						if err := w.do(i); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64((cpuTime(b, env.apiserver)-start).Microseconds())/1000/float64(b.N), "apiserver-ms/write")
					b.ReportMetric(float64(time.Since(t0).Microseconds())/1000/float64(b.N), "ms/write")
				})
			}
		}
	}
}

// createForWrites creates an Optimization of n orders shaped like the REST
// API's, with its orders in an input ConfigMap (placement "input") or
// inline, and returns its API path.
func createForWrites(b *testing.B, placement string, n int) string {
	b.Helper()
	name := fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	if placement == "inline" {
		name = fmt.Sprintf("00000000-0000-4000-9000-%012d", n)
	}
	spec := requests.Spec("write benchmark", n)
	if placement == "input" {
		data, sum, err := v1alpha1.EncodeInput(&v1alpha1.Input{Orders: spec.Orders})
		if err != nil {
			b.Fatal(err)
		}
		spec.Input = &v1alpha1.InputRef{Name: name + v1alpha1.InputConfigMapSuffix, Orders: int32(n), SHA256: sum}
		spec.Orders = nil
		cm := &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: spec.Input.Name},
			BinaryData: map[string][]byte{v1alpha1.InputDataKey: data},
		}
		post(b, "/api/v1/namespaces/"+namespace+"/configmaps", cm)
	}
	path := "/apis/" + v1alpha1.GroupVersion.Group + "/" + v1alpha1.GroupVersion.Version + "/namespaces/" + namespace + "/optimizations"
	post(b, path, map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "Optimization",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	})
	return path + "/" + name
}

// post creates obj at path, as the REST API's field manager does.
func post(b *testing.B, path string, obj any) {
	b.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	if err := env.rest.Post().AbsPath(path).Param("fieldManager", "routeopt-api").SetHeader("Content-Type", "application/json").
		Body(raw).Do(context.Background()).Error(); err != nil {
		b.Fatal(err)
	}
}
