package webserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
)

// FuzzCreateOptimization drives POST /v1/optimizations with arbitrary
// bodies. The storage is controller-runtime's fake client (the integration
// tests use a real API server; a fuzzer needs thousands of requests a
// second). Every answer must be 202 with a record or 422 with a
// well-formed detail list, and nothing may panic.
func FuzzCreateOptimization(f *testing.F) {
	for _, seed := range []string{
		`{"depot":{"latitude":52.5,"longitude":13.4},"orders":[{"id":"a","latitude":52.5,"longitude":13.4}],"fleet":{"count":1,"capacity":10}}`,
		`{"depot":{"address":"Main street 1"},"orders":[{"id":"a","address":"x"}],"vehicles":[{"id":"v","capacity":"5"}]}`,
		`{"depot":`, `[]`, ``, `null`, `{"orders":[{"id":1}]}`,
	} {
		f.Add([]byte(seed))
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	key := "svc_sk_fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzzfuz"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "apikey-fuzz", Namespace: v1alpha1.DefaultOperatorNamespace, Labels: map[string]string{APIKeyIDLabel: KeyID(key), v1alpha1.TenantLabel: "fuzz"}},
		Type:       SecretTypeAPIKey,
		Data:       map[string][]byte{apiKeyHashField: []byte(hashKey(key)), apiKeyScopesField: []byte(ScopeOptimizationsWrite)},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build()
	handler := New(c, c, c, logr.Discard(), Options{PublicURL: "https://x.test"}).Handler()
	var n atomic.Int64

	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/v1/optimizations", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "fuzz-key-"+strconv.FormatInt(n.Add(1), 10))
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("status %d with a body that is not a JSON object: %v: %s", rec.Code, err, rec.Body.Bytes())
		}
		switch rec.Code {
		case http.StatusAccepted:
			if id, _ := out["id"].(string); id == "" || out["status"] != "queued" {
				t.Fatalf("202 without a queued record: %v", out)
			}
		case http.StatusUnprocessableEntity:
			detail, ok := out["detail"].([]any)
			if !ok || len(detail) == 0 {
				t.Fatalf("422 without details: %v", out)
			}
			for _, d := range detail {
				e, ok := d.(map[string]any)
				loc, _ := e["loc"].([]any)
				if !ok || len(loc) == 0 || loc[0] != "body" || e["type"] == "" || e["msg"] == "" {
					t.Fatalf("malformed detail %v", d)
				}
				if _, has := e["input"]; !has {
					t.Fatalf("detail without input %v", d)
				}
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
	})
}
