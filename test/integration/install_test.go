package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readManifests decodes every object of a rendered YAML file.
func readManifests(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("rendered manifests missing (make test renders them): %v", err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	var out []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// apply applies obj server-side (dryRun: only validated and admitted).
func apply(t *testing.T, obj *unstructured.Unstructured, dryRun bool) {
	t.Helper()
	opts := []client.ApplyOption{client.FieldOwner("install-test"), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	obj.SetManagedFields(nil)
	if err := k8sClient.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), opts...); err != nil {
		t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

// The manifests `make deploy` applies (rendered by `make build-installer`,
// which `make test` runs first) are accepted by a real API server: every
// object is applied server-side, so a typo in a field, a bad reference in
// RBAC or an invalid Deployment fails here rather than in a cluster.
func TestInstallManifestsApply(t *testing.T) {
	kinds := map[string]int{}
	for _, obj := range readManifests(t, "../../dist/install.yaml") {
		apply(t, obj, false)
		kinds[obj.GetKind()]++
	}
	for kind, want := range map[string]int{"CustomResourceDefinition": 2, "Deployment": 2, "ClusterRole": 5, "Service": 2, "Namespace": 1, "PodDisruptionBudget": 1} {
		if kinds[kind] != want {
			t.Errorf("%d %s objects, want %d", kinds[kind], kind, want)
		}
	}
	// The Ingress example, in the namespace the install made.
	for _, obj := range readManifests(t, "../../config/api/ingress.yaml") {
		apply(t, obj, true)
	}
}

// With IMG and both optional components (make test renders them into
// dist/install-all.yaml), every image is IMG, the solver's included; the
// NetworkPolicies carry the settings; the ServiceMonitor scrapes the
// metrics Service's port. All of it but the ServiceMonitor (whose CRD is
// Prometheus Operator's) is accepted by the API server.
func TestInstallWithComponents(t *testing.T) {
	const img = "registry.example.com/routeopt:v0.0.0-test"
	var monitor *unstructured.Unstructured
	var metricsService *unstructured.Unstructured
	policies := 0
	for _, obj := range readManifests(t, "../../dist/install-all.yaml") {
		switch obj.GetKind() {
		case "ServiceMonitor":
			monitor = obj
			continue
		case "Service":
			if obj.GetName() == "routeopt-manager-metrics" {
				metricsService = obj
			}
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, d); err != nil {
				t.Fatal(err)
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Image != img {
					t.Errorf("%s container %s image %s, want %s", d.Name, c.Name, c.Image, img)
				}
				for _, e := range c.Env {
					if e.Name == "SOLVER_IMAGE" && e.Value != img {
						t.Errorf("%s SOLVER_IMAGE %s, want %s", d.Name, e.Value, img)
					}
				}
			}
		case "NetworkPolicy":
			np := &networkingv1.NetworkPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, np); err != nil {
				t.Fatal(err)
			}
			policies++
			raw, _ := obj.MarshalJSON()
			if bytes.Contains(raw, []byte("set-from-settings")) {
				t.Errorf("NetworkPolicy %s still has a placeholder: %s", np.Name, raw)
			}
		case "ConfigMap":
			t.Errorf("ConfigMap %s rendered: the settings are build-time only", obj.GetName())
		}
		apply(t, obj, true)
	}
	if policies != 4 {
		t.Errorf("%d NetworkPolicies, want 4", policies)
	}
	if monitor == nil || metricsService == nil {
		t.Fatalf("ServiceMonitor %v, metrics Service %v", monitor != nil, metricsService != nil)
	}
	endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
	port := ""
	if len(endpoints) == 1 {
		port, _ = endpoints[0].(map[string]any)["port"].(string)
	}
	ports, _, _ := unstructured.NestedSlice(metricsService.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["name"] != port {
		t.Errorf("ServiceMonitor port %q, metrics Service ports %v", port, ports)
	}
	sel, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
	labels := metricsService.GetLabels()
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, the metrics Service has %v", k, v, labels)
		}
	}
}
