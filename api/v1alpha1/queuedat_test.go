package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestQueuedAt(t *testing.T) {
	created := time.Date(2026, 11, 23, 16, 0, 5, 0, time.UTC)
	for _, c := range []struct {
		name       string
		annotation string
		want       time.Time
	}{
		{"kubectl: no annotation", "", created},
		{"REST: within the creation second", "2026-11-23T16:00:05.250000001Z", created.Add(250*time.Millisecond + 1)},
		{"REST: stamped just before the second turned", "2026-11-23T16:00:04.999Z", created.Add(-time.Millisecond)},
		{"hand-written, far ahead in line", "2020-01-01T00:00:00Z", created},
		{"hand-written, a second late", "2026-11-23T16:00:06Z", created},
		{"not a time", "soon", created},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &Optimization{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)}}
			if c.annotation != "" {
				o.Annotations = map[string]string{QueuedAtAnnotation: c.annotation}
			}
			if got := o.QueuedAt(); !got.Equal(c.want) {
				t.Errorf("QueuedAt() = %v, want %v", got, c.want)
			}
		})
	}
}
