package integration

import (
	"context"
	"testing"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/store"
)

// TestResultConfigMapTakenOver: a solve may create ConfigMaps in its
// tenant's namespace (its result parts), so a result ConfigMap that
// already exists under a future optimization's name is not trusted: the
// controller takes it over, empty, before the solve starts; its own is
// left as it is.
func TestResultConfigMapTakenOver(t *testing.T) {
	ctx := context.Background()
	ns := "result-owner-" + randomHex(4)
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: uuid.NewString()},
		Spec: v1alpha1.OptimizationSpec{
			Depot:  v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
			Fleet:  &v1alpha1.Fleet{Count: 1, Capacity: 10},
			Orders: []v1alpha1.Order{{ID: "o-1", Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)}},
		},
	}
	planted := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: opt.ResultConfigMapName(), Annotations: map[string]string{"planted": "yes"}},
		BinaryData: map[string][]byte{v1alpha1.ResultDataKey: []byte("not a result")},
		Data:       map[string]string{"other": "x"},
	}
	if err := k8sClient.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Create(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureResultConfigMap(ctx, k8sClient, opt); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(planted), got); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(got); owner == nil || owner.UID != opt.UID {
		t.Fatalf("result ConfigMap's controller = %+v, want the optimization %s", owner, opt.UID)
	}
	if len(got.Data)+len(got.BinaryData) != 0 || got.Annotations["planted"] != "" {
		t.Fatalf("taken-over ConfigMap kept %d data keys, %d binary keys, annotations %v", len(got.Data), len(got.BinaryData), got.Annotations)
	}

	// Its own ConfigMap, with a solve's answers in it, is kept as it is.
	got.Data = map[string]string{"kept": "yes"}
	if err := k8sClient.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := store.EnsureResultConfigMap(ctx, k8sClient, opt); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(planted), got); err != nil {
		t.Fatal(err)
	}
	if got.Data["kept"] != "yes" {
		t.Fatalf("own result ConfigMap was changed: %v", got.Data)
	}
}
