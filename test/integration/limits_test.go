package integration

import (
	"routeopt.io/routeopt/test/requests"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/webserver"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

var resourceVersionField = regexp.MustCompile(`"resourceVersion":"[0-9]+",?`)

// storedForm is the size of the Optimization as etcd holds it: the API
// server's JSON encoding of the object (a GET gives it, managedFields
// included) without the resourceVersion, which is not stored, and with a
// trailing newline (read back from envtest's etcd, the value is exactly
// that). It also returns the bytes of its managedFields.
func storedForm(t *testing.T, namespace, name string) (stored, managedFields int) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/apis", v1alpha1.GroupVersion.Group, v1alpha1.GroupVersion.Version,
		"namespaces", namespace, "optimizations", name).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.TrimSpace(raw)
	var obj struct {
		Metadata struct {
			ManagedFields json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return len(resourceVersionField.ReplaceAll(raw, nil)) + len("\n"), len(obj.Metadata.ManagedFields)
}

// The estimate the API makes before a create is never below the size the
// object really takes in etcd, and close to it, for requests of every shape.
func TestStoredSizeEstimate(t *testing.T) {
	s := startSystem(t, "inprocess")
	s.stopManager() // no status writes: the stored form is the created one

	cases := []struct {
		name string
		body map[string]any
	}{
		{"10 orders, coordinates only", requests.TenOrders(1)},
		{"500 typical orders", requests.Typical(500)},
		{"500 orders, every text at its maximum, ASCII", requests.AtLimits(500, 0, "x")},
		{"150 orders at maximum, 4-byte characters, 100 vehicles", requests.WithVehicles(requests.AtLimits(150, requests.MaxTextPerOrder, "😀"), 100, "é")},
		{"100 orders at maximum, characters stored escaped", requests.Escaped()},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := fmt.Sprintf("stored-size-%04d", i)
			body := mustJSON(t, tc.body)
			estimate, err := webserver.StoredSizeOfRequest(s.namespace, key, body)
			if err != nil {
				t.Fatal(err)
			}
			status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": key})
			if status != 202 {
				t.Fatalf("create: %d %v", status, rec)
			}
			stored, mf := storedForm(t, s.namespace, rec["id"].(string))
			t.Logf("body %d bytes, stored %d bytes (managedFields %d, %.0f%%), estimate %d (+%d)",
				len(body), stored, mf, 100*float64(mf)/float64(stored), estimate, estimate-stored)
			if estimate < stored {
				t.Errorf("estimate %d is below the stored size %d", estimate, stored)
			}
			if estimate > stored+64 {
				t.Errorf("estimate %d is more than 64 bytes above the stored size %d", estimate, stored)
			}
		})
	}
}

// A valid request too large to store as one object answers 413 with both
// sizes and stores nothing; a key already used for a stored request is
// still answered as a replay.
func TestCreateTooLargeToStore(t *testing.T) {
	s := startSystem(t, "inprocess")
	body := mustJSON(t, requests.AtLimits(500, requests.MaxTextPerOrder, "😀"))
	key := "too-large-0001"

	for attempt := range 2 { // a retry is refused the same way
		status, out, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": key})
		if status != 413 {
			t.Fatalf("attempt %d: status %d, want 413: %v", attempt, status, out)
		}
		e := out["error"].(map[string]any)
		fields, _ := e["fields"].(map[string]any)
		storedBytes, _ := fields["stored_bytes"].(float64)
		if e["code"] != "payload_too_large" || fields["max_stored_bytes"] != float64(webserver.MaxStoredBytes) || storedBytes <= webserver.MaxStoredBytes {
			t.Fatalf("error %v", e)
		}
		msg := e["message"].(string)
		if !strings.Contains(msg, "1,500,000 bytes") || !strings.Contains(msg, fmt.Sprintf("stored as %s bytes", commas(int(storedBytes)))) {
			t.Errorf("message %q does not give both sizes", msg)
		}
		t.Logf("body %d bytes: %s", len(body), msg)
	}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: webserver.OptimizationID(s.namespace, key)}, &v1alpha1.Optimization{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused optimization exists: %v", err)
	}
	if status, list, _ := s.call(t, "GET", "/v1/optimizations", nil, nil); status != 200 || list["total"] != float64(0) {
		t.Errorf("list after the refusal: %d %v", status, list)
	}

	// The same key, first used for a request that was stored: the large
	// request is a different one (422), the first one replays (202).
	small := requests.TenOrders(1)
	status, first, _ := s.call(t, "POST", "/v1/optimizations", small, map[string]string{"Idempotency-Key": "too-large-0002"})
	if status != 202 {
		t.Fatalf("create: %d %v", status, first)
	}
	status, out, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "too-large-0002"})
	if detail, _ := out["detail"].([]any); status != 422 || len(detail) != 1 || detail[0].(map[string]any)["type"] != "idempotency_key_reused" {
		t.Errorf("large request with a used key: %d %v", status, out)
	}
	if status, again, _ := s.call(t, "POST", "/v1/optimizations", small, map[string]string{"Idempotency-Key": "too-large-0002"}); status != 202 || again["id"] != first["id"] {
		t.Errorf("replay: %d %v", status, again)
	}
}

// The largest request that can be stored (500 orders, every text at its
// maximum length, as many 2-byte characters as fit) is stored, solved and
// its result served; one more 2-byte character is refused with 413.
func TestLargestStorableRequest(t *testing.T) {
	s := startSystem(t, "inprocess")
	const n = 500
	key := "largest-0001"
	size := func(wide int) int {
		est, err := webserver.StoredSizeOfRequest(s.namespace, key, mustJSON(t, requests.AtLimits(n, wide, "é")))
		if err != nil {
			t.Fatal(err)
		}
		return est
	}
	// Each 2-byte character adds a byte per order: binary search the most.
	wide := sort.Search(requests.MaxTextPerOrder+1, func(w int) bool { return size(w) > webserver.MaxStoredBytes }) - 1
	if wide < 0 || wide == requests.MaxTextPerOrder {
		t.Fatalf("no boundary: %d", wide)
	}
	t.Logf("largest: %d orders, %d of each order's %d characters 2-byte: estimate %d bytes", n, wide, requests.MaxTextPerOrder, size(wide))

	over := mustJSON(t, requests.AtLimits(n, wide+1, "é"))
	if status, out, _ := s.call(t, "POST", "/v1/optimizations", over, map[string]string{"Idempotency-Key": "largest-0002"}); status != 413 {
		t.Fatalf("one character more: %d %v", status, out)
	}

	req := requests.AtLimits(n, wide, "é")
	body := mustJSON(t, req)
	status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": key})
	if status != 202 {
		t.Fatalf("create: %d %v", status, rec)
	}
	id := rec["id"].(string)
	stored, mf := storedForm(t, s.namespace, id)
	t.Logf("body %d bytes, stored %d bytes at creation (managedFields %d)", len(body), stored, mf)

	waitForStateWithin(t, s, id, v1alpha1.StateCompleted, 2*time.Minute)
	stored, _ = storedForm(t, s.namespace, id)
	t.Logf("stored %d bytes once completed (limit %d, etcd's %d)", stored, webserver.MaxStoredBytes, 1572864)
	status, res, _ := s.call(t, "GET", "/v1/optimizations/"+id+"/result", nil, nil)
	if status != 200 {
		t.Fatalf("result: %d %v", status, res)
	}
	var result v1alpha1.Result
	remarshal(t, res, &result)
	planned := len(result.Unassigned)
	for _, r := range result.Routes {
		for _, st := range r.Stops {
			if st.OrderRef != "" {
				planned++
			}
		}
	}
	if planned != n {
		t.Errorf("result accounts for %d orders, want %d", planned, n)
	}
}

// A cluster whose etcd takes less than MaxStoredBytes in one write (here
// --max-request-bytes=700000) refuses a request the estimate lets through:
// the API server's refusal is still a 413 with both sizes, not a 500, and
// nothing is stored.
func TestStorageStricterThanTheLimit(t *testing.T) {
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	etcd := &envtest.Etcd{}
	etcd.Configure().Set("max-request-bytes", "700000")
	env := &envtest.Environment{BinaryAssetsDirectory: cfgAssets(), CRDs: crds}
	env.ControlPlane.Etcd = etcd
	strictCfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.New(strictCfg, client.Options{Scheme: app.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		t.Fatal(err)
	}
	company := "it-" + randomHex(4)
	if _, err := tenant.Create(ctx, c, company, "Strict "+company, operatorNamespace); err != nil {
		t.Fatal(err)
	}
	key, _, err := webserver.CreateAPIKey(ctx, c, webserver.APIKeySpec{Namespace: operatorNamespace, Tenant: company, CompanyName: "Strict " + company, Scopes: webserver.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	ns := v1alpha1.TenantNamespace(company)
	url, apiClient := startAPI(ctx, t, strictCfg, ns, nil)
	t.Cleanup(cancel) // before startAPI's cleanup, which waits for the API to stop
	s := &system{namespace: ns, apiKey: key, url: url, client: apiClient}
	waitFor(t, 10*time.Second, "the key in the API's cache", func() (bool, error) {
		status, _, _ := s.call(t, "GET", "/v1/me", nil, nil)
		return status == 200, nil
	})

	body := mustJSON(t, requests.AtLimits(500, 0, "x"))
	estimate, err := webserver.StoredSizeOfRequest(ns, "strict-key-0001", body)
	if err != nil {
		t.Fatal(err)
	}
	status, out, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "strict-key-0001"})
	if status != 413 {
		t.Fatalf("status %d, want 413: %v", status, out)
	}
	e := out["error"].(map[string]any)
	fields, _ := e["fields"].(map[string]any)
	if e["code"] != "payload_too_large" || fields["stored_bytes"] != float64(estimate) || fields["max_stored_bytes"] != float64(webserver.MaxStoredBytes) {
		t.Errorf("error %v", e)
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, commas(estimate)+" bytes") || !strings.Contains(msg, "refused") {
		t.Errorf("message %q", msg)
	}
	t.Logf("%v", e)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: webserver.OptimizationID(ns, "strict-key-0001")}, &v1alpha1.Optimization{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused optimization exists: %v", err)
	}
	if status, rec, _ := s.call(t, "POST", "/v1/optimizations", requests.TenOrders(1), map[string]string{"Idempotency-Key": "strict-key-0002"}); status != 202 {
		t.Errorf("a small request: %d %v", status, rec)
	}
	// The large request under the small one's key is a reused key, not too large.
	status, out, _ = s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "strict-key-0002"})
	if detail, _ := out["detail"].([]any); status != 422 || len(detail) != 1 || detail[0].(map[string]any)["type"] != "idempotency_key_reused" {
		t.Errorf("large request with a used key: %d %v", status, out)
	}
}

// waitForStateWithin is waitForState with its own timeout.
func waitForStateWithin(t *testing.T, s *system, id string, want v1alpha1.State, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "state "+string(want), func() (bool, error) {
		_, rec, _ := s.call(t, "GET", "/v1/optimizations/"+id, nil, nil)
		if rec["status"] == "failed" {
			return false, fmt.Errorf("failed: %v", rec)
		}
		return rec["status"] == string(want), nil
	})
}

// commas writes n as 1,500,000.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
