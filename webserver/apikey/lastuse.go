package apikey

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Recording last use. Every authenticated request would otherwise write
// to etcd; instead a use is recorded when the cached record is a minute
// old or more, at most once a minute per key by each replica, by a few
// background writes that never hold up or fail a request.
const (
	lastUseInterval = time.Minute
	// maxLastUseWrites bounds the writes in flight; a use that finds them
	// all busy is left for a later request to record.
	maxLastUseWrites = 4
)

// LastUseRecorder decides which uses are recorded. Its zero value is ready.
type LastUseRecorder struct {
	mu       sync.Mutex
	sent     map[string]time.Time // key id → when this replica last recorded it
	swept    time.Time
	inflight int
}

// Claim reports whether a use at now of p's key is to be recorded (see
// RecordUse); a true answer must be followed by Release once the write is
// done.
func (r *LastUseRecorder) Claim(p *Principal, now time.Time) bool {
	return p.secretName != "" && r.claim(p.KeyID, p.LastUsedAt, now)
}

// claim reports whether a use at now of key id, whose recorded last use is
// recorded (zero when never), is to be recorded; a true answer must be
// followed by release once the write is done.
func (r *LastUseRecorder) claim(id string, recorded, now time.Time) bool {
	if !recorded.IsZero() && now.Sub(recorded) < lastUseInterval {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, ok := r.sent[id]; ok && now.Sub(last) < lastUseInterval {
		return false
	}
	if r.inflight >= maxLastUseWrites {
		return false
	}
	if r.sent == nil {
		r.sent = map[string]time.Time{}
	}
	// Entries older than the interval decide nothing: drop them once an
	// interval, so the map holds only the keys used lately.
	if now.Sub(r.swept) >= lastUseInterval {
		for k, t := range r.sent {
			if now.Sub(t) >= lastUseInterval {
				delete(r.sent, k)
			}
		}
		r.swept = now
	}
	r.sent[id] = now
	r.inflight++
	return true
}

// Release ends a write Claim allowed.
func (r *LastUseRecorder) Release() {
	r.mu.Lock()
	r.inflight--
	r.mu.Unlock()
}

// RecordUse sets the last-use annotation of p's key Secret, in namespace,
// to at. A key revoked meanwhile stays gone: a merge patch never creates it
// again, it answers NotFound.
func RecordUse(ctx context.Context, c client.Client, namespace string, p *Principal, at time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{LastUsedAnnotation: at.UTC().Format(time.RFC3339)},
	}})
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: p.secretName}}
	return c.Patch(ctx, secret, client.RawPatch(types.MergePatchType, patch))
}
