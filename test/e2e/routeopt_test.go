package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
)

// operatorNamespace is where dist/install.yaml puts routeopt.
const operatorNamespace = v1alpha1.DefaultOperatorNamespace

// The rendered install, applied once per test binary.
var (
	installOnce sync.Once
	installErr  error
	deployments = map[string]*appsv1.Deployment{}
)

// install applies dist/install.yaml (rendered by make build-installer,
// which make test runs first) as the platform team would, server-side.
func install(t *testing.T) {
	t.Helper()
	installOnce.Do(func() { installErr = applyInstall() })
	if installErr != nil {
		t.Fatal(installErr)
	}
}

func applyInstall() error {
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(root, "dist", "install.yaml"))
	if err != nil {
		return fmt.Errorf("rendered manifests missing (make build-installer): %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			return err
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetKind() == "Deployment" {
			d := &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, d); err != nil {
				return err
			}
			deployments[d.Name] = d
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("e2e-install"), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
}

// containerArgs are the command line of a rendered Deployment's container
// with $(VAR) references expanded as the kubelet does (from the container's
// env; fieldRef metadata.namespace is the operator namespace), then extra
// appended: a later flag wins over an earlier one.
func containerArgs(t *testing.T, deployment string, vars map[string]string, extra ...string) []string {
	t.Helper()
	d, ok := deployments[deployment]
	if !ok {
		t.Fatalf("no Deployment %s in dist/install.yaml", deployment)
	}
	c := d.Spec.Template.Spec.Containers[0]
	values := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			values[e.Name] = d.Namespace
		case e.ValueFrom == nil:
			values[e.Name] = e.Value
		}
	}
	for k, v := range vars {
		values[k] = v
	}
	var args []string
	for _, a := range append(c.Command[1:], c.Args...) {
		for k, v := range values {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		if strings.Contains(a, "$(") {
			t.Fatalf("%s: unexpanded variable in %q", deployment, a)
		}
		args = append(args, a)
	}
	return append(args, extra...)
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// cli runs `routeopt args...` as the platform team would, with the admin's
// kubeconfig, and returns its stdout, stderr and exit code.
func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, framework.Routeopt(t), append(args, "--kubeconfig="+env.AdminKubeconfig)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("routeopt %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

// mustCLI is cli that fails the test unless the command succeeds.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("routeopt %v exited %d: %s%s", args, code, out, errOut)
	}
	return out
}

// tenant is an onboarded company with an API key, made with the CLI.
type tenant struct {
	id, namespace, key string
}

func onboard(t *testing.T, prefix string) tenant {
	t.Helper()
	id := prefix + "-" + strings.ToLower(rand8())
	out := mustCLI(t, "tenant", "create", id, "--display-name", "E2E "+id)
	if !strings.Contains(out, "tenant-"+id) {
		t.Errorf("tenant create printed %q", out)
	}
	key := strings.TrimSpace(mustCLI(t, "apikey", "create", "--tenant", id, "--name", "e2e"))
	if !strings.HasPrefix(key, "svc_sk_") {
		t.Fatalf("apikey create printed %q", key)
	}
	return tenant{id: id, namespace: "tenant-" + id, key: key}
}

func rand8() string { return fmt.Sprintf("%08x", time.Now().UnixNano()&0xffffffff) }

// startAPI runs `routeopt api` as its ServiceAccount, with the rendered
// Deployment's arguments and extra ones, and waits until it answers.
func startAPI(t *testing.T, key string, extra ...string) string {
	t.Helper()
	_, url := startAPIProcess(t, key, extra...)
	return url
}

// startAPIProcess is startAPI that also returns the process.
func startAPIProcess(t *testing.T, key string, extra ...string) (*framework.Process, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := env.KubeconfigForServiceAccount(ctx, operatorNamespace, "routeopt-api", nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	url := "http://" + addr
	p := framework.StartProcess(t, framework.ProcessOptions{
		Name: "api", Path: framework.Routeopt(t),
		Args: containerArgs(t, "routeopt-api", map[string]string{"PUBLIC_URL": url}, append([]string{"--listen=" + addr, "--kubeconfig=" + kc}, extra...)...),
	})
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		status, _ := call(url, key, http.MethodGet, "/v1/me", nil, nil)
		return status == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("the API did not answer /v1/me with 200: %v", err)
	}
	return p, url
}

// manager is a `routeopt manager` process as its ServiceAccount.
type manager struct {
	*framework.Process
	metricsURL string
}

// startManager runs `routeopt manager` with the rendered Deployment's
// arguments (the Job runner, leader election, secure metrics), its own
// loopback ports, fast leader election and extra flags.
func startManager(t *testing.T, name string, extra ...string) *manager {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := env.KubeconfigForServiceAccount(ctx, operatorNamespace, "routeopt-manager", nil)
	if err != nil {
		t.Fatal(err)
	}
	metrics := freeAddr(t)
	args := containerArgs(t, "routeopt-manager", nil, append([]string{
		"--kubeconfig=" + kc,
		"--metrics-bind-address=" + metrics,
		"--health-probe-bind-address=" + freeAddr(t),
		"--leader-elect-lease-duration=" + leaseDuration.String(),
		"--leader-elect-renew-deadline=3s",
		"--leader-elect-retry-period=" + retryPeriod.String(),
	}, extra...)...)
	p := framework.StartProcess(t, framework.ProcessOptions{Name: name, Path: framework.Routeopt(t), Args: args})
	return &manager{Process: p, metricsURL: "https://" + metrics + "/metrics"}
}

// Leader election timing of the managers the tests start.
const (
	leaseDuration = 4 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// call sends a JSON request with key and decodes the answer.
func call(url, key, method, path string, body any, headers map[string]string) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		return 0, nil
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// createOptimization posts the ten-order walk-through request.
func createOptimization(t *testing.T, url, key, idempotencyKey string, mutate func(map[string]any)) string {
	t.Helper()
	var orders []map[string]any
	for i := range 10 {
		orders = append(orders, map[string]any{"id": fmt.Sprintf("A-%d", i+1), "latitude": 52.50 + float64(i)*0.005, "longitude": 13.38 + float64(i%4)*0.01, "demand": 1})
	}
	body := map[string]any{
		"name":    "e2e",
		"depot":   map[string]any{"label": "Depot", "latitude": 52.52, "longitude": 13.405},
		"orders":  orders,
		"fleet":   map[string]any{"count": 2, "capacity": 10},
		"options": map[string]any{"solver_seconds": 1},
	}
	if mutate != nil {
		mutate(body)
	}
	status, rec := call(url, key, http.MethodPost, "/v1/optimizations", body, map[string]string{"Idempotency-Key": idempotencyKey})
	if status != http.StatusAccepted {
		t.Fatalf("create: %d %v", status, rec)
	}
	return rec["id"].(string)
}

// waitState polls the record until its status is want (failing on another
// terminal state) and returns it.
func waitState(t *testing.T, url, key, id, want string, timeout time.Duration) map[string]any {
	t.Helper()
	var rec map[string]any
	deadline := time.Now().Add(timeout)
	for {
		_, rec = call(url, key, http.MethodGet, "/v1/optimizations/"+id, nil, nil)
		status, _ := rec["status"].(string)
		if status == want {
			return rec
		}
		if v1alpha1.State(status).IsTerminal() {
			t.Fatalf("optimization %s ended %s, want %s: %v", id, status, want, rec)
		}
		if time.Now().After(deadline) {
			t.Fatalf("optimization %s not %s after %s: %v", id, want, timeout, rec)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// grantMetricsReader makes a ServiceAccount bound to routeopt-metrics-reader,
// as the prometheus component does for Prometheus, and returns its token.
func grantMetricsReader(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	if err := env.EnsureServiceAccount(ctx, operatorNamespace, "e2e-prometheus"); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-prometheus"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "routeopt-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "e2e-prometheus", Namespace: operatorNamespace}},
	}
	if err := env.Client.Create(ctx, crb); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	cfg, err := env.RESTConfigForServiceAccount(ctx, operatorNamespace, "e2e-prometheus", nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.BearerToken
}

// scrape GETs a metrics endpoint with token ("" sends none).
func scrape(metricsURL, token string) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, metricsURL, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the manager's self-signed certificate
	}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// metricValue finds the value of the sample whose line starts with name
// (labels included), or -1.
func metricValue(text, name string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	return -1
}

// solvePods is the kubelet's record of the pods of opt's solve Job.
func solvePods(k *framework.Kubelet, id string) []framework.PodRecord {
	var out []framework.PodRecord
	for _, p := range k.Pods() {
		if strings.HasPrefix(p.Name, id+"-solve-") {
			out = append(out, p)
		}
	}
	return out
}

// getPod reads a pod as the admin.
func getPod(ctx context.Context, t *testing.T, namespace, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// startKubelet runs the solve pods of namespace as decide says (nil: runs
// every one).
func startKubelet(t *testing.T, namespace string, decide func(*corev1.Pod) framework.Action) *framework.Kubelet {
	t.Helper()
	return env.StartKubelet(t, framework.KubeletOptions{Binary: framework.Routeopt(t), Selector: solver, Namespace: namespace, Decide: decide})
}

// holding runs every solve pod but those of optimization id, which wait
// for Kubelet.Act.
func holding(id string) func(*corev1.Pod) framework.Action {
	return func(p *corev1.Pod) framework.Action {
		if p.Labels[v1alpha1.OptimizationLabel] == id {
			return framework.Hold()
		}
		return framework.Run()
	}
}

// receiver is a webhook receiver on loopback (allowed with
// --webhook-allow-target): it answers 200 and keeps every delivery.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []delivery
}

// delivery is one request a receiver got.
type delivery struct {
	signature string
	body      []byte
	event     map[string]any
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivery{signature: req.Header.Get("Service-Signature"), body: body}
		_ = json.Unmarshal(body, &d.event)
		r.mu.Lock()
		r.events = append(r.events, d)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// waitEvent waits for the delivery of optimization id's event of type typ.
func (r *receiver) waitEvent(t *testing.T, id, typ string) delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, d := range r.events {
			data, _ := d.event["data"].(map[string]any)
			if d.event["type"] == typ && data["optimization_id"] == id {
				r.mu.Unlock()
				return d
			}
		}
		r.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s event for %s", typ, id)
	return delivery{}
}

// verify checks a delivery's Service-Signature by hand: HMAC-SHA256 over
// "<t>.<raw body>" keyed with the whole secret, t within 300 s.
func (d delivery) verify(t *testing.T, secret string) {
	t.Helper()
	if !signatureValid(d.signature, d.body, secret) {
		t.Errorf("signature %q does not verify", d.signature)
	}
}

// signatureValid checks a Service-Signature header against the raw body.
func signatureValid(signature string, body []byte, secret string) bool {
	var ts, v1 string
	for _, part := range strings.Split(signature, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			ts = v
		} else if v, ok := strings.CutPrefix(part, "v1="); ok {
			v1 = v
		}
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	sec, err := strconv.ParseInt(ts, 10, 64)
	return err == nil && hmac.Equal([]byte(v1), []byte(hex.EncodeToString(mac.Sum(nil)))) && time.Since(time.Unix(sec, 0)).Abs() <= 300*time.Second
}
