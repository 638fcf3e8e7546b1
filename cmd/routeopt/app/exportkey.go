package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/webserver/exportkey"
)

func newExportKeyCommand() *cobra.Command {
	var admin adminFlags
	cmd := &cobra.Command{
		Use:   "exportkey",
		Short: "Manage the key that signs export download links (a Secret in the operator's namespace)",
	}
	admin.add(cmd)
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Rotate the export signing key: new links use a new key, links already given keep working until they expire",
		Long: `Makes a new export signing key in the Secret ` + exportkey.SecretName + `. Every API
replica signs new download links with it within about 10 seconds. The key it
replaces is kept as the previous key, so links it signed keep working until
they expire (--export-link-ttl of the API, 15 minutes by default). Exactly one
previous key is kept: a second rotation within a link lifetime drops the key
before, and the links it signed stop working (403 invalid_signature).
Deleting the Secret instead invalidates every link at once; the API makes a
new key.`,
		Args: cobra.NoArgs,
		RunE: admin.run(func(ctx context.Context, c client.Client, cmd *cobra.Command, _ []string) error {
			r, err := exportkey.Rotate(ctx, c, admin.operatorNamespace, time.Now())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if r.Previous == "" {
				fmt.Fprintf(out, "Export signing key %s created in namespace %s\n", r.Current, admin.operatorNamespace)
				return nil
			}
			fmt.Fprintf(out, "Export links are now signed with key %s; links signed with key %s keep working until they expire\n", r.Current, r.Previous)
			if r.Dropped != "" {
				since := ""
				if !r.DroppedRotatedAt.IsZero() {
					since = " (replaced " + age(r.DroppedRotatedAt) + " ago)"
				}
				fmt.Fprintf(out, "Key %s%s was dropped: links it signed no longer work\n", r.Dropped, since)
			}
			return nil
		}),
	}
	cmd.AddCommand(rotate)
	return cmd
}
