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
		if !s.Features {
			names = append(names, s.Name)
		}
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

// TestFeatureSets: every feature set holds one overlay per base instance
// and nothing else, each the file the generator (hack/fleetgen) writes
// today, applying to its base instance with and without its feature; and
// the sets stay small.
func TestFeatureSets(t *testing.T) {
	var sets []string
	for _, s := range instances.All() {
		if s.Features {
			sets = append(sets, s.Name)
		}
	}
	if want := []string{"breaks", "windows", "skills", "loads", "duration", "priority", "startend"}; !slices.Equal(sets, want) {
		t.Fatalf("feature sets %v, want %v", sets, want)
	}
	total := 0
	for _, set := range sets {
		fsys, err := instances.Open(set)
		if err != nil {
			t.Fatal(err)
		}
		files, err := fs.Glob(fsys, "*")
		if err != nil || len(files) != len(bench.FeatureBases) {
			t.Fatalf("%s: files %v (%v), want one per base instance %v", set, files, err, bench.FeatureBases)
		}
		for _, base := range bench.FeatureBases {
			_, name, _ := strings.Cut(base, "/")
			data, err := fs.ReadFile(fsys, name+".json")
			if err != nil {
				t.Fatal(err)
			}
			total += len(data)
			o, err := bench.FeatureOverlay(set, base)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := o.Encode(&want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, want.Bytes()) {
				t.Errorf("%s/%s.json is not what the generator writes: run go generate ./solver/vrp/bench/instances", set, name)
			}
			got, err := bench.ParseOverlay(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s/%s.json: %v", set, name, err)
			}
			if got.Base != base || got.Feature != set {
				t.Errorf("%s/%s.json: base %s, feature %s", set, name, got.Base, got.Feature)
			}
			baseSet, _, _ := strings.Cut(base, "/")
			bfs, err := instances.Open(baseSet)
			if err != nil {
				t.Fatal(err)
			}
			in, err := bench.ParseFS(bfs, name+".txt")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := got.Problem(in); err != nil {
				t.Errorf("%s/%s.json: %v", set, name, err)
			}
			if _, err := got.Relaxed().Problem(in); err != nil {
				t.Errorf("%s/%s.json relaxed: %v", set, name, err)
			}
		}
	}
	if total > 2<<20 {
		t.Errorf("the feature sets take %d bytes, more than 2 MiB", total)
	}
}
