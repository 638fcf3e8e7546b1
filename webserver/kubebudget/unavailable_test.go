package kubebudget

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestIsUnavailable(t *testing.T) {
	gr := schema.GroupResource{Group: "routeopt.io", Resource: "optimizations"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", context.DeadlineExceeded, true},
		{"deadline wrapped by client-go", &url.Error{Op: "Get", URL: "https://api", Err: context.DeadlineExceeded}, true},
		{"deadline wrapped twice", fmt.Errorf("reading ConfigMap x: %w", fmt.Errorf("rate limiter: %w", context.DeadlineExceeded)), true},
		{"cancelled", fmt.Errorf("get: %w", context.Canceled), true},
		{"connection refused", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"), true},
		{"cut response", fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", errors.New("unexpected EOF")), true},
		{"server timeout", apierrors.NewServerTimeout(gr, "get", 1), true},
		{"timeout", apierrors.NewTimeoutError("etcd", 1), true},
		{"storage unavailable", apierrors.NewServiceUnavailable("etcd is down"), true},
		{"too many requests", apierrors.NewTooManyRequests("slow down", 1), true},
		{"etcd error as an internal error", apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"gateway timeout", apierrors.NewGenericServerResponse(http.StatusGatewayTimeout, "get", gr, "x", "", 0, true), true},
		{"wrapped internal error", fmt.Errorf("unable to store API key: %w", apierrors.NewInternalError(errors.New("leader changed"))), true},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("RBAC")), false},
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("changed")), false},
		{"invalid", apierrors.NewBadRequest("bad"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsUnavailable(tc.err); got != tc.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
