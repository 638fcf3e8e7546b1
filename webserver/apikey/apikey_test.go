package apikey

import (
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/schema"
)

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	format := regexp.MustCompile(`^svc_sk_[0-9A-Za-z]{43}$`)
	// The REST API refuses a key_id path parameter that does not match.
	idPattern := regexp.MustCompile(schema.KeyIDPattern)
	for range 200 {
		key, err := newKey()
		if err != nil {
			t.Fatal(err)
		}
		if !format.MatchString(key) {
			t.Fatalf("key %q does not look like svc_sk_ + 43 base62 characters", key)
		}
		if seen[key] {
			t.Fatal("duplicate key")
		}
		seen[key] = true
		if id := ID(key); len(id) != idLength || id != hashKey(key)[:idLength] || !idPattern.MatchString(id) {
			t.Fatalf("ID %q", id)
		}
	}
}

// TestInfoOf reads what may be shown of a key Secret; a last use that
// cannot be read is shown as none, as if never recorded.
func TestInfoOf(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	created := time.Date(2026, 11, 22, 10, 30, 5, 0, berlin)
	used := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		annotation string
		want       *time.Time
	}{
		{"", nil},
		{"2026-11-22T11:00:00+01:00", &used},
		{"yesterday", nil},
	} {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:              "apikey-0123456789abcdef",
				CreationTimestamp: metav1.NewTime(created),
				Labels:            map[string]string{IDLabel: "0123456789abcdef", v1alpha1.TenantLabel: "acme"},
				Annotations:       map[string]string{keyNameAnnot: "dispatch", keyPrefixAnnot: "svc_sk_AbCd"},
			},
			Data: map[string][]byte{scopesField: []byte("optimizations:read,keys:write")},
		}
		if tc.annotation != "" {
			s.Annotations[LastUsedAnnotation] = tc.annotation
		}
		got := infoOf(s)
		if got.ID != "0123456789abcdef" || got.Tenant != "acme" || got.Name != "dispatch" || got.Prefix != "svc_sk_AbCd" ||
			!got.CreatedAt.Equal(created) || len(got.Scopes) != 2 || got.Scopes[0] != "optimizations:read" || got.Scopes[1] != "keys:write" {
			t.Errorf("info %+v", got)
		}
		if (got.LastUsedAt == nil) != (tc.want == nil) || got.LastUsedAt != nil && !got.LastUsedAt.Equal(*tc.want) {
			t.Errorf("last used %q: got %v, want %v", tc.annotation, got.LastUsedAt, tc.want)
		}
	}
}
