package webserver

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"routeopt.io/routeopt/webserver/apikey"
)

func TestMissingScopes(t *testing.T) {
	p := &apikey.Principal{Scopes: []string{apikey.ScopeOptimizationsRead, apikey.ScopeKeysWrite}}
	tests := []struct {
		want, missing []string
	}{
		{[]string{apikey.ScopeOptimizationsRead}, nil},
		{[]string{apikey.ScopeKeysWrite, apikey.ScopeOptimizationsRead}, nil},
		{[]string{apikey.ScopeWebhooksWrite, apikey.ScopeOptimizationsRead, apikey.ScopeExportsWrite}, []string{apikey.ScopeWebhooksWrite, apikey.ScopeExportsWrite}},
		{apikey.AllScopes, []string{apikey.ScopeOptimizationsWrite, apikey.ScopeExportsWrite, apikey.ScopeWebhooksRead, apikey.ScopeWebhooksWrite}},
	}
	for _, tc := range tests {
		if got := missingScopes(p, tc.want); !slices.Equal(got, tc.missing) {
			t.Errorf("asking for %v: missing %v, want %v", tc.want, got, tc.missing)
		}
	}
}

// TestAPIKeyRecord checks the record's JSON: every field present, times in
// UTC with seconds, last_used_at null until a use is recorded.
func TestAPIKeyRecord(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	info := apikey.Info{
		ID: "0123456789abcdef", Name: "dispatch", Prefix: "svc_sk_AbCd",
		Scopes:    []string{"optimizations:read", "keys:write"},
		CreatedAt: time.Date(2026, 11, 22, 10, 30, 5, 0, berlin),
	}
	used := time.Date(2026, 11, 22, 11, 0, 0, 0, berlin)
	tests := []struct {
		lastUsed *time.Time
		want     string
	}{
		{nil, `{"id":"0123456789abcdef","name":"dispatch","prefix":"svc_sk_AbCd","scopes":["optimizations:read","keys:write"],"created_at":"2026-11-22T09:30:05Z","last_used_at":null}`},
		{&used, `{"id":"0123456789abcdef","name":"dispatch","prefix":"svc_sk_AbCd","scopes":["optimizations:read","keys:write"],"created_at":"2026-11-22T09:30:05Z","last_used_at":"2026-11-22T10:00:00Z"}`},
	}
	for _, tc := range tests {
		info.LastUsedAt = tc.lastUsed
		raw, err := json.Marshal(apiKeyRecord(info))
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != tc.want {
			t.Errorf("last used %v:\n got %s\nwant %s", tc.lastUsed, raw, tc.want)
		}
	}
}
