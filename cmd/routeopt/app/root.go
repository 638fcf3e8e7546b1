// Package app holds the routeopt subcommands.
package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"routeopt.io/routeopt/api/v1alpha1"
)

// NewRootCommand is `routeopt`.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "routeopt",
		Short:         "Route optimization as a Kubernetes operator",
		SilenceUsage:  true,
		SilenceErrors: false,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			// Dev mode talks to a person at a terminal: readable logs by default.
			dev := cmd.Name() == "dev"
			if f := cmd.Flags().Lookup("log-dev"); f != nil && f.Changed {
				dev, _ = cmd.Flags().GetBool("log-dev")
			}
			ctrl.SetLogger(zap.New(zap.UseDevMode(dev)))
		},
	}
	root.PersistentFlags().Bool("log-dev", false, "human-readable logs instead of JSON (default for dev)")
	root.AddCommand(newManagerCommand(), newAPICommand(), newSolveCommand(), newDevCommand(), newDevChildCommand(), newTenantCommand(), newAPIKeyCommand(), newExportKeyCommand(), newBenchCommand())
	return root
}

// NewScheme knows the built-in kinds and routeopt's.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// Client-side rate limits of the Kubernetes client. client-go's defaults
// (a few requests per second) would turn a burst of creates into 503s; the
// API server's own priority and fairness protects it instead.
const (
	kubeQPS   = 500
	kubeBurst = 1000
)

// restConfig loads --kubeconfig, else $KUBECONFIG, in-cluster or ~/.kube/config.
func restConfig(kubeconfig string) (*rest.Config, error) {
	var (
		cfg *rest.Config
		err error
	)
	if kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
			return nil, fmt.Errorf("unable to load kubeconfig %s: %w", kubeconfig, err)
		}
	} else if cfg, err = ctrl.GetConfig(); err != nil {
		return nil, fmt.Errorf("unable to find a cluster (set --kubeconfig): %w", err)
	}
	cfg.QPS, cfg.Burst = kubeQPS, kubeBurst
	return cfg, nil
}
