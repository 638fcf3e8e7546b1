package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"routeopt.io/routeopt/solver/vrp/bench/instances"
)

// IsFeatureSet reports whether fsys holds a feature set: overlay files
// (*.json) rather than Solomon-format instances.
func IsFeatureSet(fsys fs.FS) bool {
	m, err := fs.Glob(fsys, "*.json")
	return err == nil && len(m) > 0
}

// FeatureResult is one row of a feature set's run: the plan of the
// instance with its feature, checked by CheckSolution, and with
// Config.Relax the plan of the same instance without it.
type FeatureResult struct {
	Instance  string
	Feature   string
	Customers int
	Vehicles  int
	Routes    int
	Served    int
	Priority  int // total priority of the served orders
	Cost      float64
	Seconds   float64
	Feasible  bool
	Err       string // why a plan is infeasible

	Relaxed         bool // the relaxed instance was run
	RelaxedServed   int
	RelaxedPriority int // of its served orders, as the feature instance sets them
	RelaxedCost     float64
	RelaxedFeasible bool
	// GapPct is the cost above the relaxed plan's, in percent, when both
	// plans are feasible and serve as many orders; NaN otherwise.
	GapPct float64
}

// FeatureHeader is the CSV header of a feature set's rows.
var FeatureHeader = []string{"instance", "feature", "customers", "vehicles", "routes", "served", "priority", "cost", "seconds", "feasible",
	"relaxed_served", "relaxed_priority", "relaxed_cost", "relaxed_feasible", "gap_pct"}

// Row formats r for the CSV output; the relaxed columns are empty when
// the relaxed instance was not run.
func (r FeatureResult) Row() []string {
	row := []string{r.Instance, r.Feature, strconv.Itoa(r.Customers), strconv.Itoa(r.Vehicles), strconv.Itoa(r.Routes),
		strconv.Itoa(r.Served), strconv.Itoa(r.Priority), strconv.FormatFloat(r.Cost, 'f', -1, 64),
		strconv.FormatFloat(r.Seconds, 'f', 2, 64), strconv.FormatBool(r.Feasible), "", "", "", "", ""}
	if r.Relaxed {
		row[10], row[11] = strconv.Itoa(r.RelaxedServed), strconv.Itoa(r.RelaxedPriority)
		row[12], row[13] = strconv.FormatFloat(r.RelaxedCost, 'f', -1, 64), strconv.FormatBool(r.RelaxedFeasible)
	}
	if !math.IsNaN(r.GapPct) {
		row[14] = strconv.FormatFloat(r.GapPct, 'f', 3, 64)
	}
	return row
}

// RunFeatureOne solves the overlay file of cfg.FS on its base instance
// (from the embedded sets), checks the plan with CheckSolution, and with
// cfg.Relax does the same for the relaxed instance.
func RunFeatureOne(ctx context.Context, file string, cfg Config) (FeatureResult, error) {
	name := strings.TrimSuffix(file, ".json")
	res := FeatureResult{Instance: name, GapPct: math.NaN()}
	fail := func(err error) (FeatureResult, error) { return res, fmt.Errorf("%s: %s: %w", cfg.Source, name, err) }
	f, err := cfg.FS.Open(file)
	if err != nil {
		return fail(err)
	}
	o, err := ParseOverlay(f)
	_ = f.Close() // read only: everything was read or err says why
	if err != nil {
		return fail(err)
	}
	set, base, _ := strings.Cut(o.Base, "/")
	bfs, err := instances.Open(set)
	if err != nil {
		return fail(err)
	}
	in, err := ParseFS(bfs, base+".txt")
	if err != nil {
		return fail(err)
	}
	p, err := o.Problem(in)
	if err != nil {
		return fail(err)
	}
	res.Feature, res.Customers, res.Vehicles = o.Feature, in.Customers(), len(p.Vehicles)
	sol, seconds, err := cfg.solve(ctx, p)
	res.Seconds = seconds
	if err != nil {
		return fail(err)
	}
	rep, err := CheckSolution(p, sol, CheckOptions{})
	res.Routes, res.Served, res.Priority, res.Cost = rep.Routes, rep.Served, rep.Priority, rep.Cost
	if err != nil {
		res.Err = err.Error()
	} else {
		res.Feasible = true
	}
	if !cfg.Relax {
		return res, nil
	}
	rp, err := o.Relaxed().Problem(in)
	if err != nil {
		return fail(err)
	}
	rsol, _, err := cfg.solve(ctx, rp)
	if err != nil {
		return fail(err)
	}
	rrep, err := CheckSolution(rp, rsol, CheckOptions{})
	res.Relaxed, res.RelaxedServed, res.RelaxedCost = true, rrep.Served, rrep.Cost
	for _, r := range rsol.Routes {
		for _, st := range r.Stops {
			if st.Order >= 0 && st.Order < len(p.Orders) {
				res.RelaxedPriority += p.Orders[st.Order].Priority
			}
		}
	}
	if err != nil {
		res.Err = strings.TrimPrefix(res.Err+"; ", "; ") + "relaxed: " + err.Error()
	} else {
		res.RelaxedFeasible = true
	}
	if res.Feasible && res.RelaxedFeasible && res.Served == res.RelaxedServed && res.RelaxedCost > 0 {
		res.GapPct = 100 * (res.Cost - res.RelaxedCost) / res.RelaxedCost
	}
	return res, nil
}

// RunFeatures solves every overlay of cfg in turn, writing a CSV row to
// out as soon as each finishes, and returns the results.
func RunFeatures(ctx context.Context, cfg Config, out io.Writer) ([]FeatureResult, error) {
	files, err := cfg.files("overlay", ".json")
	if err != nil {
		return nil, err
	}
	w := csv.NewWriter(out)
	if err := w.Write(FeatureHeader); err != nil {
		return nil, err
	}
	w.Flush()
	return runRows(ctx, files, w, func(f string) (FeatureResult, error) { return RunFeatureOne(ctx, f, cfg) })
}

// FeatureSummary aggregates the rows of one feature.
type FeatureSummary struct {
	Feature    string
	Instances  int
	Infeasible int
	ServedPct  float64 // served orders of all customers, feasible rows
	// With the relaxed runs: the relaxed plans' share, the mean gap over
	// the rows that have one, and how many do.
	RelaxedServedPct float64
	WithGap          int
	MeanGapPct       float64
}

// SummarizeFeatures groups rows by feature, in name order.
func SummarizeFeatures(results []FeatureResult) []FeatureSummary {
	by := map[string]*FeatureSummary{}
	var order []string
	served, customers, relaxed, relaxedCustomers := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	for _, r := range results {
		s, ok := by[r.Feature]
		if !ok {
			s = &FeatureSummary{Feature: r.Feature, RelaxedServedPct: math.NaN()}
			by[r.Feature] = s
			order = append(order, r.Feature)
		}
		s.Instances++
		if !r.Feasible {
			s.Infeasible++
		} else {
			served[r.Feature] += r.Served
			customers[r.Feature] += r.Customers
		}
		if r.Relaxed && r.RelaxedFeasible {
			relaxed[r.Feature] += r.RelaxedServed
			relaxedCustomers[r.Feature] += r.Customers
		}
		if !math.IsNaN(r.GapPct) {
			s.WithGap++
			s.MeanGapPct += r.GapPct
		}
	}
	slices.Sort(order)
	out := make([]FeatureSummary, 0, len(order))
	for _, f := range order {
		s := *by[f]
		s.ServedPct = percent(served[f], customers[f])
		if relaxedCustomers[f] > 0 {
			s.RelaxedServedPct = percent(relaxed[f], relaxedCustomers[f])
		}
		if s.WithGap > 0 {
			s.MeanGapPct /= float64(s.WithGap)
		}
		out = append(out, s)
	}
	return out
}

func percent(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return 100 * float64(a) / float64(b)
}

// WriteFeatureSummary prints the summary per feature as an aligned table,
// and why every infeasible plan is.
func WriteFeatureSummary(w io.Writer, results []FeatureResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %9s %10s %9s %17s %12s\n", "feature", "instances", "infeasible", "served_%", "relaxed_served_%", "mean_gap_%")
	pct := func(x float64, ok bool) string {
		if !ok || math.IsNaN(x) {
			return "-"
		}
		return fmt.Sprintf("%.2f", x)
	}
	for _, s := range SummarizeFeatures(results) {
		fmt.Fprintf(&b, "%-9s %9d %10d %9s %17s %12s\n", s.Feature, s.Instances, s.Infeasible, pct(s.ServedPct, true),
			pct(s.RelaxedServedPct, true), pct(s.MeanGapPct, s.WithGap > 0))
	}
	for _, r := range results {
		if r.Err != "" {
			fmt.Fprintf(&b, "infeasible %s/%s: %s\n", r.Feature, r.Instance, FirstViolation(r.Err))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FirstViolation shortens the violations CheckSolution lists, one a line,
// to the first and how many more there are.
func FirstViolation(err string) string {
	first, rest, more := strings.Cut(err, "\n")
	if !more {
		return first
	}
	return fmt.Sprintf("%s (and %d more lines)", first, strings.Count(rest, "\n")+1)
}

// ReadFeatureResults reads rows written by RunFeatures, so that the rows
// of several runs can be summarised together.
func ReadFeatureResults(r io.Reader) ([]FeatureResult, error) {
	rows, err := readRows(r, FeatureHeader)
	if err != nil {
		return nil, err
	}
	var out []FeatureResult
	for n, row := range rows {
		var errs []error
		atoi := func(s string) int {
			x, err := strconv.Atoi(s)
			errs = append(errs, err)
			return x
		}
		float := func(s string) float64 {
			x, err := strconv.ParseFloat(s, 64)
			errs = append(errs, err)
			return x
		}
		boolean := func(s string) bool {
			x, err := strconv.ParseBool(s)
			errs = append(errs, err)
			return x
		}
		res := FeatureResult{Instance: row[0], Feature: row[1], Customers: atoi(row[2]), Vehicles: atoi(row[3]), Routes: atoi(row[4]),
			Served: atoi(row[5]), Priority: atoi(row[6]), Cost: float(row[7]), Seconds: float(row[8]), Feasible: boolean(row[9]), GapPct: math.NaN()}
		if !res.Feasible {
			res.Err = "reported infeasible"
		}
		if row[10] != "" {
			res.Relaxed = true
			res.RelaxedServed, res.RelaxedPriority, res.RelaxedCost, res.RelaxedFeasible = atoi(row[10]), atoi(row[11]), float(row[12]), boolean(row[13])
		}
		if row[14] != "" {
			res.GapPct = float(row[14])
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("row %d: %w", n+2, err)
		}
		out = append(out, res)
	}
	return out, nil
}
