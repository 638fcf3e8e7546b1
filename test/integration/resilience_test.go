package integration

import (
	"routeopt.io/routeopt/test/requests"

	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// Ten identical creates at once make one optimization, and every caller
// gets its record.
func TestConcurrentIdempotentCreates(t *testing.T) {
	s := startSystem(t, "inprocess")
	body := requests.TenOrders(1)
	const callers = 10
	ids := make([]string, callers)
	statuses := make([]int, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "concurrent-key-0001"})
			statuses[i] = status
			if id, ok := rec["id"].(string); ok {
				ids[i] = id
			}
		})
	}
	wg.Wait()
	for i := range callers {
		if statuses[i] != http.StatusAccepted || ids[i] != ids[0] || ids[0] == "" {
			t.Fatalf("caller %d: status %d id %q (first id %q)", i, statuses[i], ids[i], ids[0])
		}
	}
	list := &v1alpha1.OptimizationList{}
	if err := k8sClient.List(context.Background(), list, client.InNamespace(s.namespace)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d optimizations stored, want 1", len(list.Items))
	}
	rec := waitForState(t, s, ids[0], v1alpha1.StateCompleted)
	if rec["progress"] != float64(100) {
		t.Errorf("record %v", rec)
	}
}

// A revoked key stops working within 5 s; another tenant cannot revoke it.
func TestRevokedKeyStopsWorking(t *testing.T) {
	s := startSystem(t, "inprocess")
	if status, _, _ := s.call(t, "GET", "/v1/me", nil, nil); status != 200 {
		t.Fatalf("key does not work before revocation: %d", status)
	}
	id := apikey.ID(s.apiKey)
	if err := apikey.Revoke(context.Background(), k8sClient, operatorNamespace, "someone-else", id); !errors.Is(err, apikey.ErrNotFound) {
		t.Fatalf("another tenant revoking the key: %v, want ErrAPIKeyNotFound", err)
	}
	if err := apikey.Revoke(context.Background(), k8sClient, operatorNamespace, s.tenantID(), id); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	waitFor(t, 5*time.Second, "the revoked key to be refused", func() (bool, error) {
		status, _, _ := s.call(t, "GET", "/v1/me", nil, nil)
		return status == http.StatusUnauthorized, nil
	})
	t.Logf("refused %s after revocation", time.Since(revoked).Round(time.Millisecond))
}

// Past its burst a key gets 429 with Retry-After; another key is unaffected.
func TestRateLimit(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess"}, func(o *webserver.Options) { o.RateLimit, o.RateBurst = 1, 5 })
	otherSys := s.withKey(t, apikey.AllScopes...)
	for i := range 5 {
		if status, body, _ := s.call(t, "GET", "/v1/me", nil, nil); status != 200 {
			t.Fatalf("request %d within the burst: %d %v", i+1, status, body)
		}
	}
	status, body, hdr := s.call(t, "GET", "/v1/me", nil, nil)
	if status != http.StatusTooManyRequests || errorCode(t, body) != webserver.CodeRateLimited {
		t.Fatalf("request past the burst: %d %v", status, body)
	}
	if secs, err := strconv.Atoi(hdr.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("Retry-After %q", hdr.Get("Retry-After"))
	}
	if status, _, _ := otherSys.call(t, "GET", "/v1/me", nil, nil); status != 200 {
		t.Errorf("another key was limited too: %d", status)
	}
}

// With the Kubernetes API gone, requests that need it answer 503 with
// Retry-After within 2 s instead of hanging; reads served from the cache
// keep working. The API server sits behind a TCP proxy that the test cuts
// (connections refused) or turns into a black hole (nothing answers).
func TestKubernetesAPIDown(t *testing.T) {
	for _, mode := range []string{"refused", "blackhole"} {
		t.Run(mode, func(t *testing.T) {
			proxy := newTCPProxy(t, cfg.Host)
			proxied := rest.CopyConfig(cfg)
			proxied.Host = "https://" + proxy.addr()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			company := "down-" + randomHex(3)
			if _, err := tenant.Create(ctx, k8sClient, company, "Down Inc", operatorNamespace); err != nil {
				t.Fatal(err)
			}
			key := newAPIKey(t, company, apikey.AllScopes...)
			ns := v1alpha1.TenantNamespace(company)
			url, _ := startAPI(ctx, t, proxied, ns, nil)
			s := &system{namespace: ns, apiKey: key, url: url}
			waitFor(t, 5*time.Second, "the key in the cache", func() (bool, error) {
				status, _, _ := s.call(t, "GET", "/v1/me", nil, nil)
				return status == 200, nil
			})
			created := createViaREST(t, s, "api-down-test-0001", requests.TenOrders(1)).Name
			waitFor(t, 5*time.Second, "the record in the cache", func() (bool, error) {
				status, _, _ := s.call(t, "GET", "/v1/optimizations/"+created, nil, nil)
				return status == 200, nil
			})

			if mode == "refused" {
				proxy.cut()
			} else {
				proxy.blackhole()
			}
			for name, req := range map[string]struct {
				method, path string
				body         any
			}{
				"create": {"POST", "/v1/optimizations", requests.TenOrders(1)},
				"result": {"GET", "/v1/optimizations/" + created + "/result", nil},
			} {
				start := time.Now()
				status, body, hdr := s.call(t, req.method, req.path, req.body, map[string]string{"Idempotency-Key": "api-down-test-0002"})
				elapsed := time.Since(start)
				if name == "result" && status == http.StatusConflict {
					continue // no controller runs here: not completed, answered from the cache
				}
				if status != http.StatusServiceUnavailable || errorCode(t, body) != webserver.CodeUnavailable || hdr.Get("Retry-After") == "" {
					t.Errorf("%s: %d %v Retry-After %q", name, status, body, hdr.Get("Retry-After"))
				}
				if elapsed > 2*time.Second {
					t.Errorf("%s took %s, want at most 2 s", name, elapsed)
				}
			}
			if status, rec, _ := s.call(t, "GET", "/v1/optimizations/"+created, nil, nil); status != 200 || rec["orders"] != float64(10) {
				t.Errorf("cached read while the API is down: %d %v", status, rec)
			}
		})
	}
}

// A record can be read right after its create was answered, before the
// API's cache has seen it.
func TestReadYourWrites(t *testing.T) {
	s := startSystem(t, "inprocess")
	for i := range 20 {
		status, rec, _ := s.call(t, "POST", "/v1/optimizations", requests.TenOrders(1), map[string]string{"Idempotency-Key": "read-your-writes-" + strconv.Itoa(i)})
		if status != 202 {
			t.Fatalf("create %d: %d %v", i, status, rec)
		}
		if status, got, _ := s.call(t, "GET", "/v1/optimizations/"+rec["id"].(string), nil, nil); status != 200 || got["id"] != rec["id"] {
			t.Fatalf("GET right after create %d: %d %v", i, status, got)
		}
	}
}

// A burst of wrong keys from one address gets 401 for the first
// --auth-failure-burst of them and at --auth-failure-rate after that, 429
// with Retry-After for the rest; a valid key from that address waits too,
// and works once the address has a failure left.
func TestFailedAuthenticationBurst(t *testing.T) {
	// One failure every 5 s once the burst is spent: slow enough that the
	// valid key asked right after the burst finds the bucket still empty
	// however late a busy machine sends it.
	const rate, burst, senders = 0.2, 20, 8
	ctx, cancel := context.WithCancel(context.Background())
	company := "guess-" + randomHex(3)
	if _, err := tenant.Create(ctx, k8sClient, company, "Guessed Inc", operatorNamespace); err != nil {
		t.Fatal(err)
	}
	key := newAPIKey(t, company, apikey.AllScopes...)
	url, _ := startAPI(ctx, t, cfg, v1alpha1.TenantNamespace(company), func(o *webserver.Options) {
		o.AuthFailureRate, o.AuthFailureBurst = rate, burst
	})
	t.Cleanup(cancel)
	s := &system{namespace: v1alpha1.TenantNamespace(company), apiKey: key, url: url}
	waitFor(t, 5*time.Second, "the key in the cache", func() (bool, error) {
		status, _, _ := s.call(t, "GET", "/v1/me", nil, nil)
		return status == http.StatusOK, nil
	})

	const window = 2 * time.Second
	var mu sync.Mutex
	counts := map[int]int{}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			wrong := apikey.Prefix + strconv.Itoa(i) + randomHex(20)
			for time.Since(start) < window {
				req, _ := http.NewRequest(http.MethodGet, url+"/v1/me", nil)
				req.Header.Set("Authorization", "Bearer "+wrong)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_ = resp.Body.Close()
				mu.Lock()
				counts[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d senders for %s: %d answers 401, %d answers 429, others %v", senders, elapsed.Round(time.Millisecond),
		counts[http.StatusUnauthorized], counts[http.StatusTooManyRequests], counts)
	maxFailures := burst + int(rate*elapsed.Seconds()) + 1
	if n := counts[http.StatusUnauthorized]; n < burst || n > maxFailures {
		t.Errorf("%d wrong keys answered 401, want %d to %d", n, burst, maxFailures)
	}
	if counts[http.StatusTooManyRequests] == 0 || len(counts) != 2 {
		t.Errorf("answers %v, want only 401 and 429", counts)
	}

	status, body, hdr := s.call(t, "GET", "/v1/me", nil, nil)
	if status != http.StatusTooManyRequests || errorCode(t, body) != webserver.CodeRateLimited {
		t.Fatalf("a valid key from the limited address: %d %v, want 429 before the key is checked", status, body)
	}
	wait, err := strconv.Atoi(hdr.Get("Retry-After"))
	if err != nil || wait < 1 {
		t.Fatalf("Retry-After %q", hdr.Get("Retry-After"))
	}
	time.Sleep(time.Duration(wait) * time.Second)
	if status, body, _ := s.call(t, "GET", "/v1/me", nil, nil); status != http.StatusOK {
		t.Errorf("a valid key after Retry-After: %d %v", status, body)
	}
}
