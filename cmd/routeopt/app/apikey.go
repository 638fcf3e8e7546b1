package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/controllers/tenant"
	"routeopt.io/routeopt/webserver/apikey"
)

// adminFlags are what every platform-team command needs: a cluster to talk
// to and the namespace routeopt runs in.
type adminFlags struct{ kubeconfig, operatorNamespace string }

func (a *adminFlags) add(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.StringVar(&a.kubeconfig, "kubeconfig", "", "kubeconfig file; default in-cluster or $KUBECONFIG")
	f.StringVar(&a.operatorNamespace, "operator-namespace", v1alpha1.DefaultOperatorNamespace, "namespace routeopt runs in (where API keys are kept)")
}

// run makes a cobra RunE that calls f with a client holding the caller's
// own credentials, within 30 s.
func (a *adminFlags) run(f func(ctx context.Context, c client.Client, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := restConfig(a.kubeconfig)
		if err != nil {
			return err
		}
		c, err := client.New(cfg, client.Options{Scheme: NewScheme()})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
		defer cancel()
		return f(ctx, c, cmd, args)
	}
}

// age prints how long ago t was, as kubectl does.
func age(t time.Time) string { return duration.HumanDuration(time.Since(t)) }

func newAPIKeyCommand() *cobra.Command {
	var admin adminFlags
	cmd := &cobra.Command{
		Use:   "apikey",
		Short: "Manage a tenant's API keys (Secrets in the operator's namespace)",
	}
	admin.add(cmd)

	var tenantID, name, scopes string
	create := &cobra.Command{
		Use:   "create --tenant ID",
		Short: "Create an API key (printed once, stored only as a hash)",
		Args:  cobra.NoArgs,
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, _ []string) error {
			t, err := tenant.Get(ctx, c, tenantID)
			if err != nil {
				return err
			}
			key, _, err := apikey.Create(ctx, c, apikey.Spec{
				Namespace: admin.operatorNamespace, Tenant: t.ID, CompanyName: t.DisplayName,
				Name: name, Scopes: splitList(scopes),
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		}),
	}
	create.Flags().StringVar(&name, "name", "", "what the key is for, shown by apikey list")
	// Every scope by default: the first key of a company holds keys:write,
	// so the company makes its other keys itself in the portal.
	create.Flags().StringVar(&scopes, "scopes", strings.Join(apikey.AllScopes, ","), "comma-separated scopes (keys:write manages the company's keys over the API and portal)")

	list := &cobra.Command{
		Use:   "list --tenant ID",
		Short: "List a tenant's API keys (never the keys themselves)",
		Args:  cobra.NoArgs,
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, _ []string) error {
			if _, err := tenant.Get(ctx, c, tenantID); err != nil {
				return err
			}
			keys, err := apikey.List(ctx, c, admin.operatorNamespace, tenantID)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 3, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tPREFIX\tSCOPES\tAGE")
			for _, k := range keys {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Prefix, strings.Join(k.Scopes, ","), age(k.CreatedAt))
			}
			return w.Flush()
		}),
	}

	revoke := &cobra.Command{
		Use:   "revoke --tenant ID KEY_ID",
		Short: "Revoke an API key: every API replica refuses it within seconds",
		Args:  cobra.ExactArgs(1),
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, args []string) error {
			err := apikey.Revoke(ctx, c, admin.operatorNamespace, tenantID, args[0])
			if errors.Is(err, apikey.ErrNotFound) {
				return fmt.Errorf("tenant %q has no API key %q (see routeopt apikey list --tenant %s)", tenantID, args[0], tenantID)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "API key %s of tenant %s revoked\n", args[0], tenantID)
			return nil
		}),
	}
	for _, sub := range []*cobra.Command{create, list, revoke} {
		sub.Flags().StringVar(&tenantID, "tenant", "", "tenant (company) id")
		_ = sub.MarkFlagRequired("tenant")
	}

	migrate := &cobra.Command{
		Use:   "migrate",
		Short: "Move API keys that earlier versions kept in tenant namespaces into the operator's namespace",
		Long: `Earlier versions stored each API key Secret in its tenant's namespace. This
moves every one of them into the operator's namespace, where the API now
looks for them; run it once when upgrading, with your own cluster-admin
credentials (routeopt's components cannot read Secrets outside their
namespace). Running it again moves nothing.`,
		Args: cobra.NoArgs,
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, _ []string) error {
			moved, err := apikey.Migrate(ctx, c, admin.operatorNamespace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d API key(s) moved to namespace %s\n", moved, admin.operatorNamespace)
			return nil
		}),
	}
	cmd.AddCommand(create, list, revoke, migrate)
	return cmd
}

// splitList splits a comma-separated flag, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
