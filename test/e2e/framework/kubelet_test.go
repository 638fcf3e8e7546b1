package framework

import (
	"runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestResourceValue(t *testing.T) {
	c := &corev1.Container{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
	}}
	for _, tc := range []struct {
		resource, divisor, want string
	}{
		{"limits.cpu", "", "2"},
		{"limits.cpu", "1m", "1500"},
		{"requests.cpu", "1", "1"},
		{"requests.memory", "1Mi", "256"},
		{"limits.memory", "1Gi", "8"}, // node allocatable
	} {
		ref := &corev1.ResourceFieldSelector{Resource: tc.resource}
		if tc.divisor != "" {
			ref.Divisor = resource.MustParse(tc.divisor)
		}
		if got, err := resourceValue(c, ref); err != nil || got != tc.want {
			t.Errorf("%s/%s = %q, %v; want %q", tc.resource, tc.divisor, got, err, tc.want)
		}
	}
	unset := &corev1.Container{}
	if got, _ := resourceValue(unset, &corev1.ResourceFieldSelector{Resource: "limits.cpu"}); got != strconv.Itoa(runtime.NumCPU()) {
		t.Errorf("unset limits.cpu = %q, want the node's CPUs", got)
	}
}

func TestFieldValue(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}}}
	for path, want := range map[string]string{"metadata.name": "p", "metadata.namespace": "ns", "metadata.labels['a']": "b", "spec.nodeName": "node"} {
		if got, err := fieldValue(pod, path, "node"); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := fieldValue(pod, "status.nothing", "node"); err == nil {
		t.Error("unknown fieldRef accepted")
	}
}

func TestTailLines(t *testing.T) {
	if got := tailLines("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("tailLines = %q", got)
	}
}
