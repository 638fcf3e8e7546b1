package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app/devplane"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/webserver/apikey"
)

// DevOptions configure dev mode.
type DevOptions struct {
	api apiOptions
	// DataDir keeps etcd's data, the kubeconfig and the generated dev key.
	DataDir string
	// APIKey, when set, is the dev key instead of the remembered or a new one.
	APIKey string
	// ControlPlaneDir holds kube-apiserver and etcd.
	ControlPlaneDir string
	// MaxConcurrentSolves bounds in-process solves.
	MaxConcurrentSolves int
	// Retention deletes finished optimizations this long after they finished.
	Retention time.Duration
	// NoControllers serves the API and control plane only (load tests).
	NoControllers bool
	// Providers choose the geocoder and matrix; nil means the defaults.
	Providers *ProviderOptions
}

// DevInfo is what a started dev environment tells its user.
type DevInfo struct {
	URL        string
	APIKey     string
	Kubeconfig string
}

const devCompany = "dev"

// devControlPlaneStartTimeout bounds the start of etcd and of kube-apiserver
// each; KUBEBUILDER_CONTROLPLANE_START_TIMEOUT overrides it.
const devControlPlaneStartTimeout = time.Minute

func newDevCommand() *cobra.Command {
	var (
		o           DevOptions
		controllers bool
		providers   ProviderOptions
	)
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Dev mode: local control plane, controller and REST API in one process",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := ctrl.SetupSignalHandler()
			o.NoControllers = !controllers
			o.Providers = &providers
			out := cmd.OutOrStdout()
			return RunDev(ctx, o, func(info DevInfo) {
				fmt.Fprintf(out, "\nrouteopt dev is ready\n  REST API:  %s\n  API key:   %s\n  kubectl:   kubectl --kubeconfig %s get optimizations -A\n  Stop with Ctrl-C.\n\n", info.URL, info.APIKey, info.Kubeconfig)
			})
		},
	}
	o.api.addFlags(cmd, "127.0.0.1:8080")
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data-dir", ".routeopt-dev", "keeps etcd's data (so a restart keeps every optimization) and writes kubeconfig there")
	f.StringVar(&o.APIKey, "api-key", "", "use this dev API key (svc_sk_...) instead of a generated one")
	f.StringVar(&o.ControlPlaneDir, "control-plane-dir", "", "directory with kube-apiserver and etcd; default $KUBEBUILDER_ASSETS, else k8s/ beside this binary")
	providers.addFlags(f)
	providers.addBudgetFlags(f)
	f.IntVar(&o.MaxConcurrentSolves, "max-concurrent-solves", 0, "solves at once; the rest wait in queued; default half the CPUs")
	f.BoolVar(&controllers, "controllers", true, "run the controllers; false serves only the control plane and the API (load tests)")
	f.DurationVar(&o.Retention, "retention", 30*24*time.Hour, "delete finished optimizations this long after they finished; 0 keeps them")
	return cmd
}

// newDevChildCommand is the launcher dev mode runs etcd and kube-apiserver
// through; not for people.
func newDevChildCommand() *cobra.Command {
	return &cobra.Command{
		Use:                devplane.ChildUsage,
		Short:              "Run a control-plane binary of routeopt dev so that it dies with routeopt dev (dev mode runs this itself)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return devplane.RunChild(args, cmd.ErrOrStderr())
		},
	}
}

// controlPlaneDir finds kube-apiserver and etcd: the flag, then
// $KUBEBUILDER_ASSETS, then k8s/ beside the running executable.
func controlPlaneDir(flag string) (string, error) {
	candidates := []string{flag, os.Getenv("KUBEBUILDER_ASSETS")}
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "k8s"))
	}
	for _, dir := range candidates {
		if dir == "" {
			continue
		}
		if isFile(filepath.Join(dir, "kube-apiserver")) && isFile(filepath.Join(dir, "etcd")) {
			return filepath.Abs(dir)
		}
		if dir == flag {
			return "", fmt.Errorf("--control-plane-dir %s has no kube-apiserver and etcd (build them with make envtest)", dir)
		}
	}
	return "", errors.New("kube-apiserver and etcd not found: run `make envtest`, or pass --control-plane-dir")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// RunDev starts the local control plane, the controllers with the in-process
// runner and the REST API; it calls ready once GET /v1/me answers 200 and
// returns after ctx ends and everything has stopped.
func RunDev(ctx context.Context, o DevOptions, ready func(DevInfo)) (err error) {
	log := ctrl.Log.WithName("dev")
	if err := o.api.validate(); err != nil {
		return err
	}
	if o.api.operatorNamespace == "" {
		o.api.operatorNamespace = v1alpha1.DefaultOperatorNamespace
	}
	assets, err := controlPlaneDir(o.ControlPlaneDir)
	if err != nil {
		return err
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return err
	}
	crds, err := crd.CRDs()
	if err != nil {
		return err
	}
	plane, err := devplane.Prepare(ctx, devplane.Config{DataDir: dataDir, Binaries: assets, Log: log})
	if err != nil {
		return err
	}
	defer func() {
		if releaseErr := plane.Release(); releaseErr != nil && err == nil {
			err = releaseErr
		}
	}()
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDs:                  crds,
		ErrorIfCRDPathMissing: true,
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		// envtest allows each process 20 s, which a busy laptop can miss
		// when etcd syncs its data to disk (dev mode keeps fsync on).
		env.ControlPlaneStartTimeout = devControlPlaneStartTimeout
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: plane.EtcdDataDir, Path: plane.EtcdPath}
	// envtest turns fsync off for speed; dev data must survive a crash.
	env.ControlPlane.Etcd.Configure().Disable("unsafe-no-fsync")
	apiServer := env.ControlPlane.GetAPIServer()
	apiServer.Path, apiServer.CertDir = plane.APIServerPath, plane.APIServerCertDir
	log.Info("Starting the local control plane", "binaries", assets, "dataDir", dataDir)
	var cfg *rest.Config
	if err := plane.Launch(func() (err error) {
		cfg, err = env.Start()
		return err
	}); err != nil {
		_ = env.Stop() // Start can fail after launching processes (CRD install)
		return fmt.Errorf("unable to start the local control plane: %w", err)
	}
	cfg.QPS, cfg.Burst = kubeQPS, kubeBurst
	defer func() {
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = fmt.Errorf("unable to stop the local control plane: %w", stopErr)
		}
	}()

	user, err := env.AddUser(envtest.User{Name: "routeopt-dev", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(dataDir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: NewScheme(),
		// One process serves the API and runs the controllers: the API's
		// informers, the manager's direct reads.
		Cache:                  APICacheOptions(o.api.operatorNamespace),
		Client:                 ManagerClientOptions(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// RunDev may run several times in one process (its restart test).
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return fmt.Errorf("unable to create manager: %w", err)
	}
	ln, err := net.Listen("tcp", o.api.listen)
	if err != nil {
		return fmt.Errorf("unable to listen on %s: %w", o.api.listen, err)
	}
	defer func() { _ = ln.Close() }()
	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	wait := func() {}
	if !o.NoControllers {
		if wait, err = AddControllers(mgrCtx, mgr, RunnerOptions{
			Kind: "inprocess", MaxConcurrent: o.MaxConcurrentSolves, Retention: o.Retention, Providers: o.Providers,
			PublicURL: o.api.public(ln), WebhookAllowTargets: o.api.webhookAllowTargets, OperatorNamespace: o.api.operatorNamespace,
		}); err != nil {
			return err
		}
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		stopManager()
		if mgrErr := <-mgrDone; mgrErr != nil && err == nil {
			err = mgrErr
		}
		wait()
	}()
	if err := StartAPIInformers(ctx, mgr.GetCache()); err != nil {
		return err
	}

	direct, err := client.New(cfg, client.Options{Scheme: NewScheme()})
	if err != nil {
		return err
	}
	key, err := devTenant(ctx, direct, dataDir, o)
	if err != nil {
		return err
	}
	apiDone := make(chan error, 1)
	go func() { apiDone <- serveAPI(ctx, ln, mgr, o.api, ctrl.Log.WithName("routeopt")) }()
	url := "http://" + ln.Addr().String()
	probe := http.DefaultClient
	if o.api.tlsCertFile != "" {
		url = "https://" + ln.Addr().String()
		// The readiness probe talks to this process over loopback; the
		// certificate is for the clients, which verify it.
		probe = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback self-probe
	}
	if err := waitReady(ctx, probe, url, key, apiDone); err != nil {
		return err
	}
	ready(DevInfo{URL: url, APIKey: key, Kubeconfig: relativeToCwd(kubeconfigPath)})
	return <-apiDone
}

// devTenant onboards the dev tenant and registers its key: the flag's,
// else the one remembered in the data dir, else a new one, which is then
// remembered. Keys an earlier version kept in the tenant's namespace move
// to the operator's first.
func devTenant(ctx context.Context, c client.Client, dataDir string, o DevOptions) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.api.operatorNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("unable to create namespace %s: %w", ns.Name, err)
	}
	t, err := tenant.Create(ctx, c, devCompany, "Dev Company", o.api.operatorNamespace)
	if err != nil {
		return "", err
	}
	if _, err := apikey.Migrate(ctx, c, o.api.operatorNamespace); err != nil {
		return "", err
	}
	keyFile := filepath.Join(dataDir, "api-key")
	key := o.APIKey
	if key == "" {
		if b, err := os.ReadFile(keyFile); err == nil {
			key = strings.TrimSpace(string(b))
		}
	}
	key, _, err = apikey.Create(ctx, c, apikey.Spec{
		Namespace: o.api.operatorNamespace, Tenant: t.ID, CompanyName: t.DisplayName,
		Name: "dev", Scopes: apikey.AllScopes, Key: key,
	})
	if err != nil {
		return "", err
	}
	if o.APIKey == "" {
		if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
			return "", err
		}
	}
	return key, nil
}

// waitReady polls GET /v1/me until it answers 200.
func waitReady(ctx context.Context, probe *http.Client, url, key string, apiDone <-chan error) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := probe.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-apiDone:
			return fmt.Errorf("the REST API stopped: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return errors.New("the REST API did not become ready within 30 s")
}

func relativeToCwd(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}
