package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// The REST side of webhooks: GET, POST /v1/webhooks and DELETE
// /v1/webhooks/{webhook_id}, their storage (a WebhookEndpoint per slot in
// the tenant namespace, its signing Secret in the operator's), the
// registration checks, the limit of five, scopes and tenancy. Every call
// goes through system.call, so every answer is checked against the OpenAPI
// document. Registration never connects: public IP literals need no
// network, and a policy allowing one loopback target stands in for a
// local receiver.

var (
	whUUID       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	whSecret     = regexp.MustCompile(`^whsec_svc_[0-9a-f]{64}$`)
	whSecretName = regexp.MustCompile(`^whsec-[0-9a-f]{16}$`)
)

// whRecordKeys are the keys of a listed endpoint record, in sorted order.
var whRecordKeys = []string{"created_at", "disabled", "failure_count", "id", "last_status", "url"}

// whCreate registers url and returns the 201 answer.
func whCreate(t *testing.T, s *system, url string) map[string]any {
	t.Helper()
	status, rec, _ := s.call(t, "POST", "/v1/webhooks", map[string]any{"url": url}, nil)
	if status != http.StatusCreated {
		t.Fatalf("register %s: %d %v", url, status, rec)
	}
	return rec
}

// whDelete removes the endpoint id and expects 204 with no body.
func whDelete(t *testing.T, s *system, id string) {
	t.Helper()
	status, rec, _ := s.call(t, "DELETE", "/v1/webhooks/"+id, nil, nil)
	if status != http.StatusNoContent || rec != nil {
		t.Fatalf("delete %s: %d %v", id, status, rec)
	}
}

// whList lists the endpoints and returns their records.
func whList(t *testing.T, s *system) []map[string]any {
	t.Helper()
	status, rec, _ := s.call(t, "GET", "/v1/webhooks", nil, nil)
	if status != http.StatusOK {
		t.Fatalf("list: %d %v", status, rec)
	}
	items, ok := rec["items"].([]any)
	if !ok || len(rec) != 1 {
		t.Fatalf("list envelope %v, want {\"items\": [...]}", rec)
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		out = append(out, it.(map[string]any))
	}
	return out
}

// whIDs are the ids of records, in order.
func whIDs(recs []map[string]any) []string {
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, r["id"].(string))
	}
	return ids
}

// whListUntil polls the list (the API reads it from its cache) until its
// ids are want, in order.
func whListUntil(t *testing.T, s *system, want ...string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	waitFor(t, 10*time.Second, "the webhook list "+strings.Join(want, ", "), func() (bool, error) {
		recs = whList(t, s)
		return slices.Equal(whIDs(recs), want), nil
	})
	return recs
}

// whEndpoint reads the endpoint of namespace with uid from the API server,
// or nil.
func whEndpoint(t *testing.T, namespace, uid string) *v1alpha1.WebhookEndpoint {
	t.Helper()
	list := &v1alpha1.WebhookEndpointList{}
	if err := k8sClient.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if string(list.Items[i].UID) == uid {
			return &list.Items[i]
		}
	}
	return nil
}

// whSecrets are the signing-secret Secrets of tenant.
func whSecrets(t *testing.T, tenant string) []corev1.Secret {
	t.Helper()
	list := &corev1.SecretList{}
	if err := k8sClient.List(context.Background(), list, client.InNamespace(operatorNamespace), client.MatchingLabels{v1alpha1.TenantLabel: tenant}); err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(s corev1.Secret) bool { return s.Type != v1alpha1.WebhookSecretType })
}

// whErr checks an error envelope's status and code.
func whErr(t *testing.T, what string, status int, body map[string]any, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("%s: status %d, want %d: %v", what, status, wantStatus, body)
	}
	if code := errorCode(t, body); code != wantCode {
		t.Errorf("%s: code %q, want %q", what, code, wantCode)
	}
}

// whOnlyDetail returns the one entry of a 422 answer.
func whOnlyDetail(t *testing.T, status int, body map[string]any) map[string]any {
	t.Helper()
	if status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422: %v", status, body)
	}
	detail, _ := body["detail"].([]any)
	if len(detail) != 1 {
		t.Fatalf("detail %v, want one entry", body["detail"])
	}
	return detail[0].(map[string]any)
}

func TestWebhooks(t *testing.T) {
	s := startSystem(t, "inprocess")
	ctx := context.Background()

	var first map[string]any
	t.Run("create stores the endpoint and its signing secret", func(t *testing.T) {
		const url = "https://93.184.216.34/hook"
		first = whCreate(t, s, url)
		id, _ := first["id"].(string)
		if !whUUID.MatchString(id) {
			t.Errorf("id %q is not a UUID", first["id"])
		}
		secret, _ := first["secret"].(string)
		if !whSecret.MatchString(secret) {
			t.Errorf("secret %q is not whsec_svc_ and 64 hex digits", first["secret"])
		}
		if first["url"] != url || first["last_status"] != nil || first["failure_count"] != 0.0 || first["disabled"] != false {
			t.Errorf("record %v", first)
		}
		created, err := time.Parse(time.RFC3339, first["created_at"].(string))
		if err != nil || time.Since(created) > time.Minute || time.Until(created) > 5*time.Second {
			t.Errorf("created_at %v (%v)", first["created_at"], err)
		}

		ep := whEndpoint(t, s.namespace, id)
		if ep == nil {
			t.Fatalf("no WebhookEndpoint with uid %s in %s", id, s.namespace)
		}
		if ep.Name != v1alpha1.WebhookEndpointName(1) {
			t.Errorf("the first endpoint is named %q, want slot 1", ep.Name)
		}
		if !slices.Equal(ep.Finalizers, []string{v1alpha1.SigningSecretFinalizer}) {
			t.Errorf("finalizers %v", ep.Finalizers)
		}
		if ep.Labels[v1alpha1.TenantLabel] != s.tenantID() {
			t.Errorf("labels %v", ep.Labels)
		}
		if ep.Spec.URL != url || !whSecretName.MatchString(ep.Spec.SecretName) {
			t.Errorf("spec %+v", ep.Spec)
		}
		sec := &corev1.Secret{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: ep.Spec.SecretName}, sec); err != nil {
			t.Fatalf("the signing Secret: %v", err)
		}
		if sec.Type != v1alpha1.WebhookSecretType {
			t.Errorf("Secret type %q", sec.Type)
		}
		if sec.Labels[v1alpha1.TenantLabel] != s.tenantID() || sec.Labels[v1alpha1.WebhookEndpointUIDLabel] != id {
			t.Errorf("Secret labels %v", sec.Labels)
		}
		if string(sec.Data[v1alpha1.WebhookSecretKey]) != secret {
			t.Error("the Secret does not hold the secret the answer showed")
		}
	})
	if first == nil {
		t.FailNow()
	}
	firstID := first["id"].(string)

	t.Run("the list shows records without the secret", func(t *testing.T) {
		recs := whListUntil(t, s, firstID)
		keys := make([]string, 0)
		for k := range recs[0] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, whRecordKeys) {
			t.Errorf("record keys %v, want %v", keys, whRecordKeys)
		}
		for _, k := range whRecordKeys {
			if k != "last_status" && !reflectEqualJSON(recs[0][k], first[k]) {
				t.Errorf("%s: listed %v, created %v", k, recs[0][k], first[k])
			}
		}
		if recs[0]["last_status"] != nil {
			t.Errorf("last_status %v before any attempt", recs[0]["last_status"])
		}
		raw, _ := json.Marshal(recs)
		if strings.Contains(string(raw), first["secret"].(string)) || strings.Contains(string(raw), webhook.SecretPrefix) {
			t.Errorf("the list shows the secret: %s", raw)
		}
	})

	t.Run("the list is oldest first, not in slot order", func(t *testing.T) {
		second := whCreate(t, s, "https://93.184.216.34/second")
		third := whCreate(t, s, "https://[2606:4700::1111]/third")
		whListUntil(t, s, firstID, second["id"].(string), third["id"].(string))
		whDelete(t, s, second["id"].(string))
		// A later second, so creation times differ.
		time.Sleep(1100 * time.Millisecond)
		fourth := whCreate(t, s, "https://93.184.216.34/fourth")
		if ep := whEndpoint(t, s.namespace, fourth["id"].(string)); ep == nil || ep.Name != v1alpha1.WebhookEndpointName(2) {
			t.Fatalf("the newest endpoint should reuse the freed slot 2: %+v", ep)
		}
		recs := whListUntil(t, s, firstID, third["id"].(string), fourth["id"].(string))
		if recs[2]["url"] != "https://93.184.216.34/fourth" {
			t.Errorf("last record %v", recs[2])
		}
		whDelete(t, s, third["id"].(string))
		whDelete(t, s, fourth["id"].(string))
		whListUntil(t, s, firstID)
	})

	t.Run("registration refuses private and plain-http targets", func(t *testing.T) {
		for url, why := range map[string]string{
			"http://127.0.0.1/x":             "https",
			"https://169.254.169.254/latest": "public",
			"https://[::1]/x":                "public",
			"https://10.0.0.1/x":             "public",
			"https://2130706433/x":           "non-standard",
			"https://user:pw@93.184.216.34/": "user",
		} {
			status, body, _ := s.call(t, "POST", "/v1/webhooks", map[string]any{"url": url}, nil)
			d := whOnlyDetail(t, status, body)
			loc, _ := json.Marshal(d["loc"])
			ctxJSON, _ := json.Marshal(d["ctx"])
			msg, _ := d["msg"].(string)
			if string(loc) != `["body","url"]` || d["type"] != "value_error" || d["input"] != url || string(ctxJSON) != `{"error":{}}` {
				t.Errorf("%s: detail %v", url, d)
			}
			if !strings.HasPrefix(msg, "Value error, ") || !strings.Contains(msg, why) {
				t.Errorf("%s: msg %q does not say %q", url, msg, why)
			}
		}
	})

	t.Run("a bad body is a 422 that registers nothing", func(t *testing.T) {
		for _, tc := range []struct {
			why, body, loc, typ string
		}{
			{"no url", `{}`, `["body","url"]`, "missing"},
			{"an unknown field", `{"url":"https://93.184.216.34/x","events":["optimization.completed"]}`, `["body","events"]`, "extra_forbidden"},
			{"url not a string", `{"url":42}`, `["body","url"]`, "string_type"},
			{"url longer than 500 characters", `{"url":"https://93.184.216.34/` + strings.Repeat("a", 500) + `"}`, `["body","url"]`, "string_too_long"},
			{"not JSON", `{"url": }`, `["body",8]`, "json_invalid"},
			{"no body", ``, `["body"]`, "missing"},
		} {
			status, body, _ := s.callInvalid(t, tc.why, "POST", "/v1/webhooks", tc.body, nil)
			d := whOnlyDetail(t, status, body)
			if loc, _ := json.Marshal(d["loc"]); string(loc) != tc.loc || d["type"] != tc.typ {
				t.Errorf("%s: detail %v, want %s at %s", tc.why, d, tc.typ, tc.loc)
			}
		}
		whListUntil(t, s, firstID)
		if n := len(whSecrets(t, s.tenantID())); n != 1 {
			t.Errorf("%d signing Secrets, want 1", n)
		}
	})

	t.Run("delete of a malformed id is a 422 at the path", func(t *testing.T) {
		status, body, _ := s.callInvalid(t, "not a UUID", "DELETE", "/v1/webhooks/webhook-1", nil, nil)
		d := whOnlyDetail(t, status, body)
		if loc, _ := json.Marshal(d["loc"]); string(loc) != `["path","webhook_id"]` || d["type"] != "uuid_parsing" || d["input"] != "webhook-1" {
			t.Errorf("detail %v", d)
		}
		status, body, _ = s.call(t, "DELETE", "/v1/webhooks/"+cfUnknownID, nil, nil)
		whErr(t, "unknown id", status, body, http.StatusNotFound, webserver.CodeNotFound)
	})

	t.Run("scopes and keys", func(t *testing.T) {
		noKey, badKey := *s, *s
		noKey.apiKey = ""
		badKey.apiKey = "svc_sk_thisKeyDoesNotExist0123456789abcdef"
		readOpt, readHooks := *s.withKey(t, apikey.ScopeOptimizationsRead), *s.withKey(t, apikey.ScopeWebhooksRead)
		body := map[string]any{"url": "https://93.184.216.34/never"}
		tests := []struct {
			name       string
			sys        *system
			method     string
			path       string
			body       any
			wantStatus int
			wantCode   string
		}{
			{"list without a key", &noKey, "GET", "/v1/webhooks", nil, 401, webserver.CodeUnauthorized},
			{"create without a key", &noKey, "POST", "/v1/webhooks", body, 401, webserver.CodeUnauthorized},
			{"delete without a key", &noKey, "DELETE", "/v1/webhooks/" + firstID, nil, 401, webserver.CodeUnauthorized},
			{"list with a wrong key", &badKey, "GET", "/v1/webhooks", nil, 401, webserver.CodeUnauthorized},
			{"create with a wrong key", &badKey, "POST", "/v1/webhooks", body, 401, webserver.CodeUnauthorized},
			{"delete with a wrong key", &badKey, "DELETE", "/v1/webhooks/" + firstID, nil, 401, webserver.CodeUnauthorized},
			{"unknown /v1 route without a key", &noKey, "GET", "/v1/nothing-here", nil, 401, webserver.CodeUnauthorized},
			{"unknown /v1 route with a wrong key", &badKey, "POST", "/v1/webhooks/" + firstID + "/test", nil, 401, webserver.CodeUnauthorized},
			{"bare /v1 with a wrong key", &badKey, "GET", "/v1", nil, 401, webserver.CodeUnauthorized},
			{"unknown /v1 route with a valid key", s, "GET", "/v1/nothing-here", nil, 404, webserver.CodeNotFound},
			{"unknown route outside /v1 needs no key", &noKey, "GET", "/nothing-here", nil, 404, webserver.CodeNotFound},
			{"list needs webhooks:read", &readOpt, "GET", "/v1/webhooks", nil, 403, webserver.CodeInsufficientScope},
			{"create needs webhooks:write", &readOpt, "POST", "/v1/webhooks", body, 403, webserver.CodeInsufficientScope},
			{"delete needs webhooks:write", &readOpt, "DELETE", "/v1/webhooks/" + firstID, nil, 403, webserver.CodeInsufficientScope},
			{"webhooks:read cannot create", &readHooks, "POST", "/v1/webhooks", body, 403, webserver.CodeInsufficientScope},
			{"webhooks:read cannot delete", &readHooks, "DELETE", "/v1/webhooks/" + firstID, nil, 403, webserver.CodeInsufficientScope},
			{"webhooks:read lists", &readHooks, "GET", "/v1/webhooks", nil, 200, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, rec, hdr := tc.sys.call(t, tc.method, tc.path, tc.body, nil)
				if tc.wantCode == "" {
					if status != tc.wantStatus {
						t.Fatalf("status %d, want %d: %v", status, tc.wantStatus, rec)
					}
					return
				}
				whErr(t, tc.name, status, rec, tc.wantStatus, tc.wantCode)
				switch status {
				case http.StatusUnauthorized:
					if hdr.Get("WWW-Authenticate") != "Bearer" {
						t.Error("401 without WWW-Authenticate: Bearer")
					}
				case http.StatusForbidden:
					want := apikey.ScopeWebhooksWrite
					if tc.method == "GET" {
						want = apikey.ScopeWebhooksRead
					}
					if got := rec["error"].(map[string]any)["fields"].(map[string]any)["required_scope"]; got != want {
						t.Errorf("required_scope %v, want %s", got, want)
					}
				}
			})
		}
		whListUntil(t, s, firstID)
	})

	t.Run("another company neither sees nor deletes the endpoint", func(t *testing.T) {
		other := startSystem(t, "inprocess")
		if recs := whList(t, other); len(recs) != 0 {
			t.Errorf("another company's list: %v", recs)
		}
		status, body, _ := other.call(t, "DELETE", "/v1/webhooks/"+firstID, nil, nil)
		whErr(t, "another company's delete", status, body, http.StatusNotFound, webserver.CodeNotFound)
		if whEndpoint(t, s.namespace, firstID) == nil {
			t.Fatal("another company's delete removed the endpoint")
		}
		if n := len(whSecrets(t, s.tenantID())); n != 1 {
			t.Errorf("%d signing Secrets left, want 1", n)
		}
		whListUntil(t, s, firstID)
	})

	t.Run("delete removes the endpoint and its signing secret", func(t *testing.T) {
		ep := whEndpoint(t, s.namespace, firstID)
		if ep == nil {
			t.Fatal("the endpoint is gone already")
		}
		whDelete(t, s, firstID)
		if got := whEndpoint(t, s.namespace, firstID); got != nil {
			t.Errorf("the endpoint is still there: %+v", got.ObjectMeta)
		}
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: ep.Spec.SecretName}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("the signing Secret: %v, want not found", err)
		}
		status, body, _ := s.call(t, "DELETE", "/v1/webhooks/"+firstID, nil, nil)
		whErr(t, "second delete", status, body, http.StatusNotFound, webserver.CodeNotFound)
		whListUntil(t, s)
	})

	t.Run("delete leaves a Secret that belongs to another endpoint", func(t *testing.T) {
		rec := whCreate(t, s, "https://93.184.216.34/shared")
		id := rec["id"].(string)
		ep := whEndpoint(t, s.namespace, id)
		// Point the endpoint at a Secret labelled for another endpoint.
		foreign := &corev1.Secret{}
		foreign.Namespace, foreign.Name = operatorNamespace, "whsec-foreign-"+randomHex(4)
		foreign.Type = v1alpha1.WebhookSecretType
		foreign.Labels = map[string]string{v1alpha1.TenantLabel: s.tenantID(), v1alpha1.WebhookEndpointUIDLabel: cfUnknownID}
		if err := k8sClient.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), foreign) })
		own := ep.Spec.SecretName
		patch := client.MergeFrom(ep.DeepCopy())
		ep.Spec.SecretName = foreign.Name
		if err := k8sClient.Patch(ctx, ep, patch); err != nil {
			t.Fatal(err)
		}
		_ = k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: own}})
		whDelete(t, s, id)
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.Secret{}); err != nil {
			t.Errorf("the other endpoint's Secret: %v", err)
		}
		if whEndpoint(t, s.namespace, id) != nil {
			t.Error("the endpoint is still there")
		}
	})
}

// reflectEqualJSON compares two decoded JSON values.
func reflectEqualJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// whResult is one answer of callAtOnce.
type whResult struct {
	status int
	body   map[string]any
}

// callAtOnce sends n copies of one request at the same moment. Each request
// and answer is checked against the OpenAPI document as system.call does;
// the HTTP exchanges run on their own goroutines, the checks on the test's.
func (s *system) callAtOnce(t *testing.T, n int, method, path string, body any) []whResult {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	newRequest := func() *http.Request {
		req, err := http.NewRequest(method, s.url+path, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	checks := make([]*requestCheck, n)
	reqs := make([]*http.Request, n)
	for i := range n {
		checks[i] = checkRequest(t, s, newRequest(), "")
		reqs[i] = newRequest()
	}
	type exchange struct {
		status int
		header http.Header
		body   []byte
		err    error
	}
	out := make([]exchange, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			resp, err := http.DefaultClient.Do(reqs[i])
			if err != nil {
				out[i].err = err
				return
			}
			defer func() { _ = resp.Body.Close() }()
			out[i].status, out[i].header = resp.StatusCode, resp.Header
			out[i].body, out[i].err = io.ReadAll(resp.Body)
		})
	}
	close(start)
	wg.Wait()
	results := make([]whResult, n)
	for i, x := range out {
		if x.err != nil {
			t.Fatalf("request %d: %v", i, x.err)
		}
		checks[i].response(t, x.status, x.header, x.body)
		results[i].status = x.status
		if err := json.Unmarshal(x.body, &results[i].body); err != nil {
			t.Fatalf("request %d: %d %s: %v", i, x.status, x.body, err)
		}
	}
	return results
}

// Five endpoints per company, however many registrations race; a
// development policy lets the company register a loopback receiver.
func TestWebhookLimit(t *testing.T) {
	const receiver = "127.0.0.1:18099"
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess"}, func(o *webserver.Options) {
		p, err := webhook.NewPolicy([]string{receiver}, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.WebhookPolicy = p
	})

	t.Run("the allowed target only", func(t *testing.T) {
		status, body, _ := s.call(t, "POST", "/v1/webhooks", map[string]any{"url": "http://127.0.0.1:18098/events"}, nil)
		d := whOnlyDetail(t, status, body)
		if d["type"] != "value_error" || !strings.Contains(d["msg"].(string), "https") {
			t.Errorf("a neighbour of the allowed target: %v", d)
		}
	})

	results := s.callAtOnce(t, 10, "POST", "/v1/webhooks", map[string]any{"url": "http://" + receiver + "/events"})
	var created []string
	limited := 0
	for _, r := range results {
		switch r.status {
		case http.StatusCreated:
			created = append(created, r.body["id"].(string))
		case http.StatusConflict:
			whErr(t, "a racing create", r.status, r.body, http.StatusConflict, webserver.CodeWebhookLimitReached)
			limited++
		default:
			t.Errorf("a racing create answered %d %v", r.status, r.body)
		}
	}
	if len(created) != v1alpha1.MaxWebhookEndpoints || limited != 10-v1alpha1.MaxWebhookEndpoints {
		t.Fatalf("ten racing creates: %d created, %d refused; want 5 and 5", len(created), limited)
	}
	list := &v1alpha1.WebhookEndpointList{}
	if err := k8sClient.List(context.Background(), list, client.InNamespace(s.namespace)); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, ep := range list.Items {
		names = append(names, ep.Name)
	}
	slices.Sort(names)
	if want := []string{"webhook-1", "webhook-2", "webhook-3", "webhook-4", "webhook-5"}; !slices.Equal(names, want) {
		t.Errorf("endpoints %v, want %v", names, want)
	}
	if n := len(whSecrets(t, s.tenantID())); n != v1alpha1.MaxWebhookEndpoints {
		t.Errorf("%d signing Secrets, want one per endpoint", n)
	}

	status, body, _ := s.call(t, "POST", "/v1/webhooks", map[string]any{"url": "http://" + receiver + "/sixth"}, nil)
	whErr(t, "a sixth create", status, body, http.StatusConflict, webserver.CodeWebhookLimitReached)
	if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "5") {
		t.Errorf("the message does not say the limit: %q", msg)
	}
	waitFor(t, 10*time.Second, "five listed endpoints", func() (bool, error) {
		return len(whList(t, s)) == v1alpha1.MaxWebhookEndpoints, nil
	})

	whDelete(t, s, created[2])
	again := whCreate(t, s, "http://"+receiver+"/again")
	if again["url"] != "http://"+receiver+"/again" {
		t.Errorf("record %v", again)
	}
	status, body, _ = s.call(t, "POST", "/v1/webhooks", map[string]any{"url": "http://" + receiver + "/seventh"}, nil)
	whErr(t, "a create over the limit again", status, body, http.StatusConflict, webserver.CodeWebhookLimitReached)
}
