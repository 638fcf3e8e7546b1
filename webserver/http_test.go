package webserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"net/http/httptest"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/apikey"
)

// A log line of a failed request names its request id once: the request's
// logger carries it, and abortInternal must not add it again.
func TestRequestIDLoggedOnce(t *testing.T) {
	c := fakeClientBuilder(t).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*v1alpha1.WebhookEndpointList); ok {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "webhookendpoints"}, "", errors.New("RBAC"))
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	key, _, err := apikey.Create(context.Background(), c, apikey.Spec{Namespace: "routeopt-system", Tenant: "acme", Scopes: apikey.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{})
	ts := httptest.NewServer(New(c, c, c, log, Options{OperatorNamespace: "routeopt-system"}).Handler())
	defer ts.Close()

	req, err := http.NewRequest(http.MethodGet, ts.URL+"/v1/webhooks", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Request-ID", "rid-logged-once")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, l := range lines {
		if !strings.Contains(l, "Request failed") {
			continue
		}
		found = true
		if n := strings.Count(l, `"requestID"`); n != 1 || !strings.Contains(l, `"rid-logged-once"`) {
			t.Errorf("requestID %d times in %s", n, l)
		}
	}
	if !found {
		t.Fatalf("no Request failed line in %q", lines)
	}
}

// fakeClientBuilder is a fake client builder that knows the API's objects.
func fakeClientBuilder(tb testing.TB) *fake.ClientBuilder {
	tb.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme)
}

// A body that breaks its chunked framing while the handler reads it is the
// client's fault: 400 bad_request in the envelope, with the request id.
func TestBodyThatBreaksItsFraming(t *testing.T) {
	c := fakeClientBuilder(t).Build()
	key, _, err := apikey.Create(context.Background(), c, apikey.Spec{Namespace: "routeopt-system", Tenant: "acme", Scopes: apikey.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(New(c, c, c, logr.Discard(), Options{OperatorNamespace: "routeopt-system"}).Handler())
	defer ts.Close()

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	// "zz" is no chunk size.
	req := "POST /v1/webhooks HTTP/1.1\r\nHost: routeopt.test\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nX-Request-ID: rid-framing\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var body errorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("status %d, body not the envelope: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusBadRequest || body.Error.Code != CodeBadRequest || resp.Header.Get("X-Request-ID") != "rid-framing" {
		t.Errorf("status %d, code %q, X-Request-ID %q; want 400 %s rid-framing", resp.StatusCode, body.Error.Code, resp.Header.Get("X-Request-ID"), CodeBadRequest)
	}
}
