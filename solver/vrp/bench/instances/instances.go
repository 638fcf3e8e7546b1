// Package instances embeds the VRPTW benchmark sets of routeopt bench, so
// that the command and the tests run from any directory with no files
// around them. Each set is a folder of Solomon-format instance files
// (*.txt) and a bks.csv of best-known solutions; README.md in this folder
// says where they come from.
package instances

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

// The patterns name the instances and their best-known values only; the
// build fails if a set lost its files.
//
//go:embed */*.txt */bks.csv
var files embed.FS

// Set is one embedded benchmark set.
type Set struct {
	Name  string // the folder, and the value of routeopt bench --set
	About string // one line for --help
}

// Default is the set routeopt bench runs when given neither a set nor a folder.
const Default = "solomon"

// All lists the embedded sets, smallest instances first.
func All() []Set {
	return []Set{
		{"solomon", "Solomon (1987): all 56 instances, 100 customers"},
		{"gh200-sample", "Gehring & Homberger (1999): 8 instances, 200 customers"},
		{"gh200-wide", "Gehring & Homberger: 24 other instances, 200 customers"},
		{"gh400-sample", "Gehring & Homberger: 8 instances, 400 customers"},
		{"gh400-wide", "Gehring & Homberger: 24 other instances, 400 customers"},
		{"gh1000-sample", "Gehring & Homberger: 8 instances, 1,000 customers"},
	}
}

// Open returns the files of the named set: its instance files (*.txt) and
// bks.csv at the root.
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
