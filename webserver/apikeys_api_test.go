package webserver

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLastUseRecorderClaims(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	type use struct {
		id       string
		recorded time.Time // the cached annotation
		at       time.Time
		release  bool // the write of a granted claim ends before the next use
		want     bool
	}
	tests := []struct {
		name string
		uses []use
	}{
		{"never recorded: recorded at once", []use{{id: "a", at: t0, want: true}}},
		{"recorded 59 s ago: not yet", []use{{id: "a", recorded: t0.Add(-59 * time.Second), at: t0, want: false}}},
		{"recorded a minute ago: again", []use{{id: "a", recorded: t0.Add(-time.Minute), at: t0, want: true}}},
		{"recorded ahead of this replica's clock: recent enough", []use{{id: "a", recorded: t0.Add(time.Hour), at: t0, want: false}}},
		{"a second use before the cache shows the first: once a minute per replica", []use{
			{id: "a", at: t0, release: true, want: true},
			{id: "a", at: t0.Add(30 * time.Second), release: true, want: false},
			{id: "a", at: t0.Add(59 * time.Second), want: false},
			{id: "a", at: t0.Add(time.Minute), release: true, want: true},
		}},
		{"keys are independent", []use{
			{id: "a", at: t0, release: true, want: true},
			{id: "b", at: t0, release: true, want: true},
		}},
		{"writes in flight are bounded; a busy use is not remembered", []use{
			{id: "a", at: t0, want: true}, {id: "b", at: t0, want: true},
			{id: "c", at: t0, want: true}, {id: "d", at: t0, want: true},
			{id: "e", at: t0, want: false},
			{id: "f", at: t0, release: true, want: false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r lastUseRecorder
			for i, u := range tc.uses {
				got := r.claim(u.id, u.recorded, u.at)
				if got != u.want {
					t.Fatalf("use %d (%s at %s): claim %v, want %v", i, u.id, u.at.Format(time.TimeOnly), got, u.want)
				}
				if got && u.release {
					r.release()
				}
			}
		})
	}

	t.Run("a busy use is recorded by a later request", func(t *testing.T) {
		var r lastUseRecorder
		for _, id := range []string{"a", "b", "c", "d"} {
			r.claim(id, time.Time{}, t0)
		}
		if r.claim("e", time.Time{}, t0) {
			t.Fatal("a fifth write in flight was allowed")
		}
		r.release()
		if !r.claim("e", time.Time{}, t0.Add(time.Second)) {
			t.Fatal("the key refused while busy was not recorded once a write ended")
		}
	})

	t.Run("old entries are swept", func(t *testing.T) {
		var r lastUseRecorder
		for _, id := range []string{"a", "b", "c"} {
			r.claim(id, time.Time{}, t0)
			r.release()
		}
		r.claim("d", time.Time{}, t0.Add(2*time.Minute))
		r.release()
		if len(r.sent) != 1 {
			t.Fatalf("%d entries remembered, want only the fresh one: %v", len(r.sent), r.sent)
		}
	})
}

func TestMissingScopes(t *testing.T) {
	p := &Principal{Scopes: []string{ScopeOptimizationsRead, ScopeKeysWrite}}
	tests := []struct {
		want, missing []string
	}{
		{[]string{ScopeOptimizationsRead}, nil},
		{[]string{ScopeKeysWrite, ScopeOptimizationsRead}, nil},
		{[]string{ScopeWebhooksWrite, ScopeOptimizationsRead, ScopeExportsWrite}, []string{ScopeWebhooksWrite, ScopeExportsWrite}},
		{AllScopes, []string{ScopeOptimizationsWrite, ScopeExportsWrite, ScopeWebhooksRead, ScopeWebhooksWrite}},
	}
	for _, tc := range tests {
		if got := missingScopes(p, tc.want); !slices.Equal(got, tc.missing) {
			t.Errorf("asking for %v: missing %v, want %v", tc.want, got, tc.missing)
		}
	}
}

// TestAPIKeyRecord checks the record's JSON: every field present, times in
// UTC with seconds, last_used_at null until a use is recorded and null
// again for an annotation that cannot be read.
func TestAPIKeyRecord(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	secret := func(lastUsed string) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:              "apikey-0123456789abcdef",
				CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 22, 10, 30, 5, 0, berlin)),
				Labels:            map[string]string{APIKeyIDLabel: "0123456789abcdef"},
				Annotations:       map[string]string{keyNameAnnot: "dispatch", keyPrefixAnnot: "svc_sk_AbCd"},
			},
			Data: map[string][]byte{apiKeyScopesField: []byte("optimizations:read,keys:write")},
		}
		if lastUsed != "" {
			s.Annotations[APIKeyLastUsedAnnotation] = lastUsed
		}
		return s
	}
	tests := []struct {
		lastUsed string
		want     string
	}{
		{"", `{"id":"0123456789abcdef","name":"dispatch","prefix":"svc_sk_AbCd","scopes":["optimizations:read","keys:write"],"created_at":"2026-11-22T09:30:05Z","last_used_at":null}`},
		{"2026-11-22T11:00:00+01:00", `{"id":"0123456789abcdef","name":"dispatch","prefix":"svc_sk_AbCd","scopes":["optimizations:read","keys:write"],"created_at":"2026-11-22T09:30:05Z","last_used_at":"2026-11-22T10:00:00Z"}`},
		{"yesterday", `{"id":"0123456789abcdef","name":"dispatch","prefix":"svc_sk_AbCd","scopes":["optimizations:read","keys:write"],"created_at":"2026-11-22T09:30:05Z","last_used_at":null}`},
	}
	for _, tc := range tests {
		raw, err := json.Marshal(apiKeyRecord(apiKeyInfo(secret(tc.lastUsed))))
		if err != nil {
			t.Fatal(err)
		}
		if string(raw) != tc.want {
			t.Errorf("last used %q:\n got %s\nwant %s", tc.lastUsed, raw, tc.want)
		}
	}
}
