package kubebudget

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// IsUnavailable reports errors that mean the Kubernetes API could not
// answer: a deadline or a cancellation anywhere in the chain (client-go,
// the cache and others wrap them), anything that is not an answer of the
// API server (connection refused, DNS, a cut or unreadable response, a
// cache that is not synced), and the API server's own answers that it or
// its storage cannot serve now (5xx, 429).
func IsUnavailable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	code := status.Status().Code
	return code >= http.StatusInternalServerError || code == http.StatusTooManyRequests ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err)
}
