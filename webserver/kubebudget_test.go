package webserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/kubebudget"
)

// budgetTestServer serves the API over a fake client whose webhook
// endpoint lists take listDelay (or until the request's context ends) and
// whose probe reads hang when silent.
func budgetTestServer(t *testing.T, listDelay time.Duration, silent bool, opts Options) (*httptest.Server, string) {
	t.Helper()
	c := fakeClientBuilder(t).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == kubebudget.ProbeName && silent {
				<-ctx.Done()
				return ctx.Err()
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*v1alpha1.WebhookEndpointList); ok {
				select {
				case <-ctx.Done():
					return fmt.Errorf("list webhook endpoints: %w", ctx.Err())
				case <-time.After(listDelay):
				}
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	key, _, err := apikey.Create(context.Background(), c, apikey.Spec{Namespace: "routeopt-system", Tenant: "acme", Scopes: apikey.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	opts.OperatorNamespace = "routeopt-system"
	srv := New(c, c, c, logr.Discard(), opts)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv.ProbeKubernetes(ctx)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, key
}

func getWebhooks(ctx context.Context, t *testing.T, ts *httptest.Server, key string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/v1/webhooks", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	return http.DefaultClient.Do(req)
}

// A Kubernetes API that does not answer at all costs a request its budget
// and a 503; one that is slow but answers its probe gets the time it needs,
// up to the longer bound.
func TestKubeBudget(t *testing.T) {
	for _, tc := range []struct {
		name       string
		listDelay  time.Duration
		silent     bool
		wantStatus int
	}{
		{"silent API server: 503 at the budget", time.Hour, true, http.StatusServiceUnavailable},
		{"slow API server that answers: the answer", 1500 * time.Millisecond, false, http.StatusOK},
		{"slower than the longest wait: 503", time.Hour, false, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, key := budgetTestServer(t, tc.listDelay, tc.silent, Options{RequestTimeout: 500 * time.Millisecond, SlowRequestTimeout: 3 * time.Second})
			outages := testutil.ToFloat64(kubeUnavailableTotal)
			start := time.Now()
			resp, err := getWebhooks(context.Background(), t, ts, key)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			took := time.Since(start)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d after %s, want %d", resp.StatusCode, took, tc.wantStatus)
			}
			if tc.wantStatus != http.StatusServiceUnavailable {
				return
			}
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
			if got := testutil.ToFloat64(kubeUnavailableTotal) - outages; got != 1 {
				t.Errorf("outage counter went up by %v, want 1", got)
			}
			if tc.silent && took > 2*time.Second {
				t.Errorf("a silent API server held the request %s with a budget of 500 ms", took)
			}
		})
	}
}

// A client that goes away while the Kubernetes API is slow is no outage:
// nothing is counted as one, and the request ends.
func TestClientGoneIsNoOutage(t *testing.T) {
	ts, key := budgetTestServer(t, time.Hour, true, Options{RequestTimeout: 5 * time.Second})
	outages, gone := testutil.ToFloat64(kubeUnavailableTotal), testutil.ToFloat64(clientGoneTotal)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if resp, err := getWebhooks(ctx, t, ts, key); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("answered %d after the client left", resp.StatusCode)
	}
	for deadline := time.Now().Add(5 * time.Second); testutil.ToFloat64(clientGoneTotal) == gone; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request did not end after its client left")
		}
	}
	if got := testutil.ToFloat64(kubeUnavailableTotal) - outages; got != 0 {
		t.Errorf("a client that left counted as %v outages", got)
	}
}
