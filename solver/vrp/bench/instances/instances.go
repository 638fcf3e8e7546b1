// Package instances embeds the benchmark sets of routeopt bench, so that
// the command and the tests run from any directory with no files around
// them. A VRPTW set is a folder of Solomon-format instance files (*.txt)
// and a bks.csv of best-known solutions; a feature set is a folder of
// overlays (*.json) that add one feature of real fleets to instances of
// the VRPTW sets. README.md in this folder says where they come from.
package instances

//go:generate go run ../../../../hack/fleetgen -out .

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// The patterns name the instances, their best-known values and the
// overlays only; the build fails if a set lost its files.
//
//go:embed */*.txt */bks.csv */*.json
var files embed.FS

// Set is one embedded benchmark set.
type Set struct {
	Name  string // the folder, and the value of routeopt bench --set
	About string // one line for --help
	// Features marks a feature set: overlays (*.json) on instances of the
	// VRPTW sets, with no best-known values of their own.
	Features bool
}

// Default is the set routeopt bench runs when given neither a set nor a folder.
const Default = "solomon"

// All lists the embedded sets: the VRPTW sets, smallest instances first,
// then the feature sets.
func All() []Set {
	return []Set{
		{"solomon", "Solomon (1987): all 56 instances, 100 customers", false},
		{"gh200-sample", "Gehring & Homberger (1999): 8 instances, 200 customers", false},
		{"gh200-wide", "Gehring & Homberger: 24 other instances, 200 customers", false},
		{"gh400-sample", "Gehring & Homberger: 8 instances, 400 customers", false},
		{"gh400-wide", "Gehring & Homberger: 24 other instances, 400 customers", false},
		{"gh1000-sample", "Gehring & Homberger: 8 instances, 1,000 customers", false},
		{"breaks", "feature set: one 30-45 minute break per vehicle, mid-horizon", true},
		{"windows", "feature set: two or three windows per order, inside its own", true},
		{"skills", "feature set: three skills, a third of the orders needing one", true},
		{"loads", "feature set: two load dimensions beside the demand", true},
		{"duration", "feature set: a route duration limit of half the horizon", true},
		{"priority", "feature set: priorities 0-100, a fleet too short for all", true},
		{"startend", "feature set: vehicles starting and ending elsewhere, open routes", true},
	}
}

// Open returns the files of the named set at the root: its instance files
// (*.txt) and bks.csv, or its overlays (*.json).
func Open(name string) (fs.FS, error) {
	var names []string
	for _, s := range All() {
		if s.Name == name {
			return fs.Sub(files, name)
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("no benchmark set %q: want one of %s", name, strings.Join(names, ", "))
}
