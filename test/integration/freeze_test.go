package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/test/requests"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// frozenAnswerBound is how long any endpoint may take while the control
// plane is frozen.
const frozenAnswerBound = 2 * time.Second

// With kube-apiserver, and separately etcd, stopped (SIGSTOP: a process
// that holds its connections open and answers nothing, as a stalled VM or
// disk does), every REST endpoint answers within 2 s: 503 unavailable
// with Retry-After, or a correct answer from the API's cache. A client
// that hangs up meanwhile is not counted as an outage. Once the process
// goes on (SIGCONT) the same API process serves every endpoint again and
// nothing stored before or during the freeze is lost. The control plane is
// the test's own: freezing the suite's would stall every other test.
// frozenFor is how long each process is held frozen.
const frozenFor = 20 * time.Second

func TestFrozenControlPlane(t *testing.T) {
	restCfg, etcdURL := startOwnControlPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	direct, err := client.New(restCfg, client.Options{Scheme: app.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		t.Fatal(err)
	}
	company := "frozen-" + randomHex(3)
	if _, err := tenant.Create(ctx, direct, company, "Frozen Inc", operatorNamespace); err != nil {
		t.Fatal(err)
	}
	key, _, err := apikey.Create(ctx, direct, apikey.Spec{Namespace: operatorNamespace, Tenant: company, Scopes: apikey.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	ns := v1alpha1.TenantNamespace(company)
	apiURL, _ := startAPI(ctx, t, restCfg, ns, nil)
	t.Cleanup(cancel) // before startAPI's cleanup, which waits for the cache to stop
	s := &system{namespace: ns, apiKey: key, url: apiURL}
	waitFor(t, 10*time.Second, "the key in the API's cache", func() (bool, error) {
		status, _, _ := s.call(t, "GET", "/v1/me", nil, nil)
		return status == http.StatusOK, nil
	})

	// A completed optimization, solved by a manager that then stops: the
	// frozen control plane is the API's alone.
	stopManager := runManagerOn(t, restCfg, app.RunnerOptions{Kind: "inprocess", MaxConcurrent: 1}, ns)
	status, rec, _ := s.call(t, "POST", "/v1/optimizations", requests.TenOrders(1), map[string]string{"Idempotency-Key": "frozen-completed"})
	if status != http.StatusAccepted {
		t.Fatalf("create: %d %v", status, rec)
	}
	completed := rec["id"].(string)
	waitForState(t, s, completed, v1alpha1.StateCompleted)
	stopManager()

	apiPID := childPID(t, "kube-apiserver", "--secure-port="+portOf(t, restCfg.Host))
	etcdPID := childPID(t, "etcd", "127.0.0.1:"+portOf(t, etcdURL.String()))
	// Each freeze asks for an export of arguments of its own: a write the
	// first freeze answered 503 may still land once the process goes on,
	// and the same arguments would then be answered from that record.
	for _, target := range []struct {
		name   string
		pid    int
		export map[string]any
	}{
		{"kube-apiserver", apiPID, map[string]any{"format": "xlsx", "include_driver_instructions": false}},
		{"etcd", etcdPID, map[string]any{"format": "xlsx"}},
	} {
		t.Run(target.name, func(t *testing.T) {
			f := prepareFreeze(t, s, completed, target.export)
			outages, gone := counterValue(t, "routeopt_api_kubernetes_unavailable_total"), counterValue(t, "routeopt_api_client_closed_total")

			signal(t, target.pid, syscall.SIGSTOP)
			resumed := false
			resume := func() {
				if !resumed {
					resumed = true
					signal(t, target.pid, syscall.SIGCONT)
				}
			}
			t.Cleanup(resume) // even when the test fails, or the suite would wedge
			frozenAt := time.Now()

			answered503 := 0
			for _, e := range f.endpoints() {
				start := time.Now()
				status, body, hdr := f.send(t, e.method, e.path, e.body)
				took := time.Since(start)
				t.Logf("frozen %-14s %-6s %-20s %d in %s", target.name, e.method, e.label, status, took.Round(time.Millisecond))
				switch {
				case status == http.StatusServiceUnavailable:
					answered503++
					if code := envelopeCode(body); code != webserver.CodeUnavailable || hdr.Get("Retry-After") == "" {
						t.Errorf("%s: 503 with code %q, Retry-After %q", e.label, code, hdr.Get("Retry-After"))
					}
				case !e.cached(status):
					t.Errorf("%s: %d %s, want 503 or an answer from the cache", e.label, status, body)
				}
				if took > frozenAnswerBound {
					t.Errorf("%s took %s, want at most %s", e.label, took.Round(time.Millisecond), frozenAnswerBound)
				}
			}

			// A client that hangs up (half-closes) before the answer.
			halfClose(t, apiURL, key, "/v1/optimizations/"+completed+"/result")
			waitFor(t, 5*time.Second, "the hung-up request to end", func() (bool, error) {
				return counterValue(t, "routeopt_api_client_closed_total") > gone, nil
			})
			if got := counterValue(t, "routeopt_api_kubernetes_unavailable_total") - outages; got != float64(answered503) {
				t.Errorf("outage counter went up by %v for %d answers 503 (a client that hung up counts as none)", got, answered503)
			}
			// Held frozen for frozenFor in all, then asked again: an outage
			// that lasts stays a 503 (or the cache's answer) within the bound.
			time.Sleep(time.Until(frozenAt.Add(frozenFor)))
			for _, e := range f.endpoints() {
				if e.label != "me" && e.label != "result" {
					continue
				}
				start := time.Now()
				status, _, hdr := f.send(t, e.method, e.path, e.body)
				took := time.Since(start)
				t.Logf("frozen %-14s %-6s %-20s %d in %s, %s into the freeze", target.name, e.method, e.label, status, took.Round(time.Millisecond), time.Since(frozenAt).Round(time.Second))
				if (status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "") && !e.cached(status) || took > frozenAnswerBound {
					t.Errorf("%s after %s frozen: %d in %s", e.label, frozenFor, status, took.Round(time.Millisecond))
				}
			}
			t.Logf("frozen for %s", time.Since(frozenAt).Round(time.Millisecond))

			resume()
			f.checkRecovered(t, direct)
		})
	}
}

// freeze holds what one freeze calls: objects made beforehand for the
// writes to act on.
type freeze struct {
	s                          *system
	completed, queued          string
	downloadPath               string
	webhookID, spareKeyID, tag string
	newExport                  map[string]any // the arguments of an export not made before the freeze
}

// prepareFreeze makes, before the freeze, an optimization to cancel (no
// controller runs, so it stays queued), an export link, a webhook endpoint
// and an API key to delete.
func prepareFreeze(t *testing.T, s *system, completed string, newExport map[string]any) *freeze {
	t.Helper()
	f := &freeze{s: s, completed: completed, tag: randomHex(4), newExport: newExport}
	status, rec, _ := s.call(t, "POST", "/v1/optimizations", requests.TenOrders(1), map[string]string{"Idempotency-Key": "frozen-queued-" + f.tag})
	if status != http.StatusAccepted {
		t.Fatalf("create: %d %v", status, rec)
	}
	f.queued = rec["id"].(string)
	status, rec, _ = s.call(t, "POST", "/v1/optimizations/"+completed+"/exports", map[string]any{"format": "csv"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("export: %d %v", status, rec)
	}
	link, err := url.Parse(rec["download_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	f.downloadPath = link.RequestURI()
	status, rec, _ = s.call(t, "POST", "/v1/webhooks", map[string]any{"url": "https://93.184.216.34/frozen-" + f.tag}, nil)
	if status != http.StatusCreated {
		t.Fatalf("webhook: %d %v", status, rec)
	}
	f.webhookID = rec["id"].(string)
	status, rec, _ = s.call(t, "POST", "/v1/api-keys", map[string]any{"name": "spare " + f.tag, "scopes": []string{apikey.ScopeOptimizationsRead}}, nil)
	if status != http.StatusCreated {
		t.Fatalf("API key: %d %v", status, rec)
	}
	f.spareKeyID = rec["id"].(string)
	// Every object above in the API's cache, as it would be a moment later.
	waitFor(t, 5*time.Second, "the new objects in the API's cache", func() (bool, error) {
		_, rec, _ := s.call(t, "GET", "/v1/optimizations/"+f.queued, nil, nil)
		_, hooks, _ := s.call(t, "GET", "/v1/webhooks", nil, nil)
		return rec["id"] == f.queued && strings.Contains(fmt.Sprint(hooks), f.webhookID), nil
	})
	return f
}

type frozenEndpoint struct {
	method, path, label string
	body                any
	// cached are the statuses of a correct answer from the cache.
	cachedStatuses []int
}

func (e frozenEndpoint) cached(status int) bool {
	for _, c := range e.cachedStatuses {
		if c == status {
			return true
		}
	}
	return false
}

// endpoints are every route of the API, with the statuses it may answer
// from the cache while the control plane is frozen.
func (f *freeze) endpoints() []frozenEndpoint {
	opt := "/v1/optimizations/" + f.completed
	return []frozenEndpoint{
		{method: "GET", path: "/healthz", label: "healthz", cachedStatuses: []int{200}},
		{method: "GET", path: "/openapi.json", label: "openapi", cachedStatuses: []int{200}},
		{method: "GET", path: "/portal/", label: "portal", cachedStatuses: []int{200}},
		{method: "GET", path: "/v1/me", label: "me", cachedStatuses: []int{200}},
		{method: "POST", path: "/v1/optimizations", label: "create", body: requests.TenOrders(1)},
		{method: "GET", path: "/v1/optimizations", label: "list", cachedStatuses: []int{200}},
		{method: "GET", path: opt, label: "get", cachedStatuses: []int{200}},
		{method: "GET", path: opt + "/result", label: "result"},
		{method: "POST", path: "/v1/optimizations/" + f.queued + "/cancel", label: "cancel"},
		// The live export of the same arguments is on the cached record.
		{method: "POST", path: opt + "/exports", label: "exports create", body: map[string]any{"format": "csv"}, cachedStatuses: []int{201}},
		{method: "POST", path: opt + "/exports", label: "exports create (new)", body: f.newExport},
		{method: "GET", path: f.downloadPath, label: "export download"},
		{method: "GET", path: "/v1/webhooks", label: "webhooks list", cachedStatuses: []int{200}},
		{method: "POST", path: "/v1/webhooks", label: "webhooks create", body: map[string]any{"url": "https://93.184.216.34/frozen-new-" + f.tag}},
		{method: "DELETE", path: "/v1/webhooks/" + f.webhookID, label: "webhooks delete"},
		{method: "GET", path: "/v1/api-keys", label: "api-keys list", cachedStatuses: []int{200}},
		{method: "POST", path: "/v1/api-keys", label: "api-keys create", body: map[string]any{"name": "during " + f.tag, "scopes": []string{apikey.ScopeOptimizationsRead}}},
		{method: "DELETE", path: "/v1/api-keys/" + f.spareKeyID, label: "api-keys delete"},
	}
}

// send makes one request with the API key; the create carries an
// Idempotency-Key of this freeze, so a retry after it is the same create.
func (f *freeze) send(t *testing.T, method, path string, body any) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, f.s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.s.apiKey)
	req.Header.Set("Idempotency-Key", "frozen-create-"+f.tag)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw, resp.Header
}

// checkRecovered waits for the API to write again, then checks that every
// write refused during the freeze goes through and nothing was lost.
func (f *freeze) checkRecovered(t *testing.T, direct client.Client) {
	t.Helper()
	start := time.Now()
	waitFor(t, 60*time.Second, "creates to succeed again", func() (bool, error) {
		status, _, _ := f.send(t, "POST", "/v1/optimizations", requests.TenOrders(1))
		return status == http.StatusAccepted, nil
	})
	t.Logf("writing again %s after the process went on", time.Since(start).Round(time.Millisecond))
	for _, e := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"GET", "/v1/optimizations/" + f.completed + "/result", nil, http.StatusOK},
		{"POST", "/v1/optimizations/" + f.queued + "/cancel", nil, http.StatusOK},
		{"POST", "/v1/optimizations/" + f.completed + "/exports", map[string]any{"format": "csv"}, http.StatusCreated},
		{"GET", f.downloadPath, nil, http.StatusOK},
		// A delete the frozen process received may have been carried out
		// once it went on: then the retry finds nothing to delete.
		{"DELETE", "/v1/webhooks/" + f.webhookID, nil, http.StatusNoContent},
		{"DELETE", "/v1/api-keys/" + f.spareKeyID, nil, http.StatusNoContent},
	} {
		status, body, _ := f.send(t, e.method, e.path, e.body)
		if e.method == "DELETE" && status == http.StatusNotFound {
			continue
		}
		if status != e.want {
			t.Errorf("after the freeze, %s %s: %d %s, want %d", e.method, e.path, status, body, e.want)
		}
	}
	// Nothing stored before the freeze is gone; the cancel refused during
	// it went through after.
	for _, id := range []string{f.completed, f.queued} {
		opt := &v1alpha1.Optimization{}
		if err := direct.Get(context.Background(), client.ObjectKey{Namespace: f.s.namespace, Name: id}, opt); err != nil {
			t.Errorf("optimization %s after the freeze: %v", id, err)
		} else if id == f.queued && !opt.Spec.Cancel {
			t.Errorf("optimization %s: the cancel after the freeze was not stored", id)
		}
	}
	// The optimization, whose create was refused during the freeze and
	// retried after it, exists once.
	list := &v1alpha1.OptimizationList{}
	if err := direct.List(context.Background(), list, client.InNamespace(f.s.namespace)); err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, o := range list.Items {
		if o.Name == webserver.OptimizationID(f.s.namespace, "frozen-create-"+f.tag) {
			created++
		}
	}
	if created != 1 {
		t.Errorf("the create retried after the freeze stored %d optimizations, want 1", created)
	}
}

// halfClose sends GET path and closes its side of the connection at once,
// as a client that gives up does; the server answers nothing it can read.
func halfClose(t *testing.T, apiURL, key, path string) {
	t.Helper()
	u, err := url.Parse(apiURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nAuthorization: Bearer " + key + "\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		_ = resp.Body.Close()
		t.Logf("a client that hung up was answered %d", resp.StatusCode)
	}
}

// startOwnControlPlane starts a kube-apiserver and etcd for one test, with
// routeopt's CRDs, stopped when it ends.
func startOwnControlPlane(t *testing.T) (*rest.Config, *url.URL) {
	t.Helper()
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: cfgAssets(), CRDs: crds}
	restCfg, err := env.Start()
	t.Cleanup(func() { _ = env.Stop() }) // Start can fail after launching processes
	if err != nil {
		t.Fatalf("unable to start a control plane: %v", err)
	}
	return restCfg, env.ControlPlane.Etcd.URL
}

// childPID finds this process's child named name with an argument
// containing needle: the suite's control plane runs the same binaries.
func childPID(t *testing.T, name, needle string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after it.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if filepath.Base(args[0]) != name {
			continue
		}
		for _, a := range args[1:] {
			if strings.Contains(a, needle) {
				return pid
			}
		}
	}
	t.Fatalf("no child %s with an argument containing %q", name, needle)
	return 0
}

func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Port() == "" {
		t.Fatalf("no port in %q: %v", rawURL, err)
	}
	return u.Port()
}

func signal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Errorf("signal %s to %d: %v", sig, pid, err)
	}
}

// counterValue reads a counter of the process's metrics registry.
func counterValue(t *testing.T, name string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() == name && mf.GetType() == dto.MetricType_COUNTER && len(mf.Metric) == 1 {
			return mf.Metric[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no counter %s", name)
	return 0
}

// envelopeCode is the code of an error envelope, or "".
func envelopeCode(body []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Code
}
