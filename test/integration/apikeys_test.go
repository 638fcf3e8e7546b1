package integration

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// apiKeyItems lists the caller's keys by id.
func (s *system) apiKeyItems(t *testing.T) map[string]map[string]any {
	t.Helper()
	status, body, _ := s.call(t, "GET", "/v1/api-keys", nil, nil)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/api-keys: %d %v", status, body)
	}
	out := map[string]map[string]any{}
	for _, it := range body["items"].([]any) {
		item := it.(map[string]any)
		out[item["id"].(string)] = item
	}
	return out
}

// createAPIKey creates a key over REST and answers the caller acting with
// it, once the API's cache has it, and its 201 body.
func (s *system) createAPIKey(t *testing.T, name string, scopes ...string) (*system, map[string]any) {
	t.Helper()
	status, body, _ := s.call(t, "POST", "/v1/api-keys", map[string]any{"name": name, "scopes": scopes}, nil)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/api-keys %v: %d %v", scopes, status, body)
	}
	other := *s
	other.apiKey = body["key"].(string)
	waitFor(t, 5*time.Second, "the created key in the API's cache", func() (bool, error) {
		status, _, _ := other.call(t, "GET", "/v1/me", nil, nil)
		return status == http.StatusOK, nil
	})
	return &other, body
}

// requiredScope is fields.required_scope of a 403.
func requiredScope(body map[string]any) any {
	fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
	return fields["required_scope"]
}

func asStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

func TestAPIKeys(t *testing.T) {
	s := startSystem(t, "inprocess")
	mainID := apikey.ID(s.apiKey)

	t.Run("list shows the company's keys only, never a key", func(t *testing.T) {
		otherKey := newAPIKey(t, "it-other-"+randomHex(4), apikey.AllScopes...)
		items := s.apiKeyItems(t)
		main, ok := items[mainID]
		if !ok {
			t.Fatalf("the caller's own key %s is not listed: %v", mainID, items)
		}
		if _, leaked := items[apikey.ID(otherKey)]; leaked {
			t.Error("another company's key is listed")
		}
		if got := asStrings(main["scopes"]); !slices.Equal(got, apikey.AllScopes) {
			t.Errorf("scopes %v, want all six %v", got, apikey.AllScopes)
		}
		if !slices.Contains(apikey.AllScopes, apikey.ScopeKeysWrite) || len(apikey.AllScopes) != 6 {
			t.Errorf("AllScopes %v lacks keys:write", apikey.AllScopes)
		}
		if _, err := time.Parse(time.RFC3339, main["created_at"].(string)); err != nil {
			t.Errorf("created_at: %v", err)
		}
		for _, item := range items {
			if _, ok := item["key"]; ok {
				t.Errorf("a listed record carries the key: %v", item)
			}
		}
	})

	var created *system
	var createdID string
	t.Run("create: the key works with exactly the asked scopes", func(t *testing.T) {
		var body map[string]any
		created, body = s.createAPIKey(t, "  Dispatch app  ", apikey.ScopeExportsWrite, apikey.ScopeOptimizationsRead)
		key := body["key"].(string)
		createdID = body["id"].(string)
		if createdID != apikey.ID(key) || body["prefix"] != key[:len(apikey.Prefix)+4] || body["name"] != "Dispatch app" {
			t.Errorf("record %v does not match key %s", body, key)
		}
		if body["last_used_at"] != nil {
			t.Errorf("last_used_at %v before any use", body["last_used_at"])
		}
		// Stored in the documented order of scopes, whatever the order asked.
		want := []string{apikey.ScopeOptimizationsRead, apikey.ScopeExportsWrite}
		if got := asStrings(body["scopes"]); !slices.Equal(got, want) {
			t.Errorf("scopes %v, want %v", got, want)
		}
		_, me, _ := created.call(t, "GET", "/v1/me", nil, nil)
		if got := asStrings(me["scopes"]); !slices.Equal(got, want) {
			t.Errorf("/v1/me with the new key: scopes %v, want %v", got, want)
		}
		if company := me["company"].(map[string]any); company["id"] != s.tenantID() || company["name"] != "Integration "+s.tenantID() {
			t.Errorf("the new key speaks for %v, want the creator's company", company)
		}
		if status, _, _ := created.call(t, "GET", "/v1/optimizations", nil, nil); status != http.StatusOK {
			t.Errorf("optimizations:read with the new key: %d", status)
		}
		status, body, _ := created.call(t, "POST", "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/x"}, nil)
		if status != http.StatusForbidden || requiredScope(body) != apikey.ScopeWebhooksWrite {
			t.Errorf("webhooks:write with a key without it: %d %v", status, body)
		}
	})

	t.Run("last_used_at is recorded after the first use", func(t *testing.T) {
		waitFor(t, 10*time.Second, "last_used_at of the used key", func() (bool, error) {
			item, ok := s.apiKeyItems(t)[createdID]
			return ok && item["last_used_at"] != nil, nil
		})
		item := s.apiKeyItems(t)[createdID]
		used, err := time.Parse(time.RFC3339, item["last_used_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		createdAt, _ := time.Parse(time.RFC3339, item["created_at"].(string))
		if used.Before(createdAt) {
			t.Errorf("last used %s before it was created %s", used, createdAt)
		}
	})

	t.Run("without keys:write every operation is 403", func(t *testing.T) {
		for _, tc := range []struct{ method, path string }{
			{"GET", "/v1/api-keys"},
			{"POST", "/v1/api-keys"},
			{"DELETE", "/v1/api-keys/" + mainID},
		} {
			var body any
			if tc.method == "POST" {
				body = map[string]any{"name": "x", "scopes": []string{apikey.ScopeOptimizationsRead}}
			}
			status, out, _ := created.call(t, tc.method, tc.path, body, nil)
			if status != http.StatusForbidden || errorCode(t, out) != webserver.CodeInsufficientScope || requiredScope(out) != apikey.ScopeKeysWrite {
				t.Errorf("%s %s without keys:write: %d %v", tc.method, tc.path, status, out)
			}
		}
		if _, ok := s.apiKeyItems(t)[mainID]; !ok {
			t.Error("the refused delete removed the key")
		}
	})

	t.Run("a key grants only scopes it holds", func(t *testing.T) {
		limited := s.withKey(t, apikey.ScopeKeysWrite, apikey.ScopeOptimizationsRead)
		status, body, _ := limited.call(t, "POST", "/v1/api-keys", map[string]any{
			"name": "escalate", "scopes": []string{apikey.ScopeOptimizationsRead, apikey.ScopeWebhooksWrite, apikey.ScopeExportsWrite},
		}, nil)
		if status != http.StatusForbidden || errorCode(t, body) != webserver.CodeInsufficientScope || requiredScope(body) != apikey.ScopeWebhooksWrite {
			t.Errorf("escalation: %d %v", status, body)
		}
		if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, apikey.ScopeWebhooksWrite) || !strings.Contains(msg, apikey.ScopeExportsWrite) {
			t.Errorf("the message does not name every missing scope: %q", msg)
		}
		// A subset of the caller's own scopes is granted.
		limited.createAPIKey(t, "read only", apikey.ScopeOptimizationsRead)
	})

	t.Run("bad input is 422 in the documented shape", func(t *testing.T) {
		read := apikey.ScopeOptimizationsRead
		for _, tc := range []struct {
			why    string // empty: the document accepts the request
			method string
			path   string
			body   any
			loc    []any
			typ    string
		}{
			{"an unknown scope", "POST", "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{read, "keys:read"}}, []any{"body", "scopes", float64(1)}, "literal_error"},
			{"an unknown field", "POST", "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{read}, "expires_at": nil}, []any{"body", "expires_at"}, "extra_forbidden"},
			{"a name over 120 characters", "POST", "/v1/api-keys", map[string]any{"name": strings.Repeat("n", 121), "scopes": []string{read}}, []any{"body", "name"}, "string_too_long"},
			{"an empty name", "POST", "/v1/api-keys", map[string]any{"name": "", "scopes": []string{read}}, []any{"body", "name"}, "string_too_short"},
			{"no scopes", "POST", "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{}}, []any{"body", "scopes"}, "too_short"},
			{"no scopes field", "POST", "/v1/api-keys", map[string]any{"name": "x"}, []any{"body", "scopes"}, "missing"},
			{"a scope twice", "POST", "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{read, read}}, []any{"body", "scopes"}, "value_error"},
			{"not JSON", "POST", "/v1/api-keys", `{"name": `, []any{"body", float64(9)}, "json_invalid"},
			{"", "POST", "/v1/api-keys", map[string]any{"name": "   ", "scopes": []string{read}}, []any{"body", "name"}, "value_error"},
			{"a key id in upper case", "DELETE", "/v1/api-keys/" + strings.ToUpper(mainID), nil, []any{"path", "key_id"}, "string_pattern_mismatch"},
			{"a key id too short", "DELETE", "/v1/api-keys/abc", nil, []any{"path", "key_id"}, "string_pattern_mismatch"},
		} {
			var status int
			var body map[string]any
			if tc.why == "" {
				status, body, _ = s.call(t, tc.method, tc.path, tc.body, nil)
			} else {
				status, body, _ = s.callInvalid(t, tc.why, tc.method, tc.path, tc.body, nil)
			}
			if status != http.StatusUnprocessableEntity {
				t.Errorf("%s: %d %v", tc.why, status, body)
				continue
			}
			detail := body["detail"].([]any)[0].(map[string]any)
			if detail["type"] != tc.typ || !slices.Equal(detail["loc"].([]any), tc.loc) {
				t.Errorf("%s: detail %v, want %s at %v", tc.why, detail, tc.typ, tc.loc)
			}
		}
		if _, ok := s.apiKeyItems(t)[mainID]; !ok {
			t.Error("a refused delete removed the key")
		}
	})

	t.Run("another company's key and an unknown id are not found", func(t *testing.T) {
		otherKey := newAPIKey(t, "it-other-"+randomHex(4), apikey.AllScopes...)
		for _, id := range []string{apikey.ID(otherKey), "0123456789abcdef"} {
			status, body, _ := s.call(t, "DELETE", "/v1/api-keys/"+id, nil, nil)
			if status != http.StatusNotFound || errorCode(t, body) != webserver.CodeNotFound {
				t.Errorf("DELETE %s: %d %v", id, status, body)
			}
		}
		secret := &corev1.Secret{}
		if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: "apikey-" + apikey.ID(otherKey)}, secret); err != nil {
			t.Errorf("the other company's key after a refused revoke: %v", err)
		}
	})

	t.Run("a revoked key is refused by every replica within 5 s", func(t *testing.T) {
		// A second API replica on its own cache. Deferred, not a cleanup:
		// startAPI's cleanup waits for the replica, which stops on cancel.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		url2, _ := startAPI(ctx, t, cfg, s.namespace, nil)
		victim, body := s.createAPIKey(t, "to revoke", apikey.ScopeOptimizationsRead)
		onReplica2 := *victim
		onReplica2.url = url2
		waitFor(t, 5*time.Second, "the key on the second replica", func() (bool, error) {
			status, _, _ := onReplica2.call(t, "GET", "/v1/me", nil, nil)
			return status == http.StatusOK, nil
		})
		id := body["id"].(string)
		if status, out, _ := s.call(t, "DELETE", "/v1/api-keys/"+id, nil, nil); status != http.StatusNoContent {
			t.Fatalf("DELETE: %d %v", status, out)
		}
		for _, replica := range []*system{victim, &onReplica2} {
			waitFor(t, 5*time.Second, "the revoked key refused by "+replica.url, func() (bool, error) {
				status, _, _ := replica.call(t, "GET", "/v1/me", nil, nil)
				return status == http.StatusUnauthorized, nil
			})
		}
		waitFor(t, 5*time.Second, "the revoked key gone from the list", func() (bool, error) {
			_, listed := s.apiKeyItems(t)[id]
			return !listed, nil
		})
		if status, out, _ := s.call(t, "DELETE", "/v1/api-keys/"+id, nil, nil); status != http.StatusNotFound {
			t.Errorf("DELETE again: %d %v", status, out)
		}
	})

	t.Run("a key may revoke itself", func(t *testing.T) {
		self, body := s.createAPIKey(t, "self", apikey.ScopeKeysWrite)
		if status, out, _ := self.call(t, "DELETE", "/v1/api-keys/"+body["id"].(string), nil, nil); status != http.StatusNoContent {
			t.Fatalf("self-revoke: %d %v", status, out)
		}
		waitFor(t, 5*time.Second, "the self-revoked key refused", func() (bool, error) {
			status, _, _ := self.call(t, "GET", "/v1/me", nil, nil)
			return status == http.StatusUnauthorized, nil
		})
	})

	t.Run("at most 100 keys per company, also when creates race", func(t *testing.T) {
		ctx := context.Background()
		count := func() int {
			keys, err := apikey.List(ctx, k8sClient, operatorNamespace, s.tenantID())
			if err != nil {
				t.Fatal(err)
			}
			return len(keys)
		}
		for n := count(); n < apikey.MaxPerCompany-3; n++ {
			newAPIKey(t, s.tenantID(), apikey.ScopeOptimizationsRead)
		}
		// Eight creates at once for the last three places: the server
		// never lets the company past the limit (racers that all see it
		// exceeded may all be refused; each can simply try again).
		const racers = 8
		statuses := make([]int, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", s.url+"/v1/api-keys", bytes.NewReader([]byte(`{"name":"racer","scopes":["optimizations:read"]}`)))
				req.Header.Set("Authorization", "Bearer "+s.apiKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Errorf("racer %d: %v", i, err)
					return
				}
				_ = resp.Body.Close()
				statuses[i] = resp.StatusCode
			})
		}
		wg.Wait()
		won := 0
		for i, st := range statuses {
			switch st {
			case http.StatusCreated:
				won++
			case http.StatusConflict:
			default:
				t.Errorf("racer %d: %d", i, st)
			}
		}
		if n := count(); n > apikey.MaxPerCompany || n != apikey.MaxPerCompany-3+won {
			t.Fatalf("%d keys after %d of the racing creates won (%v); the limit is %d", n, won, statuses, apikey.MaxPerCompany)
		}
		t.Logf("racing creates for the last 3 places: %v", statuses)
		// Fill what a race left free, then one more is refused.
		for count() < apikey.MaxPerCompany {
			if status, body, _ := s.call(t, "POST", "/v1/api-keys", map[string]any{"name": "fill", "scopes": []string{apikey.ScopeOptimizationsRead}}, nil); status != http.StatusCreated {
				t.Fatalf("below the limit: %d %v", status, body)
			}
		}
		status, body, _ := s.call(t, "POST", "/v1/api-keys", map[string]any{"name": "one too many", "scopes": []string{apikey.ScopeOptimizationsRead}}, nil)
		if status != http.StatusConflict || errorCode(t, body) != webserver.CodeAPIKeyLimitReached {
			t.Fatalf("past the limit: %d %v", status, body)
		}
		if limit := body["error"].(map[string]any)["fields"].(map[string]any)["limit"]; limit != float64(apikey.MaxPerCompany) {
			t.Errorf("fields.limit %v", limit)
		}
		if n := count(); n != apikey.MaxPerCompany {
			t.Errorf("%d keys after a refused create", n)
		}
		waitFor(t, 5*time.Second, "every key in the list", func() (bool, error) {
			return len(s.apiKeyItems(t)) == apikey.MaxPerCompany, nil
		})
		// Revoking one makes room again.
		if status, body, _ := s.call(t, "DELETE", "/v1/api-keys/"+createdID, nil, nil); status != http.StatusNoContent {
			t.Fatalf("revoke: %d %v", status, body)
		}
		if status, body, _ := s.call(t, "POST", "/v1/api-keys", map[string]any{"name": "room again", "scopes": []string{apikey.ScopeOptimizationsRead}}, nil); status != http.StatusCreated {
			t.Errorf("after a revoke: %d %v", status, body)
		}
	})
}

// TestAPIKeyRegisteredAgainGainsScopes: dev mode registers its saved key
// at every start; a key saved by a version without keys:write gains it.
func TestAPIKeyRegisteredAgainGainsScopes(t *testing.T) {
	ctx := context.Background()
	tenantID := "it-again-" + randomHex(4)
	fixed := apikey.Prefix + strings.Repeat("k", 24) + randomHex(4)
	spec := apikey.Spec{Namespace: operatorNamespace, Tenant: tenantID, Name: "dev", Key: fixed, Scopes: apikey.AllScopes[:5]}
	if _, _, err := apikey.Create(ctx, k8sClient, spec); err != nil {
		t.Fatal(err)
	}
	spec.Scopes = apikey.AllScopes
	key, info, err := apikey.Create(ctx, k8sClient, spec)
	if err != nil {
		t.Fatal(err)
	}
	if key != fixed || !slices.Equal(info.Scopes, apikey.AllScopes) {
		t.Fatalf("registered again: key %q scopes %v, want the same key with %v", key, info.Scopes, apikey.AllScopes)
	}
	p, err := apikey.Authenticate(ctx, k8sClient, operatorNamespace, fixed)
	if err != nil || p == nil || !p.Has(apikey.ScopeKeysWrite) {
		t.Fatalf("stored key after registering again: %+v, %v", p, err)
	}
}
