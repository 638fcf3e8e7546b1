// Command routeopt is the one binary of the service: the controller manager,
// the REST API, the solve Job's entry point, dev mode and tools.
package main

import (
	"os"

	"routeopt.io/routeopt/cmd/routeopt/app"
)

func main() {
	if err := app.NewRootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}
