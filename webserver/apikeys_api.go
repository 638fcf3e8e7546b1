package webserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/schema"
)

// API key management over REST (docs/API.md, "API keys and the account"), a
// routeopt extension: the portal's API keys page uses it, with the scope
// keys:write.
// Keys are the Secrets of package apikey. Lists come from the key cache every
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

func apiKeyRecord(k apikey.Info) APIKeyRecord {
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
	keys, err := apikey.List(ctx, s.keys, s.opts.OperatorNamespace, principal(c).CompanyID)
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
	in, details := schema.DecodeAPIKeyIn(body, apikey.AllScopes)
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
	} else if n >= apikey.MaxPerCompany {
		abortAPIKeyLimit(c)
		return
	}

	ctx, cancel := s.kubeContext(c)
	key, info, err := apikey.Create(ctx, s.client, apikey.Spec{
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
	case n > apikey.MaxPerCompany:
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
func missingScopes(p *apikey.Principal, want []string) []string {
	var missing []string
	for _, s := range want {
		if !p.Has(s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// countAPIKeys counts p's company's keys on the API server, around the cache.
func (s *Server) countAPIKeys(c *gin.Context, p *apikey.Principal) (int, error) {
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	keys, err := apikey.List(ctx, s.apiReader, s.opts.OperatorNamespace, p.CompanyID)
	return len(keys), err
}

func abortAPIKeyLimit(c *gin.Context) {
	abortError(c, http.StatusConflict, CodeAPIKeyLimitReached,
		fmt.Sprintf("at most %d API keys can exist per company; revoke one first", apikey.MaxPerCompany),
		map[string]any{"limit": apikey.MaxPerCompany})
}

// undoAPIKey revokes a key the caller will never see, and only logs its
// own failure.
func (s *Server) undoAPIKey(ctx context.Context, log logr.Logger, p *apikey.Principal, id string) {
	err := apikey.RevokeThrough(ctx, s.apiReader, s.client, s.opts.OperatorNamespace, p.CompanyID, id)
	if err != nil && !errors.Is(err, apikey.ErrNotFound) {
		log.Error(err, "Could not revoke an API key the caller was refused", "namespace", s.opts.OperatorNamespace, "keyID", id)
	}
}

// undoAPIKeyLater is undoAPIKey after the answer, for as long as a slow
// request may wait.
func (s *Server) undoAPIKeyLater(c *gin.Context, p *apikey.Principal, id string) {
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
	err := apikey.RevokeThrough(ctx, s.apiReader, s.client, s.opts.OperatorNamespace, principal(c).CompanyID, id)
	switch {
	case errors.Is(err, apikey.ErrNotFound):
		abortError(c, http.StatusNotFound, CodeNotFound, "API key not found", nil)
	case err != nil:
		abortKube(c, err, "API key")
	default:
		c.Status(http.StatusNoContent)
	}
}

// recordLastUse records, in the background, that p's key is used now,
// when it is due.
func (s *Server) recordLastUse(c *gin.Context, p *apikey.Principal) {
	now := s.clock.Now()
	if !s.lastUse.Claim(p, now) {
		return
	}
	log := loggerFrom(c)
	ctx := context.WithoutCancel(c.Request.Context())
	go func() {
		defer s.lastUse.Release()
		ctx, cancel := context.WithTimeout(ctx, 2*s.opts.RequestTimeout)
		defer cancel()
		// A key revoked meanwhile is gone: a merge patch never creates it again.
		if err := apikey.RecordUse(ctx, s.client, s.opts.OperatorNamespace, p, now); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Could not record an API key's last use", "keyID", p.KeyID)
		}
	}()
}
