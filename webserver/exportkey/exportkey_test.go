package exportkey

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParse(t *testing.T) {
	cur, _ := newKey()
	prev, _ := newKey()
	if cur.ID == prev.ID || len(cur.ID) != 12 || len(cur.Key) != 32 {
		t.Fatalf("keys %q %q", cur.ID, prev.ID)
	}
	s := &corev1.Secret{}
	(&Keys{Current: cur, Previous: &prev}).fill(s)
	k, err := parse(s)
	if err != nil {
		t.Fatal(err)
	}
	if k.ByID(cur.ID) == nil || k.ByID(prev.ID) == nil || k.ByID("") != nil || k.ByID("other") != nil {
		t.Errorf("ByID: %+v", k)
	}
	s.Type = corev1.SecretTypeOpaque
	if _, err := parse(s); err == nil {
		t.Error("a Secret of another type was read")
	}
	s.Type = SecretType
	s.Data[currentField] = []byte("short")
	if _, err := parse(s); err == nil {
		t.Error("a short key was read")
	}
}
