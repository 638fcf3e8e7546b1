package app

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/controllers/tenant"
)

func newTenantCommand() *cobra.Command {
	var admin adminFlags
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Onboard and offboard companies (tenants)",
		Long: `A tenant is a company: a namespace tenant-<id> labelled routeopt.io/tenant=<id>,
with RoleBindings that let routeopt's manager and API act inside it (and
only there). Run these with your own cluster-admin credentials.`,
	}
	admin.add(cmd)

	var displayName string
	create := &cobra.Command{
		Use:   "create ID",
		Short: "Onboard a tenant, or bring an existing one up to date",
		Args:  cobra.ExactArgs(1),
		// The id is checked before any connection is made.
		PreRunE: func(_ *cobra.Command, args []string) error { return tenant.ValidateID(args[0]) },
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, args []string) error {
			t, err := tenant.Create(ctx, c, args[0], displayName, admin.operatorNamespace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s (%s) ready in namespace %s\nnext: routeopt apikey create --tenant %s\n", t.ID, t.DisplayName, t.Namespace, t.ID)
			return nil
		}),
	}
	create.Flags().StringVar(&displayName, "display-name", "", "company name shown to the tenant (GET /v1/me); default the id")

	list := &cobra.Command{
		Use:   "list",
		Short: "List tenants",
		Args:  cobra.NoArgs,
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, _ []string) error {
			tenants, err := tenant.List(ctx, c)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 3, ' ', 0)
			fmt.Fprintln(w, "ID\tDISPLAY NAME\tNAMESPACE\tSTATUS\tAGE")
			for _, t := range tenants {
				status := "Active"
				if t.Deleting {
					status = "Deleting"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.DisplayName, t.Namespace, status, age(t.Created))
			}
			return w.Flush()
		}),
	}

	del := &cobra.Command{
		Use:   "delete ID",
		Short: "Offboard a tenant: its API keys and webhook secrets, then its namespace with every optimization",
		Args:  cobra.ExactArgs(1),
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, args []string) error {
			if err := tenant.Delete(ctx, c, args[0], admin.operatorNamespace); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "tenant %s deleted\n", args[0])
			return nil
		}),
	}
	cmd.AddCommand(create, list, del)
	return cmd
}
