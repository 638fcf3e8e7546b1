package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/webserver"
)

func newAPIKeyCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "apikey", Short: "Manage API keys"}
	var kubeconfig, company, companyName, scopes string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an API key for a company (printed once, stored only as a hash)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if company == "" {
				return fmt.Errorf("--company is required")
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := client.New(cfg, client.Options{Scheme: NewScheme()})
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if companyName == "" {
				companyName = company
			}
			key, err := webserver.CreateAPIKey(ctx, c, company, companyName, strings.Split(scopes, ","), "")
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		},
	}
	f := create.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; default in-cluster or $KUBECONFIG")
	f.StringVar(&company, "company", "", "company id (a DNS label); its namespace is tenant-<id>")
	f.StringVar(&companyName, "company-name", "", "company display name; default the id")
	f.StringVar(&scopes, "scopes", strings.Join(webserver.AllScopes, ","), "comma-separated scopes")
	cmd.AddCommand(create)
	return cmd
}
