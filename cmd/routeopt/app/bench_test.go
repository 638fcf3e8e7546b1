package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeInstance writes a 30-customer Solomon-format instance to a new
// folder and returns the folder.
func writeInstance(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("T30\n\nVEHICLE\nNUMBER     CAPACITY\n  30         60\n\nCUSTOMER\n")
	b.WriteString("CUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME\n\n")
	b.WriteString("    0      50         50          0          0       1000          0\n")
	for i := 1; i <= 30; i++ {
		x, y := (i*37)%100, (i*61)%100
		ready := (i * 53) % 500
		fmt.Fprintf(&b, "%5d %6d %10d %10d %10d %10d %10d\n", i, x, y, 10, ready, ready+300, 10)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t30.txt"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runBench runs `routeopt bench` with args and returns its output.
func runBench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"bench"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestBenchIterationsAndProfile: --iterations makes a run a fixed amount
// of work (two runs with the same seed write the same row, whatever the
// time they took), --cpuprofile writes a pprof file, and bad values
// (--ablate with an unknown piece among them) are refused before anything
// runs.
func TestBenchIterationsAndProfile(t *testing.T) {
	dir := writeInstance(t)
	rows := make([]string, 2)
	for i := range rows {
		csv := filepath.Join(t.TempDir(), "out.csv")
		prof := filepath.Join(t.TempDir(), "cpu.prof")
		if out, err := runBench(t, "--dir", dir, "--seconds", "60", "--iterations", "40", "--seed", "3", "--out", csv, "--cpuprofile", prof); err != nil {
			t.Fatalf("bench: %v\n%s", err, out)
		}
		data, err := os.ReadFile(csv)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "t30,30,") || !strings.HasSuffix(lines[1], ",true") {
			t.Fatalf("csv %q", data)
		}
		// the row without its seconds column
		f := strings.Split(lines[1], ",")
		rows[i] = strings.Join(append(f[:6:6], f[7:]...), ",")
		p, err := os.ReadFile(prof)
		if err != nil || len(p) < 2 || p[0] != 0x1f || p[1] != 0x8b {
			t.Fatalf("profile: %v, %d bytes (want a gzipped pprof file)", err, len(p))
		}
	}
	if rows[0] != rows[1] {
		t.Fatalf("same seed and --iterations, different plans: %q and %q", rows[0], rows[1])
	}

	for _, tc := range []struct {
		args  []string
		match string
	}{
		{[]string{"--dir", dir, "--iterations", "-1"}, "--iterations must be >= 0"},
		{[]string{"--ablate", "genetic, nope"}, `--ablate: unknown piece "nope"`},
		{[]string{"--realistic", "--iterations", "5"}, "--iterations applies to instance sets"},
		{[]string{"--dir", dir, "--seconds", "0.01", "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof")}, "--cpuprofile"},
	} {
		if _, err := runBench(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.match) {
			t.Errorf("bench %v: got %v, want an error mentioning %q", tc.args, err, tc.match)
		}
	}
}

// TestBenchSets: with no --dir the command runs an embedded set from any
// directory (solomon unless --set says otherwise), compares with that set's
// best-known distances, and refuses what names no set.
func TestBenchSets(t *testing.T) {
	t.Chdir(t.TempDir()) // no instance file around
	for _, tc := range []struct {
		args []string
		row  string // the start of the CSV row: instance, customers
		bks  string
	}{
		{[]string{"--instances", "c101"}, "c101,100,", "8273"},
		{[]string{"--set", "gh200-sample", "--instances", "c1_2_1"}, "c1_2_1,200,", "26986"},
	} {
		out, err := runBench(t, append(tc.args, "--seconds", "60", "--iterations", "5")...)
		if err != nil {
			t.Fatalf("bench %v: %v\n%s", tc.args, err, out)
		}
		var row []string
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, tc.row) {
				row = strings.Split(strings.TrimSpace(line), ",")
			}
		}
		// instance,customers,routes,distance,bks,gap_pct,seconds,feasible
		if len(row) != 8 || row[4] != tc.bks || row[7] != "true" {
			t.Fatalf("bench %v: want a feasible row %s... with bks %s, got\n%s", tc.args, tc.row, tc.bks, out)
		}
	}

	dir := writeInstance(t)
	for _, tc := range []struct {
		args  []string
		match string
	}{
		{[]string{"--set", "gh300"}, `--set: no benchmark set "gh300": want one of solomon, gh200-sample`},
		{[]string{"--set", "solomon", "--dir", dir}, "--set and --dir both name the instances"},
		{[]string{"--dir", filepath.Join(dir, "missing")}, "--dir:"},
		{[]string{"--dir", filepath.Join(dir, "t30.txt")}, "is not a folder"},
		{[]string{"--dir", t.TempDir()}, "no instance file (*.txt) in"},
		{[]string{"--instances", "x*"}, "no instance in solomon matches x*"},
		{[]string{"--realistic", "--set", "gh200-sample"}, "apply to instance sets, not --realistic"},
		{[]string{"--realistic", "--dir", dir}, "apply to instance sets, not --realistic"},
		{[]string{"--realistic", "--relax"}, "apply to instance sets, not --realistic"},
	} {
		if _, err := runBench(t, append(tc.args, "--seconds", "0.01")...); err == nil || !strings.Contains(err.Error(), tc.match) {
			t.Errorf("bench %v: got %v, want an error mentioning %q", tc.args, err, tc.match)
		}
	}
}

// TestBenchFeatureSets: --set runs a feature set from any directory, with
// --relax the instance without its feature beside it; --dir runs a
// folder of overlays; --summarize sums up rows of feature sets; --relax
// is refused for an instance set.
func TestBenchFeatureSets(t *testing.T) {
	t.Chdir(t.TempDir())
	csv := filepath.Join(t.TempDir(), "priority.csv")
	out, err := runBench(t, "--set", "priority", "--instances", "c201", "--seconds", "60", "--iterations", "5", "--relax", "--out", csv)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	data, err := os.ReadFile(csv)
	if err != nil {
		t.Fatal(err)
	}
	// instance,feature,customers,vehicles,routes,served,priority,cost,seconds,feasible,relaxed_served,relaxed_priority,relaxed_cost,relaxed_feasible,gap_pct
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "c201,priority,100,2,") {
		t.Fatalf("csv %q", data)
	}
	row := strings.Split(lines[1], ",")
	if row[9] != "true" || row[13] != "true" || row[10] == "" {
		t.Fatalf("want feasible plans with and without priorities, got %q", lines[1])
	}
	if !strings.Contains(out, "priority          1          0") {
		t.Fatalf("summary %q", out)
	}
	sum, err := runBench(t, "--summarize", csv)
	if err != nil || !strings.Contains(sum, "priority          1          0") {
		t.Fatalf("summarize: %v\n%s", err, sum)
	}

	dir := t.TempDir()
	overlay := `{"format": "routeopt-features/1", "base": "solomon/r101", "feature": "none", "fleet": [{"count": 100}], "orders": {}}`
	if err := os.WriteFile(filepath.Join(dir, "r101.json"), []byte(overlay), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runBench(t, "--dir", dir, "--seconds", "60", "--iterations", "5"); err != nil || !strings.Contains(out, "r101,none,100,100,") {
		t.Fatalf("bench --dir of an overlay: %v\n%s", err, out)
	}
	if _, err := runBench(t, "--set", "solomon", "--relax", "--seconds", "1"); err == nil || !strings.Contains(err.Error(), "--relax applies to feature sets, and solomon is not one") {
		t.Fatalf("--relax on an instance set: %v", err)
	}
}
