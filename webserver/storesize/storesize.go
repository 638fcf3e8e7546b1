// Package storesize decides whether an optimization's input fits in the
// cluster's storage: the bound the REST API holds a create to, the
// refusals of a storage that is stricter than that bound, and the 413
// messages that give the sizes.
package storesize

import (
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"routeopt.io/routeopt/api/v1alpha1"
)

// MaxStoredBytes is the largest stored input document (the request's orders
// and vehicles, gzip-compressed JSON) the API accepts: what one ConfigMap
// holds, with room for its metadata.
const MaxStoredBytes = v1alpha1.MaxInputBytes

// TooLarge is the 413 message and fields of an optimization whose input
// document (storedBytes) is over maxBytes.
func TooLarge(storedBytes, maxBytes int) (string, map[string]any) {
	msg := fmt.Sprintf("the optimization's orders and vehicles would be stored as %s bytes (compressed); one stored object may hold at most %s bytes: send fewer orders or shorter texts",
		thousands(storedBytes), thousands(maxBytes))
	return msg, map[string]any{"stored_bytes": storedBytes, "max_stored_bytes": maxBytes}
}

// RefusedByStorage is the 413 message and fields of an optimization whose
// input document (storedBytes, within MaxStoredBytes) the cluster's storage
// refused for its size (see IsRefusedForSize).
func RefusedByStorage(storedBytes int) (string, map[string]any) {
	msg := fmt.Sprintf("the optimization's orders and vehicles would be stored as %s bytes (compressed) and the cluster's storage refused them as too large; one stored object may hold at most %s bytes, less where the storage is configured lower", thousands(storedBytes), thousands(MaxStoredBytes))
	return msg, map[string]any{"stored_bytes": storedBytes, "max_stored_bytes": MaxStoredBytes}
}

// IsRefusedForSize reports the API server's (or etcd's) refusal of an
// object for its size, for when it is stricter than MaxStoredBytes: a 413,
// etcd's "request is too large", or gRPC's limit on the message to etcd
// (kube-apiserver answers the last two as 500s).
func IsRefusedForSize(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsRequestEntityTooLargeError(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "request is too large") ||
		strings.Contains(msg, "Request entity too large") ||
		(strings.Contains(msg, "ResourceExhausted") && strings.Contains(msg, "larger than max"))
}

// thousands writes n with comma separators, as 1,500,000.
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
