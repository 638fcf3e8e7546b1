package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"routeopt.io/routeopt/solver/vrp"
	"routeopt.io/routeopt/solver/vrp/bench/instances"
	"routeopt.io/routeopt/test/vrpbrute"
)

// featureProblem applies the committed overlay of set to base.
func featureProblem(t *testing.T, set, base string) (*Overlay, *Instance, *vrp.Problem) {
	t.Helper()
	fsys, err := instances.Open(set)
	if err != nil {
		t.Fatal(err)
	}
	baseSet, name, _ := strings.Cut(base, "/")
	f, err := fsys.Open(name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := ParseOverlay(f)
	if err != nil {
		t.Fatal(err)
	}
	bfs, err := instances.Open(baseSet)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ParseFS(bfs, name+".txt")
	if err != nil {
		t.Fatal(err)
	}
	p, err := o.Problem(in)
	if err != nil {
		t.Fatal(err)
	}
	return o, in, p
}

// alone is the problem of order o alone with one vehicle of each kind of
// p's fleet (start and end locations renumbered).
func alone(p *vrp.Problem, o int) *vrp.Problem {
	n := len(p.Orders)
	locs := []int{0, o + 1}
	for k := range p.ExtraLocations {
		locs = append(locs, n+1+k)
	}
	q := &vrp.Problem{Orders: []vrp.Order{p.Orders[o]}, Objective: p.Objective, Dimensions: p.Dimensions, ExtraLocations: p.ExtraLocations}
	for _, i := range locs {
		var dist, dur []int
		for _, j := range locs {
			dist, dur = append(dist, p.Distance[i][j]), append(dur, p.Duration[i][j])
		}
		q.Distance, q.Duration = append(q.Distance, dist), append(q.Duration, dur)
	}
	renumber := func(l int) int {
		if l == 0 {
			return 0
		}
		return l - n + 1
	}
	seen := map[string]bool{}
	for _, v := range p.Vehicles {
		v.Start, v.End = renumber(v.Start), renumber(v.End)
		if key := fmt.Sprintf("%+v", v); !seen[key] {
			seen[key] = true
			q.Vehicles = append(q.Vehicles, v)
		}
	}
	return q
}

// TestFeatureSetsServeEveryOrderAlone: in every feature instance each
// order can be served by some vehicle on a route of its own (the exact
// enumeration of test/vrpbrute says so), so that a plan leaving one out
// is the fleet's limit (the priority set's, on purpose) or the solver's
// doing, never an order no plan can serve.
func TestFeatureSetsServeEveryOrderAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("enumerates every order of every feature instance")
	}
	for _, set := range instances.All() {
		if !set.Features {
			continue
		}
		for _, base := range FeatureBases {
			_, _, p := featureProblem(t, set.Name, base)
			for o := range p.Orders {
				sol, err := vrpbrute.Solve(alone(p, o))
				if err != nil {
					t.Fatal(err)
				}
				if len(sol.Unassigned) > 0 {
					t.Errorf("%s/%s: order %d cannot be served alone: %s", set.Name, base, o, sol.Unassigned[0].Reason)
				}
			}
		}
	}
}

// plainOverlay is c101 with a fleet of 100 and no feature: a run of it
// checks the runner on what the solver has always solved.
const plainOverlay = `{"format": "routeopt-features/1", "base": "solomon/c101", "feature": "none", "fleet": [{"count": 100}], "orders": {}}`

// TestRunFeatures: a feature set's run solves each overlay and its
// relaxation, checks both plans and writes a row that reads back; an
// overlay without a feature costs what its relaxation does.
func TestRunFeatures(t *testing.T) {
	cfg := Config{FS: fstest.MapFS{"c101.json": {Data: []byte(plainOverlay)}, "c102.json": {Data: []byte(plainOverlay)}},
		Source: "plain", Instances: []string{"c101"}, Seconds: 60, Iterations: 30, Threads: 1, Seed: 1, Relax: true}
	var out bytes.Buffer
	res, err := RunFeatures(context.Background(), cfg, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d rows, want 1 (c101 only)", len(res))
	}
	r := res[0]
	if !r.Feasible || !r.RelaxedFeasible || r.Err != "" || r.Served != 100 || r.RelaxedServed != 100 || r.Vehicles != 100 || r.Customers != 100 ||
		r.Feature != "none" || r.Cost < 8273 || r.GapPct != 0 {
		t.Fatalf("row %+v", r)
	}
	back, err := ReadFeatureResults(&out)
	if err != nil || len(back) != 1 {
		t.Fatalf("read back %v, %v", back, err)
	}
	r.Seconds, back[0].Seconds = 0, 0 // two decimals in the file
	if back[0] != r {
		t.Fatalf("read back %+v, want %+v", back[0], r)
	}
	var sum bytes.Buffer
	if err := WriteFeatureSummary(&sum, res); err != nil {
		t.Fatal(err)
	}
	if want := "none              1          0    100.00            100.00         0.00"; !strings.Contains(sum.String(), want) {
		t.Fatalf("summary\n%s\nwant a line %q", sum.String(), want)
	}
	for _, bad := range []fstest.MapFS{
		{"c101.json": {Data: []byte(strings.Replace(plainOverlay, "solomon/c101", "solomon/c999", 1))}},
		{"c101.json": {Data: []byte(strings.Replace(plainOverlay, "solomon/c101", "nowhere/c101", 1))}},
		{"c101.json": {Data: []byte(`{`)}},
	} {
		if _, err := RunFeatures(context.Background(), Config{FS: bad, Source: "bad", Seconds: 1}, &out); err == nil || !strings.Contains(err.Error(), "bad: c101") {
			t.Errorf("error %v, want one naming the overlay", err)
		}
	}
}

// TestFeaturePlansChecked: a plan made without a feature breaks it, and
// the checker says how, for every feature a plan can break (a priority
// changes which plan is best, not which plans are valid).
func TestFeaturePlansChecked(t *testing.T) {
	want := map[string]string{
		"breaks":   "plans 0 breaks, the vehicle must take 1",
		"windows":  "after its window",
		"skills":   "which the vehicle lacks",
		"loads":    "reports 0 loads for 2 dimensions",
		"duration": "above its limit of 6180 s",
		"startend": "the matrices say",
	}
	_, in, _ := featureProblem(t, "breaks", "solomon/c101")
	plain := in.Problem()
	sol, err := vrp.Solve(context.Background(), plain, vrp.Options{MaxIterations: 30, TimeLimit: time.Minute, Threads: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// the last vehicles, which start elsewhere in the startend set
	for i := range sol.Routes {
		sol.Routes[i].Vehicle = len(plain.Vehicles) - len(sol.Routes) + i
	}
	for set, msg := range want {
		_, _, p := featureProblem(t, set, "solomon/c101")
		_, err := CheckSolution(p, sol, CheckOptions{})
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want one saying %q", set, err, msg)
		}
	}
	if _, err := CheckSolution(plain, sol, CheckOptions{}); err != nil {
		t.Fatalf("the plan breaks the plain instance: %v", err)
	}
}

func TestFirstViolation(t *testing.T) {
	for in, want := range map[string]string{
		"a":       "a",
		"a\nb":    "a (and 1 more lines)",
		"a\nb\nc": "a (and 2 more lines)",
	} {
		if got := FirstViolation(in); got != want {
			t.Errorf("FirstViolation(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsFeatureSet(t *testing.T) {
	if IsFeatureSet(fstest.MapFS{"c101.txt": {}, "bks.csv": {}}) || !IsFeatureSet(fstest.MapFS{"c101.json": {}}) {
		t.Error("a folder of instance files taken for a feature set, or the other way round")
	}
}

func TestReadFeatureResultsErrors(t *testing.T) {
	head := strings.Join(FeatureHeader, ",") + "\n"
	for _, text := range []string{"", "a,b\n", head + "c101,x,100,1,1,1,0,1,0.1,maybe,,,,,\n", head + "c101,x,100,1,1,1,0,1,0.1,true,1,0,x,true,\n"} {
		if _, err := ReadFeatureResults(strings.NewReader(text)); err == nil {
			t.Errorf("ReadFeatureResults(%q) succeeded", text)
		}
	}
	res, err := ReadFeatureResults(strings.NewReader(head + "c101,x,100,5,5,90,0,1000,0.10,false,,,,,\n"))
	if err != nil || len(res) != 1 || res[0].Feasible || res[0].Relaxed || !math.IsNaN(res[0].GapPct) || res[0].Err == "" {
		t.Fatalf("ReadFeatureResults = %+v, %v", res, err)
	}
	if s := SummarizeFeatures(res); len(s) != 1 || s[0].Infeasible != 1 || !math.IsNaN(s[0].ServedPct) || !slices.Equal([]string{s[0].Feature}, []string{"x"}) {
		t.Fatalf("summary %+v", s)
	}
}
