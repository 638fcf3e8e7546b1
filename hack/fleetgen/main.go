// Command fleetgen writes the feature sets of routeopt bench: for every
// feature set of package instances and every base instance
// (bench.FeatureBases) an
// overlay file <out>/<feature>/<instance>.json, derived from the embedded
// Solomon and Gehring–Homberger instances with a seed of its own. Run it
// with go generate ./solver/vrp/bench/instances after changing a
// derivation; the files it writes are committed, and a test fails when
// they differ from what it would write.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"routeopt.io/routeopt/solver/vrp/bench"
	"routeopt.io/routeopt/solver/vrp/bench/instances"
)

func main() {
	out := flag.String("out", "solver/vrp/bench/instances", "the folder of the instance sets")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
}

func write(out string) error {
	for _, f := range instances.All() {
		if !f.Features {
			continue
		}
		dir := filepath.Join(out, f.Name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		for _, base := range bench.FeatureBases {
			o, err := bench.FeatureOverlay(f.Name, base)
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := o.Encode(&b); err != nil {
				return err
			}
			_, name, _ := strings.Cut(base, "/")
			if err := os.WriteFile(filepath.Join(dir, name+".json"), b.Bytes(), 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}
