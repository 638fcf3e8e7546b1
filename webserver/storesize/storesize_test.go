package storesize

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestIsRefusedForSize(t *testing.T) {
	internal := func(msg string) error { return apierrors.NewInternalError(fmt.Errorf("%s", msg)) }
	// As the client decodes kube-apiserver's answer: a 500 without a reason.
	status500 := func(msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: msg}}
	}
	gr := schema.GroupResource{Group: "routeopt.io", Resource: "optimizations"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		// What kube-apiserver v1.36 answered on envtest, by size.
		{status500("etcdserver: request is too large"), true},
		{status500("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2881035 vs. 2097152)"), true},
		{apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true},
		{internal("etcdserver: request is too large"), true},
		{nil, false},
		{apierrors.NewNotFound(gr, "x"), false},
		{apierrors.NewAlreadyExists(gr, "x"), false},
		{status500("etcdserver: too many requests"), false},
		{status500("rpc error: code = ResourceExhausted desc = quota exceeded"), false},
	} {
		if got := IsRefusedForSize(tc.err); got != tc.want {
			t.Errorf("IsRefusedForSize(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestTooLargeMessage(t *testing.T) {
	msg, fields := TooLarge(1812345, MaxStoredBytes)
	if !strings.Contains(msg, "stored as 1,812,345 bytes (compressed)") || !strings.Contains(msg, "at most 1,000,000 bytes") {
		t.Errorf("message %q", msg)
	}
	if fields["stored_bytes"] != 1812345 || fields["max_stored_bytes"] != MaxStoredBytes {
		t.Errorf("fields %v", fields)
	}
	msg, fields = RefusedByStorage(912345)
	if !strings.Contains(msg, "stored as 912,345 bytes (compressed) and the cluster's storage refused them") || !strings.Contains(msg, "at most 1,000,000 bytes") {
		t.Errorf("message %q", msg)
	}
	if fields["stored_bytes"] != 912345 || fields["max_stored_bytes"] != MaxStoredBytes {
		t.Errorf("fields %v", fields)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1500000: "1,500,000", 12345678: "12,345,678", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
