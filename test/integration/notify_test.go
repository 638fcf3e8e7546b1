package integration

import (
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/test/requests"

	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	stripewebhook "github.com/stripe/stripe-go/v85/webhook"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers/notify"
	"routeopt.io/routeopt/controllers/notify/delivery"
)

// notifyPublicURL is the base of the links in the tests' events.
const notifyPublicURL = "https://routes.example.test"

// hook is one request a receiver got.
type hook struct {
	at     time.Time
	method string
	header http.Header
	body   []byte
}

// event decodes h's body.
func (h hook) event(t testing.TB) map[string]any {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(h.body, &ev); err != nil {
		t.Fatalf("event body %q: %v", h.body, err)
	}
	return ev
}

// receiver is an HTTPS webhook receiver on 127.0.0.1 (httptest's TLS
// server) that records every request and answers as answer says (200 when
// nil); n counts requests from 1.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hooks  []hook
	first  map[string]time.Time // optimization id -> first arrival of its event
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t testing.TB, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{answer: answer, first: map[string]time.Time{}}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Data struct {
				OptimizationID string `json:"optimization_id"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &ev)
		now := time.Now()
		rc.mu.Lock()
		rc.hooks = append(rc.hooks, hook{at: now, method: r.Method, header: r.Header.Clone(), body: body})
		if _, ok := rc.first[ev.Data.OptimizationID]; !ok {
			rc.first[ev.Data.OptimizationID] = now
		}
		n := len(rc.hooks)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// target is the receiver's HOST:PORT, for --webhook-allow-target.
func (rc *receiver) target() string { return strings.TrimPrefix(rc.URL, "https://") }

// firstArrivals tells when the event of each optimization first arrived.
func (rc *receiver) firstArrivals() map[string]time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.first)
}

func (rc *receiver) got() []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hook(nil), rc.hooks...)
}

// waitHooks waits until the receiver got at least n requests.
func (rc *receiver) waitHooks(t testing.TB, n int, timeout time.Duration) []hook {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if got := rc.got(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got %d requests in %s, want %d", len(rc.got()), timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// answerSequence answers the i-th request with codes[i-1] and every later
// one with the last code.
func answerSequence(codes ...int) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(codes[min(n, len(codes))-1])
	}
}

// blackHole accepts connections and never answers, not even the TLS
// handshake.
func blackHole(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// webhookPolicy allows the receivers (private addresses otherwise refused)
// and trusts their certificates, as a production policy trusts public CAs.
func webhookPolicy(t testing.TB, receivers []*receiver, extraTargets ...string) *webhook.Policy {
	t.Helper()
	pool := x509.NewCertPool()
	targets := append([]string(nil), extraTargets...)
	for _, rc := range receivers {
		pool.AddCert(rc.Certificate())
		targets = append(targets, rc.target())
	}
	policy, err := webhook.NewPolicy(targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	policy.RootCAs = pool
	return policy
}

// startNotifySystem starts a tenant whose manager delivers to receivers.
func startNotifySystem(t *testing.T, runner string, receivers ...*receiver) *system {
	t.Helper()
	return startSystemWith(t, app.RunnerOptions{Kind: runner, PublicURL: notifyPublicURL, WebhookPolicy: webhookPolicy(t, receivers)}, nil)
}

// registerEndpoint stores an endpoint in slot of namespace as the REST API
// does: the endpoint (with the signing-secret finalizer), then its Secret
// in the operator's namespace, labelled with the endpoint's uid. It
// returns the endpoint and the signing secret. withSecret false leaves the
// Secret to the caller (writeSecret).
func registerEndpoint(t testing.TB, namespace string, slot int, url string, withSecret bool) (*v1alpha1.WebhookEndpoint, string) {
	t.Helper()
	ctx := context.Background()
	tenantID := strings.TrimPrefix(namespace, v1alpha1.TenantNamespacePrefix)
	ep := &v1alpha1.WebhookEndpoint{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: v1alpha1.WebhookEndpointName(slot),
			Labels:     map[string]string{v1alpha1.TenantLabel: tenantID},
			Finalizers: []string{v1alpha1.SigningSecretFinalizer},
		},
		Spec: v1alpha1.WebhookEndpointSpec{URL: url, SecretName: "webhook-" + tenantID + "-" + strconv.Itoa(slot)},
	}
	if err := k8sClient.Create(ctx, ep); err != nil {
		t.Fatal(err)
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The manager may be gone: release the endpoint by hand.
		cur := &v1alpha1.WebhookEndpoint{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ep), cur); err == nil {
			controllerutil.RemoveFinalizer(cur, v1alpha1.SigningSecretFinalizer)
			_ = k8sClient.Update(ctx, cur)
			_ = k8sClient.Delete(ctx, cur)
		}
		_ = k8sClient.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: ep.Spec.SecretName}})
	})
	if withSecret {
		writeSecret(t, ep, secret, string(ep.UID))
	}
	return ep, secret
}

// writeSecret stores ep's signing secret, labelled with uid.
func writeSecret(t testing.TB, ep *v1alpha1.WebhookEndpoint, secret, uid string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: ep.Spec.SecretName, Labels: map[string]string{
			v1alpha1.TenantLabel:             ep.Labels[v1alpha1.TenantLabel],
			v1alpha1.WebhookEndpointUIDLabel: uid,
		}},
		Type: v1alpha1.WebhookSecretType,
		Data: map[string][]byte{v1alpha1.WebhookSecretKey: []byte(secret)},
	}
	if err := k8sClient.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// smallSpec is a valid one-order problem.
func smallSpec() v1alpha1.OptimizationSpec {
	return v1alpha1.OptimizationSpec{
		Depot:  v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
		Orders: []v1alpha1.Order{{ID: "o-1", Latitude: ptr.To(52.53), Longitude: ptr.To(13.38)}},
		Fleet:  &v1alpha1.Fleet{Count: 1, Capacity: 10},
	}
}

// createCancelled creates an optimization directly (as kubectl would)
// that asks to be cancelled: the controller moves it to cancelled at once.
func createCancelled(t testing.TB, namespace string) *v1alpha1.Optimization {
	t.Helper()
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: uuid.NewString()}, Spec: smallSpec()}
	opt.Spec.Cancel = true
	if err := k8sClient.Create(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	return opt
}

// getOpt reads opt's current state from the API server.
func getOpt(t testing.TB, opt *v1alpha1.Optimization) *v1alpha1.Optimization {
	t.Helper()
	cur := &v1alpha1.Optimization{}
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(opt), cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

// waitRecord waits for opt's delivery record for ep.
func waitRecord(t testing.TB, opt *v1alpha1.Optimization, ep *v1alpha1.WebhookEndpoint, timeout time.Duration) v1alpha1.WebhookDelivery {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		cur := getOpt(t, opt)
		for _, r := range cur.Status.Webhooks {
			if r.Endpoint == string(ep.UID) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivery record of %s for endpoint %s after %s: %+v", opt.Name, ep.Name, timeout, cur.Status.Webhooks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// getEndpoint reads ep's current state.
func getEndpoint(t testing.TB, ep *v1alpha1.WebhookEndpoint) *v1alpha1.WebhookEndpoint {
	t.Helper()
	cur := &v1alpha1.WebhookEndpoint{}
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(ep), cur); err != nil {
		t.Fatal(err)
	}
	return cur
}

// waitEndpointStatus waits until ep's status satisfies ok (the notifier
// writes it right after the delivery record).
func waitEndpointStatus(t testing.TB, ep *v1alpha1.WebhookEndpoint, ok func(v1alpha1.WebhookEndpointStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := getEndpoint(t, ep).Status
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("endpoint %s status %+v (lastStatus %v)", ep.Name, st, ptr.Deref(st.LastStatus, 0))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkSignature verifies h's Service-Signature by hand, as docs/API.md
// tells receivers to: HMAC-SHA256 keyed with the secret over "<t>.<raw body>",
// compared in constant time, t within 300 s of now.
func checkSignature(t testing.TB, h hook, secret string) {
	t.Helper()
	header := h.header.Get(webhook.SignatureHeader)
	var ts, v1 string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || v1 == "" {
		t.Fatalf("Service-Signature %q is not t=<unix>,v1=<hex>", header)
	}
	if d := time.Since(time.Unix(sec, 0)); d > 300*time.Second || d < -300*time.Second {
		t.Errorf("signature timestamp %s is %s from now", ts, d)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(h.body)
	want := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(v1), []byte(want)) || v1 != strings.ToLower(v1) {
		t.Errorf("v1 %s, want the lowercase hex HMAC %s", v1, want)
	}
}

// wantEvent is the payload docs/API.md describes for opt's current state.
func wantEvent(opt *v1alpha1.Optimization) map[string]any {
	self := notifyPublicURL + "/v1/optimizations/" + opt.Name
	data := map[string]any{
		"optimization_id": opt.Name,
		"status":          string(opt.Status.State),
		"error_code":      nil,
		"error_message":   nil,
		"links":           map[string]any{"self": self, "result": self + "/result"},
	}
	if opt.Status.State == v1alpha1.StateFailed {
		data["error_code"], data["error_message"] = opt.Status.ErrorCode, opt.Status.ErrorMessage
	}
	return map[string]any{
		"id":      notify.EventID(string(opt.UID), string(opt.Status.State)),
		"type":    "optimization." + string(opt.Status.State),
		"created": opt.Status.FinishedAt.UTC().Format(time.RFC3339),
		"data":    data,
	}
}

// A completed optimization's event reaches the endpoint on the first
// attempt, exactly as docs/API.md shows it, signed so that both a hand-written
// check and Stripe's verifier (the same t=,v1= scheme) accept it; the
// delivery is recorded on the optimization and the endpoint.
func TestNotifyCompletedEvent(t *testing.T) {
	good, lateSecret, late := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	s := startNotifySystem(t, "inprocess", good, lateSecret, late)
	ep, secret := registerEndpoint(t, s.namespace, 1, good.URL+"/hooks?src=routeopt", true)
	// The REST API may write the Secret a moment after the endpoint: the
	// event waits for it.
	ep2, secret2 := registerEndpoint(t, s.namespace, 2, lateSecret.URL, false)

	opt := createViaREST(t, s, "notify-completed-01", requests.TenOrders(1))
	waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
	hooks := good.waitHooks(t, 1, 10*time.Second)
	opt = getOpt(t, opt)

	h := hooks[0]
	if h.method != http.MethodPost || h.header.Get("Content-Type") != "application/json" || h.header.Get("User-Agent") != notify.UserAgent {
		t.Errorf("request %s with headers %v", h.method, h.header)
	}
	if diff := cmp.Diff(wantEvent(opt), h.event(t)); diff != "" {
		t.Errorf("payload (-want +got):\n%s\nraw: %s", diff, h.body)
	}
	if id := h.event(t)["id"].(string); !strings.HasPrefix(id, "evt_") {
		t.Errorf("event id %q", id)
	}
	checkSignature(t, h, secret)
	header := h.header.Get(webhook.SignatureHeader)
	if err := stripewebhook.ValidatePayloadWithTolerance(h.body, header, secret, 300*time.Second); err != nil {
		t.Errorf("Stripe's verifier refuses the delivery: %v", err)
	}
	if err := stripewebhook.ValidatePayloadWithTolerance(h.body, header, secret2, 300*time.Second); err == nil {
		t.Error("Stripe's verifier accepts the delivery with another endpoint's secret")
	}
	tampered := []byte(strings.Replace(string(h.body), "completed", "cancelled", 1))
	if err := stripewebhook.ValidatePayloadWithTolerance(tampered, header, secret, 300*time.Second); err == nil {
		t.Error("Stripe's verifier accepts a changed body")
	}
	stale := delivery.Sign(secret, time.Now().Add(-301*time.Second), h.body)
	if err := stripewebhook.ValidatePayloadWithTolerance(h.body, stale, secret, 300*time.Second); !errors.Is(err, stripewebhook.ErrTooOld) {
		t.Errorf("Stripe's verifier on a signature 301 s old: %v, want %v", err, stripewebhook.ErrTooOld)
	}

	rec := waitRecord(t, opt, ep, 5*time.Second)
	if rec.Result != v1alpha1.WebhookDelivered || rec.Attempts != 1 || rec.LastStatus == nil || *rec.LastStatus != 200 || rec.EventID != wantEvent(opt)["id"] {
		t.Errorf("record %+v", rec)
	}
	waitEndpointStatus(t, ep, func(st v1alpha1.WebhookEndpointStatus) bool {
		return st.LastStatus != nil && *st.LastStatus == 200 && st.FailureCount == 0 && !st.Disabled
	})

	// The Secret arrives late: the event waits for it and is signed with it.
	time.Sleep(time.Second)
	if n := len(lateSecret.got()); n != 0 {
		t.Fatalf("an endpoint without its Secret got %d requests", n)
	}
	writeSecret(t, ep2, secret2, string(ep2.UID))
	lateHooks := lateSecret.waitHooks(t, 1, 10*time.Second)
	checkSignature(t, lateHooks[0], secret2)
	if rec := waitRecord(t, opt, ep2, 5*time.Second); rec.Result != v1alpha1.WebhookDelivered {
		t.Errorf("late-secret record %+v", rec)
	}

	// An endpoint registered after the optimization finished gets nothing,
	// even when the optimization is reconciled again.
	time.Sleep(1100 * time.Millisecond) // timestamps have second precision
	ep3, _ := registerEndpoint(t, s.namespace, 3, late.URL, true)
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"annotations":{"test/touch":"1"}}}`))
	if err := k8sClient.Patch(context.Background(), opt.DeepCopy(), patch); err != nil {
		t.Fatal(err)
	}

	// Exactly once: nothing more arrives.
	time.Sleep(3 * time.Second)
	if n, n3 := len(good.got()), len(late.got()); n != 1 || n3 != 0 {
		t.Errorf("after 3 s: %d deliveries to the first endpoint (want 1), %d to one registered later (want 0)", n, n3)
	}
	for _, r := range getOpt(t, opt).Status.Webhooks {
		if r.Endpoint == string(ep3.UID) {
			t.Errorf("a record for the endpoint registered later: %+v", r)
		}
	}

	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		found[f.GetName()] = true
	}
	for _, name := range []string{"routeopt_webhook_deliveries_total", "routeopt_webhook_delivery_seconds"} {
		if !found[name] {
			t.Errorf("metric %s is not exported", name)
		}
	}
}

// Attempts: a receiver that fails twice gets the same event three times
// and the third counts; one that sleeps past 5 s has failed that attempt;
// a redirect is a failed attempt and is never followed.
func TestNotifyAttempts(t *testing.T) {
	flaky := newReceiver(t, answerSequence(500, 500, 200))
	slow := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			select {
			case <-time.After(6 * time.Second):
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	second := newReceiver(t, nil)
	redirecting := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, second.URL+"/elsewhere", http.StatusFound)
	})
	s := startNotifySystem(t, "inprocess", flaky, slow, redirecting, second)
	epFlaky, _ := registerEndpoint(t, s.namespace, 1, flaky.URL, true)
	epSlow, _ := registerEndpoint(t, s.namespace, 2, slow.URL, true)
	epRedirect, _ := registerEndpoint(t, s.namespace, 3, redirecting.URL, true)

	opt := createViaREST(t, s, "notify-attempts-01", requests.TenOrders(1))
	if status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+opt.Name+"/cancel", nil, nil); status != 200 {
		t.Fatalf("cancel: %d %v", status, rec)
	}
	waitForState(t, s, opt.Name, v1alpha1.StateCancelled)

	t.Run("500, 500, 200 is delivered on the third attempt with one event id", func(t *testing.T) {
		hooks := flaky.waitHooks(t, 3, 15*time.Second)
		ids := map[string]bool{}
		for _, h := range hooks {
			ids[h.event(t)["id"].(string)] = true
			if string(h.body) != string(hooks[0].body) {
				t.Errorf("attempts carry different bodies: %s and %s", hooks[0].body, h.body)
			}
		}
		if len(ids) != 1 {
			t.Errorf("event ids %v, want one", ids)
		}
		// about 0 s, 1 s, 3 s
		if d1, d2 := hooks[1].at.Sub(hooks[0].at), hooks[2].at.Sub(hooks[1].at); d1 < 900*time.Millisecond || d2 < 1900*time.Millisecond {
			t.Errorf("attempts %s and %s apart, want about 1 s and 2 s", d1, d2)
		}
		rec := waitRecord(t, opt, epFlaky, 5*time.Second)
		if rec.Result != v1alpha1.WebhookDelivered || rec.Attempts != 3 || rec.LastStatus == nil || *rec.LastStatus != 200 {
			t.Errorf("record %+v", rec)
		}
		// A delivered event is not a failure.
		waitEndpointStatus(t, epFlaky, func(st v1alpha1.WebhookEndpointStatus) bool {
			return st.FailureCount == 0 && st.LastStatus != nil && *st.LastStatus == 200
		})
	})

	t.Run("an answer after 5 s is a failed attempt", func(t *testing.T) {
		hooks := slow.waitHooks(t, 2, 20*time.Second)
		if d := hooks[1].at.Sub(hooks[0].at); d < 5900*time.Millisecond || d > 8*time.Second {
			t.Errorf("second attempt %s after the first, want 5 s timeout + 1 s", d)
		}
		rec := waitRecord(t, opt, epSlow, 5*time.Second)
		if rec.Result != v1alpha1.WebhookDelivered || rec.Attempts != 2 || rec.LastStatus == nil || *rec.LastStatus != 204 {
			t.Errorf("record %+v", rec)
		}
	})

	t.Run("a redirect is not followed and fails the delivery", func(t *testing.T) {
		rec := waitRecord(t, opt, epRedirect, 15*time.Second)
		if rec.Result != v1alpha1.WebhookFailed || rec.Attempts != 3 || rec.LastStatus == nil || *rec.LastStatus != 302 || rec.Message == "" {
			t.Errorf("record %+v", rec)
		}
		if n := len(redirecting.got()); n != 3 {
			t.Errorf("the redirecting receiver got %d requests, want 3", n)
		}
		if n := len(second.got()); n != 0 {
			t.Errorf("the redirect target got %d requests", n)
		}
		waitEndpointStatus(t, epRedirect, func(st v1alpha1.WebhookEndpointStatus) bool {
			return st.FailureCount == 1 && st.LastStatus != nil && *st.LastStatus == 302 && !st.Disabled
		})
	})
}

// Failed and cancelled optimizations send optimization.failed (with the
// error) and optimization.cancelled.
func TestNotifyFailedAndCancelled(t *testing.T) {
	rc := newReceiver(t, nil)
	s := startNotifySystem(t, "job", rc)
	_, secret := registerEndpoint(t, s.namespace, 1, rc.URL, true)

	failed := createViaREST(t, s, "notify-failed-0001", requests.TenOrders(1))
	setJobStatus(t, waitForJob(t, failed), false, batchv1.JobReasonDeadlineExceeded)
	waitForState(t, s, failed.Name, v1alpha1.StateFailed)
	cancelled := createViaREST(t, s, "notify-cancel-0001", requests.TenOrders(1))
	if status, rec, _ := s.call(t, "POST", "/v1/optimizations/"+cancelled.Name+"/cancel", nil, nil); status != 200 {
		t.Fatalf("cancel: %d %v", status, rec)
	}
	waitForState(t, s, cancelled.Name, v1alpha1.StateCancelled)

	hooks := rc.waitHooks(t, 2, 10*time.Second)
	byOpt := map[string]hook{}
	for _, h := range hooks {
		checkSignature(t, h, secret)
		byOpt[h.event(t)["data"].(map[string]any)["optimization_id"].(string)] = h
	}
	for _, o := range []*v1alpha1.Optimization{failed, cancelled} {
		o = getOpt(t, o)
		h, ok := byOpt[o.Name]
		if !ok {
			t.Errorf("no event for the %s optimization", o.Status.State)
			continue
		}
		if diff := cmp.Diff(wantEvent(o), h.event(t)); diff != "" {
			t.Errorf("%s event (-want +got):\n%s", o.Status.State, diff)
		}
	}
	ev := byOpt[failed.Name].event(t)
	if ev["type"] != webhook.EventFailed || ev["data"].(map[string]any)["error_code"] != v1alpha1.ErrorDeadlineExceeded ||
		ev["data"].(map[string]any)["error_message"] == nil {
		t.Errorf("failed event %v", ev)
	}
	if ev := byOpt[cancelled.Name].event(t); ev["type"] != webhook.EventCancelled {
		t.Errorf("cancelled event %v", ev)
	}
}

// Twenty failed events in a row disable an endpoint. Events queued for it
// when it was disabled are recorded as dropped, later ones are not owed to
// it at all, and it receives nothing more; another endpoint of the tenant
// is not affected.
func TestNotifyDisablesEndpoint(t *testing.T) {
	failing := newReceiver(t, answerSequence(503))
	healthy := newReceiver(t, nil)
	s := startNotifySystem(t, "inprocess", failing, healthy)
	epFailing, _ := registerEndpoint(t, s.namespace, 1, failing.URL, true)
	epHealthy, _ := registerEndpoint(t, s.namespace, 2, healthy.URL, true)

	const events = notify.MaxConsecutiveFailures + 2*notify.DefaultWorkersPerEndpoint
	var opts []*v1alpha1.Optimization
	for range events {
		opts = append(opts, createCancelled(t, s.namespace))
	}
	waitFor(t, 60*time.Second, "the failing endpoint to be disabled", func() (bool, error) {
		return getEndpoint(t, epFailing).Status.Disabled, nil
	})
	failed, dropped := 0, 0
	for _, o := range opts {
		switch rec := waitRecord(t, o, epFailing, 30*time.Second); {
		case rec.Result == v1alpha1.WebhookFailed && rec.Attempts == 3 && rec.LastStatus != nil && *rec.LastStatus == 503:
			failed++
		case rec.Result == v1alpha1.WebhookDropped && rec.Attempts == 0 && rec.LastStatus == nil:
			dropped++
		default:
			t.Errorf("%s: record %+v", o.Name, rec)
		}
		if rec := waitRecord(t, o, epHealthy, 10*time.Second); rec.Result != v1alpha1.WebhookDelivered {
			t.Errorf("%s: record for the healthy endpoint %+v", o.Name, rec)
		}
	}
	// Deliveries already in flight when the 20th failure disabled the
	// endpoint may fail too; none starts afterwards.
	if failed < notify.MaxConsecutiveFailures || failed > notify.MaxConsecutiveFailures+notify.DefaultWorkersPerEndpoint-1 || dropped == 0 {
		t.Errorf("%d failed and %d dropped events, want %d to %d failed and the rest dropped", failed, dropped,
			notify.MaxConsecutiveFailures, notify.MaxConsecutiveFailures+notify.DefaultWorkersPerEndpoint-1)
	}
	waitEndpointStatus(t, epFailing, func(st v1alpha1.WebhookEndpointStatus) bool {
		return st.FailureCount == int32(failed) && st.LastStatus != nil && *st.LastStatus == 503 && st.Disabled
	})
	if n := len(failing.got()); n != 3*failed {
		t.Errorf("the failing receiver got %d requests, want 3 per failed event (%d)", n, 3*failed)
	}

	// A later event is not owed to the disabled endpoint.
	after := createCancelled(t, s.namespace)
	if rec := waitRecord(t, after, epHealthy, 10*time.Second); rec.Result != v1alpha1.WebhookDelivered {
		t.Errorf("record for the healthy endpoint %+v", rec)
	}
	time.Sleep(time.Second)
	if n := len(failing.got()); n != 3*failed {
		t.Errorf("the disabled endpoint got %d requests after it was disabled", n-3*failed)
	}
	for _, r := range getOpt(t, after).Status.Webhooks {
		if r.Endpoint == string(epFailing.UID) {
			t.Errorf("an event after disabling has a record for the disabled endpoint: %+v", r)
		}
	}
	if n := len(healthy.got()); n != events+1 {
		t.Errorf("the healthy endpoint got %d events, want %d", n, events+1)
	}
}

// Deleting an endpoint (here as kubectl would) stops its deliveries, drops
// those still pending without a record, and deletes its signing secret
// through the finalizer; a Secret of another endpoint is left alone.
func TestNotifyEndpointDeleted(t *testing.T) {
	slowFailing := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(400 * time.Millisecond):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	other := newReceiver(t, nil)
	s := startNotifySystem(t, "inprocess", slowFailing, other)
	ep, _ := registerEndpoint(t, s.namespace, 1, slowFailing.URL, true)
	// An endpoint whose secretName points at a Secret made for another uid.
	foreign, foreignSecret := registerEndpoint(t, s.namespace, 2, other.URL, false)
	writeSecret(t, foreign, foreignSecret, "some-other-endpoint-uid")

	var opts []*v1alpha1.Optimization
	for range 12 {
		opts = append(opts, createCancelled(t, s.namespace))
	}
	slowFailing.waitHooks(t, 4, 20*time.Second)
	ctx := context.Background()
	for _, e := range []*v1alpha1.WebhookEndpoint{ep, foreign} {
		if err := k8sClient.Delete(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the endpoints to be gone", func() (bool, error) {
		for _, e := range []*v1alpha1.WebhookEndpoint{ep, foreign} {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(e), &v1alpha1.WebhookEndpoint{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
	gone := time.Now()
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: ep.Spec.SecretName}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the deleted endpoint's signing secret: %v, want it deleted", err)
	}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: foreign.Spec.SecretName}, &corev1.Secret{}); err != nil {
		t.Errorf("a Secret labelled with another endpoint's uid was touched: %v", err)
	}

	time.Sleep(4 * time.Second)
	for _, h := range slowFailing.got() {
		if h.at.After(gone) {
			t.Errorf("a delivery at %s, after the endpoint was gone at %s", h.at.Format(time.RFC3339Nano), gone.Format(time.RFC3339Nano))
		}
	}
	withoutRecord := 0
	for _, o := range opts {
		found := false
		for _, r := range getOpt(t, o).Status.Webhooks {
			if r.Endpoint == string(ep.UID) {
				found = true
				if r.Result == v1alpha1.WebhookDropped {
					t.Errorf("%s: a pending delivery to a deleted endpoint was recorded: %+v", o.Name, r)
				}
			}
		}
		if !found {
			withoutRecord++
		}
	}
	if withoutRecord == 0 {
		t.Error("every event was recorded: none was pending when the endpoint was deleted")
	}
	if n := len(other.got()); n != 0 {
		t.Errorf("the endpoint whose Secret belongs to another uid got %d requests", n)
	}
}

// startManagerFor starts a manager whose cache sees namespaces, as one
// production manager sees every tenant; it stops at the end of the test.
func startManagerFor(t testing.TB, ro app.RunnerOptions, namespaces ...string) {
	t.Helper()
	t.Cleanup(runManager(t, ro, namespaces...))
}

// One manager serves two companies: each endpoint gets only its own
// company's events.
func TestNotifyTenancy(t *testing.T) {
	rcA, rcB := newReceiver(t, nil), newReceiver(t, nil)
	ro := app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 2, PublicURL: notifyPublicURL, WebhookPolicy: webhookPolicy(t, []*receiver{rcA, rcB})}
	a := startSystemWith(t, ro, nil)
	b := startSystemWith(t, ro, nil)
	a.stopManager()
	b.stopManager()
	startManagerFor(t, ro, a.namespace, b.namespace)
	epA, secretA := registerEndpoint(t, a.namespace, 1, rcA.URL, true)
	epB, secretB := registerEndpoint(t, b.namespace, 1, rcB.URL, true)

	optA := createCancelled(t, a.namespace)
	optB := createCancelled(t, b.namespace)
	waitRecord(t, optA, epA, 10*time.Second)
	waitRecord(t, optB, epB, 10*time.Second)
	time.Sleep(2 * time.Second)
	for _, c := range []struct {
		rc     *receiver
		secret string
		opt    *v1alpha1.Optimization
		other  *v1alpha1.WebhookEndpoint
	}{{rcA, secretA, optA, epB}, {rcB, secretB, optB, epA}} {
		hooks := c.rc.got()
		if len(hooks) != 1 {
			t.Errorf("a receiver got %d events, want its company's one", len(hooks))
			continue
		}
		checkSignature(t, hooks[0], c.secret)
		if id := hooks[0].event(t)["data"].(map[string]any)["optimization_id"]; id != c.opt.Name {
			t.Errorf("a receiver got the event of %v, want %s", id, c.opt.Name)
		}
		for _, r := range getOpt(t, c.opt).Status.Webhooks {
			if r.Endpoint == string(c.other.UID) {
				t.Errorf("%s has a record for another company's endpoint: %+v", c.opt.Name, r)
			}
		}
	}
}

// An optimization that became terminal while no manager ran gets its event
// from the next manager, exactly once; one recorded before the stop is not
// sent again.
func TestNotifyAfterRestart(t *testing.T) {
	rc := newReceiver(t, nil)
	s := startNotifySystem(t, "inprocess", rc)
	ep, secret := registerEndpoint(t, s.namespace, 1, rc.URL, true)
	before := createCancelled(t, s.namespace)
	waitRecord(t, before, ep, 10*time.Second)

	s.stopManager()
	opt := createViaREST(t, s, "notify-restart-0001", requests.TenOrders(1))
	// Play the controller: the optimization completes while no manager runs.
	finished := metav1.Now()
	err := record.ApplyController(context.Background(), k8sClient, client.ObjectKeyFromObject(opt), "", record.ControllerStatus{
		State: v1alpha1.StateCompleted, FinishedAt: &finished,
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(rc.got()); n != 1 {
		t.Fatalf("%d events before the restart, want the first one", n)
	}
	s.startManager(t)
	rc.waitHooks(t, 2, 10*time.Second)
	time.Sleep(3 * time.Second) // a second delivery would show now
	hooks := rc.got()
	if len(hooks) != 2 {
		t.Fatalf("%d events after the restart, want 2 (one each)", len(hooks))
	}
	opt = getOpt(t, opt)
	if diff := cmp.Diff(wantEvent(opt), hooks[1].event(t)); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	checkSignature(t, hooks[1], secret)
	if rec := waitRecord(t, opt, ep, 5*time.Second); rec.Result != v1alpha1.WebhookDelivered || rec.Attempts != 1 {
		t.Errorf("record %+v", rec)
	}
}
