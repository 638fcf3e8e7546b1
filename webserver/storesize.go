package webserver

import (
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"routeopt.io/routeopt/api/v1alpha1"
)

// CreateFieldManager is the field manager of the API's creates.
const CreateFieldManager = "routeopt-api"

// MaxStoredBytes is the largest stored input document (the request's orders
// and vehicles, gzip-compressed JSON) the API accepts: what one ConfigMap
// holds, with room for its metadata.
const MaxStoredBytes = v1alpha1.MaxInputBytes

// tooLargeToStore is the 413 error of an optimization whose input document
// (storedBytes) is over maxBytes.
func tooLargeToStore(storedBytes, maxBytes int) (string, map[string]any) {
	msg := fmt.Sprintf("the optimization's orders and vehicles would be stored as %s bytes (compressed); one stored object may hold at most %s bytes: send fewer orders or shorter texts",
		thousands(storedBytes), thousands(maxBytes))
	return msg, map[string]any{"stored_bytes": storedBytes, "max_stored_bytes": maxBytes}
}

// isTooLargeForStorage reports the API server's (or etcd's) refusal of an
// object for its size, for when it is stricter than MaxStoredBytes: a 413,
// etcd's "request is too large", or gRPC's limit on the message to etcd
// (kube-apiserver answers the last two as 500s).
func isTooLargeForStorage(err error) bool {
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
