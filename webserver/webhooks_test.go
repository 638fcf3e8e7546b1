package webserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/apikey"
)

// webhookTestServer serves the API over a fake client whose signing-secret
// creates fail with secretErr (after storing the Secret when stored: a
// timeout the API server did not notice); endpoints get a uid as the API
// server gives them.
func webhookTestServer(t *testing.T, secretErr error, stored bool) (*httptest.Server, client.Client, string) {
	t.Helper()
	c := fakeClientBuilder(t).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch o := obj.(type) {
			case *v1alpha1.WebhookEndpoint:
				o.UID = types.UID(uuid.NewString())
			case *corev1.Secret:
				if o.Type == v1alpha1.WebhookSecretType && secretErr != nil {
					if stored {
						if err := c.Create(ctx, obj, opts...); err != nil {
							return err
						}
					}
					return secretErr
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	key, _, err := apikey.Create(context.Background(), c, apikey.Spec{Namespace: "routeopt-system", Tenant: "acme", Scopes: apikey.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(c, c, c, logr.Discard(), Options{OperatorNamespace: "routeopt-system"})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, c, key
}

func postWebhook(t *testing.T, ts *httptest.Server, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/v1/webhooks", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// A signing secret that cannot be stored leaves no endpoint behind: the
// finalizer comes off and the endpoint is deleted, and the slot is free.
func TestCreateWebhookUndoesTheEndpointWhenTheSecretFails(t *testing.T) {
	gr := schema.GroupResource{Resource: "secrets"}
	tests := []struct {
		name       string
		err        error
		stored     bool
		wantStatus int
		wantCode   string
	}{
		{"storage unavailable", apierrors.NewServiceUnavailable("etcd is down"), false, http.StatusServiceUnavailable, CodeUnavailable},
		{"a timeout", apierrors.NewTimeoutError("slow", 1), false, http.StatusServiceUnavailable, CodeUnavailable},
		{"a timeout after the Secret was stored", context.DeadlineExceeded, true, http.StatusServiceUnavailable, CodeUnavailable},
		{"no connection", errors.New("dial tcp: connection refused"), false, http.StatusServiceUnavailable, CodeUnavailable},
		{"operator namespace missing", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "routeopt-system"), false, http.StatusInternalServerError, CodeInternal},
		{"forbidden", apierrors.NewForbidden(gr, "whsec-x", errors.New("RBAC")), false, http.StatusInternalServerError, CodeInternal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, c, key := webhookTestServer(t, tc.err, tc.stored)
			status, body := postWebhook(t, ts, key, `{"url":"https://93.184.216.34/hook"}`)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %v", status, tc.wantStatus, body)
			}
			if code := body["error"].(map[string]any)["code"]; code != tc.wantCode {
				t.Errorf("code %v, want %s", code, tc.wantCode)
			}
			// The undo runs after the answer: wait for it.
			var left []string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				left = left[:0]
				list := &v1alpha1.WebhookEndpointList{}
				if err := c.List(context.Background(), list, client.InNamespace(v1alpha1.TenantNamespace("acme"))); err != nil {
					t.Fatal(err)
				}
				for _, ep := range list.Items {
					left = append(left, "endpoint "+ep.Name)
				}
				secrets := &corev1.SecretList{}
				if err := c.List(context.Background(), secrets, client.InNamespace("routeopt-system")); err != nil {
					t.Fatal(err)
				}
				for _, sec := range secrets.Items {
					if sec.Type == v1alpha1.WebhookSecretType {
						left = append(left, "signing Secret "+sec.Name)
					}
				}
				if len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestCreateWebhookStoresSlotsAndSecrets(t *testing.T) {
	ts, c, key := webhookTestServer(t, nil, false)
	ns := v1alpha1.TenantNamespace("acme")
	for slot := 1; slot <= v1alpha1.MaxWebhookEndpoints; slot++ {
		status, body := postWebhook(t, ts, key, `{"url":"https://93.184.216.34/hook"}`)
		if status != http.StatusCreated {
			t.Fatalf("create %d: %d %v", slot, status, body)
		}
		ep := &v1alpha1.WebhookEndpoint{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: v1alpha1.WebhookEndpointName(slot)}, ep); err != nil {
			t.Fatalf("slot %d: %v", slot, err)
		}
		if string(ep.UID) != body["id"] {
			t.Errorf("slot %d holds uid %s, the answer says %v", slot, ep.UID, body["id"])
		}
		sec := &corev1.Secret{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "routeopt-system", Name: ep.Spec.SecretName}, sec); err != nil {
			t.Fatalf("slot %d's secret: %v", slot, err)
		}
		if sec.Labels[v1alpha1.WebhookEndpointUIDLabel] != string(ep.UID) || sec.Labels[v1alpha1.TenantLabel] != "acme" || string(sec.Data[v1alpha1.WebhookSecretKey]) != body["secret"] {
			t.Errorf("slot %d's secret: %v %v", slot, sec.Labels, sec.Data)
		}
	}
	status, body := postWebhook(t, ts, key, `{"url":"https://93.184.216.34/hook"}`)
	if status != http.StatusConflict || body["error"].(map[string]any)["code"] != CodeWebhookLimitReached {
		t.Errorf("a sixth: %d %v", status, body)
	}
}

func TestWebhookRecord(t *testing.T) {
	created := metav1.Date(2026, 11, 22, 9, 30, 0, 500, metav1.Now().Location())
	for _, tc := range []struct {
		last *int32
		want string
	}{
		{nil, `null`},
		{ptr.To[int32](200), `200`},
		{ptr.To[int32](503), `503`},
		{ptr.To[int32](0), `null`}, // an attempt without an answer has no status
	} {
		ep := &v1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{UID: "c0ffee00-0000-4000-8000-000000000001", CreationTimestamp: created},
			Spec:       v1alpha1.WebhookEndpointSpec{URL: "https://93.184.216.34/hook", SecretName: "whsec-0123456789abcdef"},
			Status:     v1alpha1.WebhookEndpointStatus{LastStatus: tc.last, FailureCount: 3, Disabled: true},
		}
		raw, err := json.Marshal(webhookRecord(ep))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"id":"c0ffee00-0000-4000-8000-000000000001","url":"https://93.184.216.34/hook","created_at":"` +
			created.UTC().Format("2006-01-02T15:04:05Z") + `","last_status":` + tc.want + `,"failure_count":3,"disabled":true}`
		if string(raw) != want {
			t.Errorf("record\n got  %s\n want %s", raw, want)
		}
	}
}
