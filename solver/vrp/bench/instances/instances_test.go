package instances_test

import (
	"bytes"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"routeopt.io/routeopt/solver/vrp/bench"
	"routeopt.io/routeopt/solver/vrp/bench/instances"
)

// TestSets: every set of All is embedded, with as many instances as its
// README entry says, each of the size its name says, parsed with its
// original CRLF endings and with a best-known distance in bks.csv; and
// bks.csv names no instance that is missing.
func TestSets(t *testing.T) {
	tests := []struct {
		set       string
		files     int
		customers int
	}{
		{"solomon", 56, 100},
		{"gh200-sample", 8, 200},
		{"gh200-wide", 24, 200},
		{"gh400-sample", 8, 400},
		{"gh400-wide", 24, 400},
		{"gh1000-sample", 8, 1000},
	}
	var names []string
	for _, s := range instances.All() {
		names = append(names, s.Name)
	}
	var want []string
	for _, tt := range tests {
		want = append(want, tt.set)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("All() = %v, want %v", names, want)
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			fsys, err := instances.Open(tt.set)
			if err != nil {
				t.Fatal(err)
			}
			files, err := fs.Glob(fsys, "*.txt")
			if err != nil || len(files) != tt.files {
				t.Fatalf("%d instance files (%v), want %d", len(files), err, tt.files)
			}
			bks, err := bench.LoadBKS(fsys, "bks.csv")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				data, err := fs.ReadFile(fsys, f)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(data, []byte("\r\n")) {
					t.Errorf("%s: no CRLF line ending: the file is no longer the distributed original", f)
				}
				in, err := bench.Parse(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				name := strings.TrimSuffix(f, ".txt")
				if !strings.EqualFold(in.Name, name) || in.Customers() != tt.customers {
					t.Errorf("%s: instance %s with %d customers, want %s with %d", f, in.Name, in.Customers(), name, tt.customers)
				}
				if bks[name] <= 0 {
					t.Errorf("%s: no best-known distance in bks.csv", f)
				}
				delete(bks, name)
			}
			if len(bks) != 0 {
				t.Errorf("bks.csv names instances with no file: %v", bks)
			}
		})
	}
}

func TestOpenUnknown(t *testing.T) {
	for _, name := range []string{"", "gh200", "solomon/c101.txt", ".", "../bench"} {
		if _, err := instances.Open(name); err == nil || !strings.Contains(err.Error(), "want one of solomon, gh200-sample") {
			t.Errorf("Open(%q) = %v, want an error listing the sets", name, err)
		}
	}
	if _, err := instances.Open(instances.Default); err != nil {
		t.Errorf("the default set: %v", err)
	}
}
