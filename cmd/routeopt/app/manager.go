package app

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/controllers"
)

// Leader election keeps its Lease in the operator's namespace; the metrics
// endpoint checks every scrape's token and its right to GET /metrics with
// the API server (kubebuilder's WithAuthenticationAndAuthorization).
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=routeopt-system,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",namespace=routeopt-system,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// managerOptions are the manager's own flags (beyond the runner's).
type managerOptions struct {
	kubeconfig, metricsAddr, metricsCertDir, probeAddr, operatorNamespace string
	metricsSecure, leaderElect                                            bool
	leaseDuration, renewDeadline, retryPeriod                             time.Duration
}

// ctrlOptions turns o into controller-runtime's manager options.
func (o *managerOptions) ctrlOptions() ctrl.Options {
	metrics := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		metrics.SecureServing = true
		metrics.CertDir = o.metricsCertDir // empty: a self-signed certificate
		metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
		// HTTP/2 is off, as kubebuilder does, against its stream
		// cancellation and rapid reset attacks (CVE-2023-44487).
		metrics.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	}
	return ctrl.Options{
		Scheme:                        NewScheme(),
		Cache:                         ManagerCacheOptions(),
		Client:                        ManagerClientOptions(),
		Metrics:                       metrics,
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              "routeopt-manager.routeopt.io",
		LeaderElectionNamespace:       o.operatorNamespace,
		LeaderElectionReleaseOnCancel: true, // the process ends right after the manager stops
		LeaseDuration:                 &o.leaseDuration,
		RenewDeadline:                 &o.renewDeadline,
		RetryPeriod:                   &o.retryPeriod,
	}
}

// solveResourceFlags are the quantities of controllers.SolveResources as flags.
type solveResourceFlags struct{ cpuRequest, cpuLimit, memoryRequest, memoryLimit string }

func (f solveResourceFlags) parse() (*controllers.SolveResources, error) {
	var r controllers.SolveResources
	for _, q := range []struct {
		flag, value string
		into        *resource.Quantity
	}{
		{"--solver-cpu-request", f.cpuRequest, &r.CPURequest},
		{"--solver-cpu-limit", f.cpuLimit, &r.CPULimit},
		{"--solver-memory-request", f.memoryRequest, &r.MemoryRequest},
		{"--solver-memory-limit", f.memoryLimit, &r.MemoryLimit},
	} {
		v, err := resource.ParseQuantity(q.value)
		if err != nil || v.Sign() < 0 {
			return nil, fmt.Errorf("%s %q is not a quantity such as 500m, 2, 256Mi or 1Gi", q.flag, q.value)
		}
		*q.into = v
	}
	if r.MemoryLimit.IsZero() || r.MemoryRequest.Cmp(r.MemoryLimit) > 0 {
		return nil, fmt.Errorf("--solver-memory-request %s must not exceed --solver-memory-limit %s, which is required", f.memoryRequest, f.memoryLimit)
	}
	if !r.CPULimit.IsZero() && r.CPURequest.Cmp(r.CPULimit) > 0 {
		return nil, fmt.Errorf("--solver-cpu-request %s must not exceed --solver-cpu-limit %s", f.cpuRequest, f.cpuLimit)
	}
	return &r, nil
}

func newManagerCommand() *cobra.Command {
	var (
		o         managerOptions
		ro        RunnerOptions
		providers ProviderOptions
		resources solveResourceFlags
	)
	defaults := controllers.DefaultSolveResources()
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the controllers (leader-elected)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ro.Providers = &providers
			ro.OperatorNamespace = o.operatorNamespace
			var err error
			if ro.Resources, err = resources.parse(); err != nil {
				return err
			}
			if err := ro.validate(); err != nil {
				return err
			}
			cfg, err := restConfig(o.kubeconfig)
			if err != nil {
				return err
			}
			mgr, err := ctrl.NewManager(cfg, o.ctrlOptions())
			if err != nil {
				return fmt.Errorf("unable to create manager: %w", err)
			}
			ctx := ctrl.SetupSignalHandler()
			wait, err := AddControllers(ctx, mgr, ro)
			if err != nil {
				return err
			}
			if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
				return err
			}
			if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
				return err
			}
			err = mgr.Start(ctx)
			wait()
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; default in-cluster or $KUBECONFIG")
	f.StringVar(&o.operatorNamespace, "operator-namespace", v1alpha1.DefaultOperatorNamespace, "namespace routeopt runs in: its leader election Lease lives there")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "metrics endpoint address; 0 disables it")
	f.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers whose token may GET /metrics; false serves plain HTTP to anyone")
	f.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for the metrics endpoint; default a self-signed certificate")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "health probe address")
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader so only one manager acts")
	f.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a stopped leader's lease blocks the others before one takes over")
	f.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up leading")
	f.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to take the lease and the leader renews it")
	f.StringVar(&ro.Kind, "runner", "job", "how solves run: job (a Job per solve) or inprocess (goroutines of the manager)")
	f.StringVar(&ro.Image, "solver-image", "", "image of solve Jobs (the operator's own image)")
	f.StringVar(&ro.Command, "solver-command", "/routeopt", "path of the routeopt binary inside --solver-image")
	f.StringVar(&ro.JobQueueName, "job-queue-name", "", "Kueue LocalQueue name to label solve Jobs with")
	f.StringVar(&ro.PublicURL, "public-url", "", "base URL clients reach the REST API at, for the links in webhook events")
	addWebhookAllowTargetFlag(f, &ro.WebhookAllowTargets)
	f.StringVar(&resources.cpuRequest, "solver-cpu-request", defaults.CPURequest.String(), "CPU request of a solve Job")
	f.StringVar(&resources.cpuLimit, "solver-cpu-limit", defaults.CPULimit.String(), "CPU limit of a solve Job (the solver uses that many threads); 0 sets none")
	f.StringVar(&resources.memoryRequest, "solver-memory-request", defaults.MemoryRequest.String(), "memory request of a 500-order solve Job; smaller problems ask for less, down to a quarter")
	f.StringVar(&resources.memoryLimit, "solver-memory-limit", defaults.MemoryLimit.String(), "memory limit of a solve Job")
	f.IntVar(&ro.MaxConcurrent, "max-concurrent-solves", 0, "solves running at once; the rest wait in queued, first in first out; default half the CPUs")
	f.DurationVar(&ro.Retention, "retention", 30*24*time.Hour, "delete finished optimizations and their results this long after they finished; 0 keeps them")
	providers.addFlags(f)
	providers.addBudgetFlags(f)
	return cmd
}
