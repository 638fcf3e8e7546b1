package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The manifests `make deploy` applies (rendered by `make build-installer`,
// which `make test` runs first) are accepted by a real API server: every
// object is applied server-side, so a typo in a field, a bad reference in
// RBAC or an invalid Deployment fails here rather than in a cluster.
func TestInstallManifestsApply(t *testing.T) {
	raw, err := os.ReadFile("../../dist/install.yaml")
	if err != nil {
		t.Fatalf("rendered manifests missing (make build-installer): %v", err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	kinds := map[string]int{}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		obj.SetManagedFields(nil)
		if err := k8sClient.Apply(context.Background(), client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("install-test"), client.ForceOwnership); err != nil {
			t.Errorf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		kinds[obj.GetKind()]++
	}
	for kind, want := range map[string]int{"CustomResourceDefinition": 2, "Deployment": 2, "ClusterRole": 5, "Service": 2, "Namespace": 1, "PodDisruptionBudget": 1} {
		if kinds[kind] != want {
			t.Errorf("%d %s objects, want %d", kinds[kind], kind, want)
		}
	}
}
