package webserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/webserver/schema"
)

// API key management over REST (docs/API.md, "API keys and the account"), a
// routeopt extension: the portal's API keys page uses it, with the scope
// keys:write.
// Keys are the Secrets of apikeys.go. Lists come from the key cache every
// request authenticates against; the limit is checked on the API server
// itself, so that racing creates cannot pass it.

// APIKeyRecord is the REST record of an API key: never the key itself.
type APIKeyRecord struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Prefix     string   `json:"prefix"`
	Scopes     []string `json:"scopes"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

// apiKeyCreated answers a create: the record and, this once, the key.
type apiKeyCreated struct {
	APIKeyRecord
	Key string `json:"key"`
}

func apiKeyRecord(k APIKeyInfo) APIKeyRecord {
	rec := APIKeyRecord{ID: k.ID, Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes, CreatedAt: timestamp(k.CreatedAt)}
	if k.LastUsedAt != nil {
		ts := timestamp(*k.LastUsedAt)
		rec.LastUsedAt = &ts
	}
	return rec
}

// listAPIKeys answers GET /v1/api-keys: the company's keys, oldest first.
func (s *Server) listAPIKeys(c *gin.Context) {
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	keys, err := ListAPIKeys(ctx, s.keys, s.opts.OperatorNamespace, principal(c).CompanyID)
	if err != nil {
		abortKube(c, err, "API keys")
		return
	}
	out := make([]APIKeyRecord, 0, len(keys))
	for _, k := range keys {
		out = append(out, apiKeyRecord(k))
	}
	respondJSON(c, http.StatusOK, gin.H{"items": out})
}

// createAPIKey answers POST /v1/api-keys.
func (s *Server) createAPIKey(c *gin.Context) {
	body, ok := readBody(c)
	if !ok {
		return
	}
	in, details := schema.DecodeAPIKeyIn(body, AllScopes)
	if len(details) > 0 {
		abortValidation(c, details)
		return
	}
	p := principal(c)
	if missing := missingScopes(p, in.Scopes); len(missing) > 0 {
		abortError(c, http.StatusForbidden, CodeInsufficientScope,
			"a key can only grant scopes it holds itself; this API key lacks "+strings.Join(missing, ", "),
			map[string]any{"required_scope": missing[0]})
		return
	}
	if n, err := s.countAPIKeys(c, p); err != nil {
		abortKube(c, err, "API keys")
		return
	} else if n >= MaxAPIKeys {
		abortAPIKeyLimit(c)
		return
	}

	ctx, cancel := s.kubeContext(c)
	key, info, err := CreateAPIKey(ctx, s.client, APIKeySpec{
		Namespace: s.opts.OperatorNamespace, Tenant: p.CompanyID, CompanyName: p.CompanyName,
		Name: in.Name, Scopes: in.Scopes,
	})
	cancel()
	if err != nil {
		if apierrors.IsNotFound(err) {
			// The operator's namespace is missing: nothing the client did.
			abortInternal(c, err)
			return
		}
		abortKube(c, err, "API key")
		return
	}
	// Counted again with the new key in: whichever of racing creates finds
	// the company over the limit takes its own key back, so the last key
	// kept always saw every other kept one, and the limit holds.
	n, err := s.countAPIKeys(c, p)
	switch {
	case err != nil:
		// The API server is failing: take the key back after answering.
		s.undoAPIKeyLater(c, p, info.ID)
		abortKube(c, err, "API keys")
		return
	case n > MaxAPIKeys:
		// Before answering, so no one sees the company over the limit.
		ctx, cancel := s.kubeContext(c)
		defer cancel()
		s.undoAPIKey(ctx, loggerFrom(c), p, info.ID)
		abortAPIKeyLimit(c)
		return
	}
	respondJSON(c, http.StatusCreated, apiKeyCreated{APIKeyRecord: apiKeyRecord(info), Key: key})
}

// missingScopes lists the scopes of want that p does not hold.
func missingScopes(p *Principal, want []string) []string {
	var missing []string
	for _, s := range want {
		if !p.Has(s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// countAPIKeys counts p's company's keys on the API server, around the cache.
func (s *Server) countAPIKeys(c *gin.Context, p *Principal) (int, error) {
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	keys, err := ListAPIKeys(ctx, s.apiReader, s.opts.OperatorNamespace, p.CompanyID)
	return len(keys), err
}

func abortAPIKeyLimit(c *gin.Context) {
	abortError(c, http.StatusConflict, CodeAPIKeyLimitReached,
		fmt.Sprintf("at most %d API keys can exist per company; revoke one first", MaxAPIKeys),
		map[string]any{"limit": MaxAPIKeys})
}

// undoAPIKey revokes a key the caller will never see, and only logs its
// own failure.
func (s *Server) undoAPIKey(ctx context.Context, log logr.Logger, p *Principal, id string) {
	err := revokeAPIKey(ctx, s.apiReader, s.client, s.opts.OperatorNamespace, p.CompanyID, id)
	if err != nil && !errors.Is(err, ErrAPIKeyNotFound) {
		log.Error(err, "Could not revoke an API key the caller was refused", "namespace", s.opts.OperatorNamespace, "keyID", id)
	}
}

// undoAPIKeyLater is undoAPIKey after the answer, for as long as a slow
// request may wait.
func (s *Server) undoAPIKeyLater(c *gin.Context, p *Principal, id string) {
	log := loggerFrom(c)
	ctx := context.WithoutCancel(c.Request.Context())
	go func() {
		ctx, cancel := context.WithTimeout(ctx, s.opts.SlowRequestTimeout)
		defer cancel()
		s.undoAPIKey(ctx, log, p, id)
	}()
}

// deleteAPIKey answers DELETE /v1/api-keys/{key_id}. A key may revoke
// itself. Every replica's key cache sees the delete through its watch and
// refuses the key from then on.
func (s *Server) deleteAPIKey(c *gin.Context) {
	id, details := schema.ParseKeyIDParam("key_id", c.Param("key_id"))
	if len(details) > 0 {
		abortValidation(c, details)
		return
	}
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	err := revokeAPIKey(ctx, s.apiReader, s.client, s.opts.OperatorNamespace, principal(c).CompanyID, id)
	switch {
	case errors.Is(err, ErrAPIKeyNotFound):
		abortError(c, http.StatusNotFound, CodeNotFound, "API key not found", nil)
	case err != nil:
		abortKube(c, err, "API key")
	default:
		c.Status(http.StatusNoContent)
	}
}

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

// lastUseRecorder decides which uses are recorded. Its zero value is ready.
type lastUseRecorder struct {
	mu       sync.Mutex
	sent     map[string]time.Time // key id → when this replica last recorded it
	swept    time.Time
	inflight int
}

// claim reports whether a use at now of key id, whose recorded last use is
// recorded (zero when never), is to be recorded; a true answer must be
// followed by release once the write is done.
func (r *lastUseRecorder) claim(id string, recorded, now time.Time) bool {
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

// release ends a write claim allowed.
func (r *lastUseRecorder) release() {
	r.mu.Lock()
	r.inflight--
	r.mu.Unlock()
}

// recordLastUse records, in the background, that p's key is used now,
// when it is due.
func (s *Server) recordLastUse(c *gin.Context, p *Principal) {
	now := s.clock.Now()
	if p.secretName == "" || !s.lastUse.claim(p.KeyID, p.LastUsedAt, now) {
		return
	}
	log := loggerFrom(c)
	ctx := context.WithoutCancel(c.Request.Context())
	go func() {
		defer s.lastUse.release()
		ctx, cancel := context.WithTimeout(ctx, 2*s.opts.RequestTimeout)
		defer cancel()
		// A key revoked meanwhile is gone: a merge patch never creates it again.
		if err := s.patchLastUsed(ctx, p.secretName, now); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Could not record an API key's last use", "keyID", p.KeyID)
		}
	}()
}

// patchLastUsed sets the last-use annotation of key Secret name to at.
func (s *Server) patchLastUsed(ctx context.Context, name string, at time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{APIKeyLastUsedAnnotation: at.UTC().Format(time.RFC3339)},
	}})
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.opts.OperatorNamespace, Name: name}}
	return s.client.Patch(ctx, secret, client.RawPatch(types.MergePatchType, patch))
}
