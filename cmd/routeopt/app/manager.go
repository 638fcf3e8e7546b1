package app

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func newManagerCommand() *cobra.Command {
	var (
		kubeconfig, metricsAddr, probeAddr string
		leaderElect                        bool
		ro                                 RunnerOptions
		providers                          ProviderOptions
	)
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the controllers (leader-elected)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ro.Providers = &providers
			if err := ro.validate(); err != nil {
				return err
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			mgr, err := ctrl.NewManager(cfg, ctrl.Options{
				Scheme:                 NewScheme(),
				Cache:                  CacheOptions(),
				Metrics:                metricsserver.Options{BindAddress: metricsAddr},
				HealthProbeBindAddress: probeAddr,
				LeaderElection:         leaderElect,
				LeaderElectionID:       "routeopt-manager.routeopt.io",
			})
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
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; default in-cluster or $KUBECONFIG")
	f.StringVar(&metricsAddr, "metrics-bind-address", ":8443", "metrics endpoint address; 0 disables it")
	f.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "health probe address")
	f.BoolVar(&leaderElect, "leader-elect", true, "elect a leader so only one manager acts")
	f.StringVar(&ro.Kind, "runner", "job", "how solves run: job (a Job per solve) or inprocess (goroutines of the manager)")
	f.StringVar(&ro.Image, "solver-image", "", "image of solve Jobs (the operator's own image)")
	f.StringVar(&ro.Command, "solver-command", "/routeopt", "path of the routeopt binary inside --solver-image")
	f.StringVar(&ro.JobQueueName, "job-queue-name", "", "Kueue LocalQueue name to label solve Jobs with")
	f.IntVar(&ro.MaxConcurrent, "max-concurrent-solves", 0, "solves running at once; the rest wait in queued, first in first out; default half the CPUs")
	f.DurationVar(&ro.Retention, "retention", 30*24*time.Hour, "delete finished optimizations and their results this long after they finished; 0 keeps them")
	providers.addFlags(f)
	return cmd
}
