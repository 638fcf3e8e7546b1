package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/solver/record"
)

func newSolveCommand() *cobra.Command {
	var (
		kubeconfig, namespace, name, terminationLog string
		providers                                   ProviderOptions
	)
	cmd := &cobra.Command{
		Use:   "solve",
		Short: "Solve one Optimization (the entry point of a solve Job)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if namespace == "" || name == "" {
				return errors.New("--namespace and --name are required")
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: NewScheme()})
			if err != nil {
				return fmt.Errorf("unable to create client: %w", err)
			}
			ctx := ctrl.SetupSignalHandler()
			p, err := providers.SolvePipeline(c)
			if err != nil {
				return err
			}
			// A Job asks no geocoder (the manager geocoded): no ticket to count.
			err = p.Run(ctx, types.NamespacedName{Namespace: namespace, Name: name}, nil)
			if err != nil {
				f := record.AsFailure(err)
				record.WriteTerminationMessage(terminationLog, f)
				fmt.Fprintln(os.Stderr, f.Error())
				cmd.SilenceErrors = true
				return f
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; default in-cluster or $KUBECONFIG")
	f.StringVar(&namespace, "namespace", "", "namespace of the Optimization")
	f.StringVar(&name, "name", "", "name (id) of the Optimization")
	f.StringVar(&terminationLog, "termination-log", record.TerminationMessagePath, "where the failure is written for the controller")
	providers.addFlags(f)
	return cmd
}
