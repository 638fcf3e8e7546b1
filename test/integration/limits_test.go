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
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/schema"
	"routeopt.io/routeopt/webserver/storesize"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// storedSize is the size of the input document a create of body stores,
// the figure a 413 reports.
func storedSize(t *testing.T, body []byte) int {
	t.Helper()
	in, details := schema.DecodeOptimizationIn(body)
	if len(details) > 0 {
		t.Fatalf("invalid request: %s at %v", details[0].Msg, details[0].Loc)
	}
	data, _, err := v1alpha1.EncodeInput(webserver.InputFromRequest(in))
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

var resourceVersionField = regexp.MustCompile(`"resourceVersion":"[0-9]+",?`)

// storedForm is the size of the Optimization as etcd holds it: the API
// server's JSON encoding of the object (a GET gives it, managedFields
// included) without the resourceVersion, which is not stored, and with a
// trailing newline (read back from envtest's etcd, the value is exactly
// that).
func storedForm(t *testing.T, namespace, name string) int {
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
	return len(resourceVersionField.ReplaceAll(bytes.TrimSpace(raw), nil)) + len("\n")
}

// The Optimization a create stores is the same size whatever the number
// and size of its orders: they are in its input ConfigMap, so every later
// write to the Optimization costs the same too.
func TestStoredOptimizationSizeIsIndependentOfOrders(t *testing.T) {
	s := startSystem(t, "inprocess")
	s.stopManager() // no status writes: the stored form is the created one

	cases := []struct {
		name string
		body map[string]any
	}{
		{"10 orders, coordinates only", requests.TenOrders(1)},
		{"500 typical orders", requests.Typical(500)},
		{"500 orders, every text at its maximum", requests.AtLimits(500, requests.MaxTextPerOrder, "😀")},
	}
	sizes := make([]int, len(cases))
	for i, tc := range cases {
		tc.body["name"] = "Same name"
		tc.body["fleet"] = map[string]any{"count": 10, "capacity": 60}
		body := mustJSON(t, tc.body)
		status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": fmt.Sprintf("stored-size-%04d", i)})
		if status != 202 {
			t.Fatalf("%s: create: %d %v", tc.name, status, rec)
		}
		sizes[i] = storedForm(t, s.namespace, rec["id"].(string))
		input := storedSize(t, body)
		t.Logf("%s: body %d bytes, Optimization %d bytes, input document %d bytes", tc.name, len(body), sizes[i], input)
	}
	for i := range sizes {
		// The order count's digits and the solver budget differ, nothing else.
		if d := sizes[i] - sizes[0]; d < -8 || d > 8 {
			t.Errorf("%s: stored Optimization %d bytes, %d with 10 orders", cases[i].name, sizes[i], sizes[0])
		}
	}
}

// A valid request too large to store as one object answers 413 with both
// sizes and stores nothing; a key already used for a stored request is
// still answered as a replay.
func TestCreateTooLargeToStore(t *testing.T) {
	s := startSystem(t, "inprocess")
	body := mustJSON(t, requests.Incompressible(500, requests.MaxTextPerOrder, 1))
	key := "too-large-0001"

	for attempt := range 2 { // a retry is refused the same way
		status, out, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": key})
		if status != 413 {
			t.Fatalf("attempt %d: status %d, want 413: %v", attempt, status, out)
		}
		e := out["error"].(map[string]any)
		fields, _ := e["fields"].(map[string]any)
		storedBytes, _ := fields["stored_bytes"].(float64)
		if e["code"] != "payload_too_large" || fields["max_stored_bytes"] != float64(storesize.MaxStoredBytes) || storedBytes <= storesize.MaxStoredBytes {
			t.Fatalf("error %v", e)
		}
		msg := e["message"].(string)
		if !strings.Contains(msg, "1,000,000 bytes") || !strings.Contains(msg, fmt.Sprintf("stored as %s bytes", commas(int(storedBytes)))) {
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
// maximum length, as many random 3-byte characters as fit) is stored,
// solved and its result served; more random characters are refused with 413.
func TestLargestStorableRequest(t *testing.T) {
	s := startSystem(t, "inprocess")
	const n = 500
	size := func(random int) int {
		return storedSize(t, mustJSON(t, requests.Incompressible(n, random, 7)))
	}
	// Each random character adds about two bytes per order: binary search the most.
	random := sort.Search(requests.MaxTextPerOrder+1, func(w int) bool { return size(w) > storesize.MaxStoredBytes }) - 1
	if random < 0 || random == requests.MaxTextPerOrder {
		t.Fatalf("no boundary: %d", random)
	}
	t.Logf("largest: %d orders, %d of each order's %d characters random: input %d bytes", n, random, requests.MaxTextPerOrder, size(random))

	over := mustJSON(t, requests.Incompressible(n, random+1, 7))
	if status, out, _ := s.call(t, "POST", "/v1/optimizations", over, map[string]string{"Idempotency-Key": "largest-0002"}); status != 413 {
		t.Fatalf("one character more: %d %v", status, out)
	}

	body := mustJSON(t, requests.Incompressible(n, random, 7))
	status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "largest-0001"})
	if status != 202 {
		t.Fatalf("create: %d %v", status, rec)
	}
	id := rec["id"].(string)
	t.Logf("body %d bytes, Optimization %d bytes at creation", len(body), storedForm(t, s.namespace, id))

	waitForStateWithin(t, s, id, v1alpha1.StateCompleted, 2*time.Minute)
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
// --max-request-bytes=700000) refuses an input the API lets through: the
// API server's refusal is still a 413 with both sizes, not a 500, and
// nothing is kept.
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
	key, _, err := apikey.Create(ctx, c, apikey.Spec{Namespace: operatorNamespace, Tenant: company, CompanyName: "Strict " + company, Scopes: apikey.AllScopes})
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

	body := mustJSON(t, requests.Incompressible(500, 800, 3))
	estimate := storedSize(t, body)
	if estimate < 700000 || estimate > storesize.MaxStoredBytes {
		t.Fatalf("input document %d bytes: not between etcd's limit and the API's", estimate)
	}
	status, out, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "strict-key-0001"})
	if status != 413 {
		t.Fatalf("status %d, want 413: %v", status, out)
	}
	e := out["error"].(map[string]any)
	fields, _ := e["fields"].(map[string]any)
	if e["code"] != "payload_too_large" || fields["stored_bytes"] != float64(estimate) || fields["max_stored_bytes"] != float64(storesize.MaxStoredBytes) {
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
