// Package integration tests the whole service in one process against a real
// kube-apiserver and etcd (envtest): the REST API, the controller, both
// runners and the solve pipeline.
package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/optcache"
)

// operatorNamespace keeps the API key Secrets, as routeopt-system does.
const operatorNamespace = v1alpha1.DefaultOperatorNamespace

var (
	cfg            *rest.Config
	kubeconfigPath string
	k8sClient      client.WithWatch
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	crds, err := crd.CRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{BinaryAssetsDirectory: cfgAssets(), CRDs: crds}
	cfg, err = env.Start()
	if err != nil {
		_ = env.Stop() // Start can fail after launching processes (CRD install)
		fmt.Fprintf(os.Stderr, "unable to start envtest (run make envtest): %v\n", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	user, err := env.AddUser(envtest.User{Name: "integration", Groups: []string{"system:masters"}}, nil)
	if err == nil {
		var kc []byte
		if kc, err = user.KubeConfig(); err == nil {
			dir, _ := os.MkdirTemp("", "routeopt-integration")
			defer func() { _ = os.RemoveAll(dir) }()
			kubeconfigPath = filepath.Join(dir, "kubeconfig")
			err = os.WriteFile(kubeconfigPath, kc, 0o600)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	k8sClient, err = client.NewWithWatch(cfg, client.Options{Scheme: app.NewScheme()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := k8sClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// zapLevel keeps test logs to warnings and errors unless ROUTEOPT_TEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("ROUTEOPT_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.WarnLevel
}

// cfgAssets is where kube-apiserver and etcd are: $KUBEBUILDER_ASSETS or bin/k8s.
func cfgAssets() string {
	if assets := os.Getenv("KUBEBUILDER_ASSETS"); assets != "" {
		return assets
	}
	assets, _ := filepath.Abs("../../bin/k8s")
	return assets
}

// system is a tenant with a controller manager (its own runner) and the
// REST API on its own cache, as in production where they are separate
// processes; the manager can be stopped and started under the API.
type system struct {
	namespace string
	apiKey    string
	url       string
	client    client.Client

	runner      app.RunnerOptions
	stopManager func()
}

// startSystem starts a fresh tenant with the given runner and the REST API.
func startSystem(t *testing.T, runner string) *system {
	t.Helper()
	return startSystemWith(t, app.RunnerOptions{Kind: runner}, nil)
}

// startSystemWith is startSystem with the runner's options and a hook to
// tune the REST server's.
func startSystemWith(t testing.TB, ro app.RunnerOptions, tune func(*webserver.Options)) *system {
	t.Helper()
	if ro.Image == "" {
		ro.Image, ro.Command = "routeopt:test", "/routeopt"
	}
	if ro.MaxConcurrent == 0 {
		ro.MaxConcurrent = 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	company := "it-" + randomHex(4)
	if _, err := tenant.Create(ctx, k8sClient, company, "Integration "+company, operatorNamespace); err != nil {
		t.Fatal(err)
	}
	key := newAPIKey(t, company, apikey.AllScopes...)
	ns := v1alpha1.TenantNamespace(company)
	url, apiClient := startAPI(ctx, t, cfg, ns, tune)
	s := &system{namespace: ns, apiKey: key, url: url, client: apiClient, runner: ro}
	s.startManager(t)
	t.Cleanup(func() {
		s.stopManager()
		cancel()
	})
	return s
}

// startAPI serves the REST API of namespace through restCfg on its own slim
// cache, as `routeopt api` does, until ctx ends; it returns the server's URL
// and the cache-backed client.
func startAPI(ctx context.Context, t testing.TB, restCfg *rest.Config, ns string, tune func(*webserver.Options)) (string, client.Client) {
	t.Helper()
	c, err := cluster.New(restCfg, func(o *cluster.Options) {
		o.Scheme = app.NewScheme()
		o.Cache = app.APICacheOptions(operatorNamespace)
		o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
		o.Cache.DefaultTransform = optcache.Slim
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	if err := app.StartAPIInformers(ctx, c.GetCache()); err != nil {
		t.Fatal(err)
	}
	opts := webserver.Options{PublicURL: "https://routes.example.test"}
	if tune != nil {
		tune(&opts)
	}
	opts.OperatorNamespace = operatorNamespace
	srv := webserver.New(c.GetClient(), c.GetAPIReader(), c.GetClient(), ctrl.Log.WithName("api"), opts)
	if err := srv.IndexOptimizations(ctx, c.GetCache()); err != nil {
		t.Fatal(err)
	}
	srv.WarmUp(ctx, ns)
	srv.ProbeKubernetes(ctx)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		<-done
	})
	return ts.URL, c.GetClient()
}

// startManager starts the controller manager watching only the system's
// namespace; stopManager stops it and waits for its solves to end.
func (s *system) startManager(t testing.TB) {
	t.Helper()
	s.stopManager = runManager(t, s.runner, s.namespace)
}

// runManager starts a manager whose cache sees namespaces (as a
// production manager sees every tenant) with runner options ro, and
// returns a stop function that waits until its solves have stopped; it may
// be called more than once.
func runManager(t testing.TB, ro app.RunnerOptions, namespaces ...string) func() {
	t.Helper()
	return runManagerOn(t, cfg, ro, namespaces...)
}

// runManagerOn is runManager on the control plane restCfg reaches.
func runManagerOn(t testing.TB, restCfg *rest.Config, ro app.RunnerOptions, namespaces ...string) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opts := app.ManagerCacheOptions()
	opts.DefaultNamespaces = map[string]cache.Config{}
	for _, ns := range namespaces {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 app.NewScheme(),
		Cache:                  opts,
		Client:                 app.ManagerClientOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Several managers run in this process, one per test.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	wait, err := app.AddControllers(ctx, mgr, ro)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		t.Fatal("manager cache did not sync")
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			wait()
		})
	}
}

// newAPIKey stores a key of tenant with scopes and returns it.
func newAPIKey(t testing.TB, tenantID string, scopes ...string) string {
	t.Helper()
	key, _, err := apikey.Create(context.Background(), k8sClient, apikey.Spec{
		Namespace: operatorNamespace, Tenant: tenantID, CompanyName: "Integration " + tenantID, Scopes: scopes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// withKey is s acting with a new key of s's tenant holding scopes, once the
// API's cache has it: a key is refused until its Secret reaches the cache.
func (s *system) withKey(t *testing.T, scopes ...string) *system {
	t.Helper()
	other := *s
	other.apiKey = newAPIKey(t, s.tenantID(), scopes...)
	waitFor(t, 5*time.Second, "the new key in the API's cache", func() (bool, error) {
		status, _, _ := other.call(t, "GET", "/v1/me", nil, nil)
		return status == 200, nil
	})
	return &other
}

// tenantID is the company id of s.
func (s *system) tenantID() string {
	return strings.TrimPrefix(s.namespace, v1alpha1.TenantNamespacePrefix)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
