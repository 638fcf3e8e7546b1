package bench

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"routeopt.io/routeopt/solver/vrp"
	"routeopt.io/routeopt/solver/vrp/internal/ablation"
)

// BKSConvention is the bks.csv convention that matches Instance.Problem.
const BKSConvention = "dimacs_int10"

// LoadBKS reads the dimacs_int10 rows of the bks.csv name of fsys (instance
// -> distance in x10 units). A missing file yields an empty map.
func LoadBKS(fsys fs.FS, name string) (map[string]int, error) {
	f, err := fsys.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]int{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 {
		return map[string]int{}, nil
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	ci, okI := col["instance"]
	cd, okD := col["distance"]
	cc, okC := col["convention"]
	if !okI || !okD || !okC {
		return nil, fmt.Errorf("%s: want columns instance, distance and convention", name)
	}
	bks := map[string]int{}
	for n, r := range rows[1:] {
		if r[cc] != BKSConvention {
			continue
		}
		d, err := strconv.Atoi(r[cd])
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: distance %q is not an integer", name, n+2, r[cd])
		}
		bks[strings.ToLower(r[ci])] = d
	}
	return bks, nil
}

// Config says which instances to run and how.
type Config struct {
	// FS holds the instance files (*.txt) and optionally bks.csv at its
	// root: a set of package instances, or os.DirFS of a folder.
	FS fs.FS
	// Source names FS in messages: the set or the folder.
	Source    string
	Instances []string // glob patterns on the base name without .txt; none means all
	Seconds   float64  // time limit per instance
	Threads   int      // vrp.Options.Threads
	Seed      int64
	// Iterations caps each solve's iterations (vrp.Options.MaxIterations);
	// 0 means none.
	Iterations int
	// CPUTime makes Seconds a budget of process CPU time instead of
	// wall-clock time, so that other work on a shared machine does not
	// shorten the search. Run one instance at a time per process.
	CPUTime bool
	// Ablation turns pieces of the solver off (see ParseAblation); the
	// zero value is the full solver.
	Ablation ablation.Switches
	// Relax also solves each instance of a feature set with its feature
	// removed (Overlay.Relaxed), for the gap to it.
	Relax bool
}

// Result is one instance's row.
type Result struct {
	Instance  string
	Class     string
	Customers int
	Routes    int
	Distance  int     // recomputed by Check (x10 units); 0 when infeasible
	BKS       int     // 0 when unknown
	GapPct    float64 // NaN when BKS is unknown or the solution is infeasible
	Seconds   float64
	Feasible  bool
	Err       string // why the solution is infeasible
}

// Class is the instance class: the letters and the first digit of the name
// (c101 -> C1, rc2_2_1 -> RC2).
func Class(name string) string {
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) {
			b.WriteRune(unicode.ToUpper(r))
			continue
		}
		if unicode.IsDigit(r) {
			b.WriteRune(r)
		}
		break
	}
	return b.String()
}

// Files lists the instance files of cfg in name order.
func (cfg Config) Files() ([]string, error) { return cfg.files("instance", ".txt") }

// files lists the files of cfg named *ext (kind says what they are, in
// messages) whose names without ext match cfg.Instances, in name order.
func (cfg Config) files(kind, ext string) ([]string, error) {
	if cfg.FS == nil {
		return nil, errors.New("no instance files given: Config.FS is nil")
	}
	all, err := fs.Glob(cfg.FS, "*"+ext)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		name := strings.TrimSuffix(f, ext)
		keep := len(cfg.Instances) == 0
		for _, pat := range cfg.Instances {
			ok, err := path.Match(pat, name)
			if err != nil {
				return nil, fmt.Errorf("instance pattern %q: %w", pat, err)
			}
			keep = keep || ok
		}
		if keep {
			out = append(out, f)
		}
	}
	switch {
	case len(all) == 0:
		return nil, fmt.Errorf("no %s file (*%s) in %s", kind, ext, cfg.Source)
	case len(out) == 0:
		return nil, fmt.Errorf("no instance in %s matches %s", cfg.Source, strings.Join(cfg.Instances, ","))
	}
	slices.Sort(out)
	return out, nil
}

// Header is the CSV header of WriteRow.
var Header = []string{"instance", "customers", "routes", "distance", "bks", "gap_pct", "seconds", "feasible"}

// Row formats r for the CSV output.
func (r Result) Row() []string {
	bks, gap := "", ""
	if r.BKS > 0 {
		bks = strconv.Itoa(r.BKS)
	}
	if !math.IsNaN(r.GapPct) {
		gap = strconv.FormatFloat(r.GapPct, 'f', 3, 64)
	}
	return []string{r.Instance, strconv.Itoa(r.Customers), strconv.Itoa(r.Routes), strconv.Itoa(r.Distance),
		bks, gap, strconv.FormatFloat(r.Seconds, 'f', 2, 64), strconv.FormatBool(r.Feasible)}
}

// solve runs the solver on p as cfg says, and returns the plan and the
// seconds it took (of CPU time with cfg.CPUTime).
func (cfg Config) solve(ctx context.Context, p *vrp.Problem) (*vrp.Solution, float64, error) {
	opt := vrp.Options{
		TimeLimit: time.Duration(cfg.Seconds * float64(time.Second)),
		Seed:      cfg.Seed, Threads: cfg.Threads, MaxIterations: cfg.Iterations,
		Ablation: cfg.Ablation,
	}
	now := time.Now
	if cfg.CPUTime {
		now = CPUClock()
		opt.Now = now
	}
	t0 := now()
	sol, err := vrp.Solve(ctx, p, opt)
	return sol, now().Sub(t0).Seconds(), err
}

// RunOne solves the instance file of cfg.FS and checks the solution.
func RunOne(ctx context.Context, file string, cfg Config, bks map[string]int) (Result, error) {
	in, err := ParseFS(cfg.FS, file)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	name := strings.TrimSuffix(file, ".txt")
	res := Result{Instance: name, Class: Class(name), Customers: in.Customers(), BKS: bks[strings.ToLower(name)], GapPct: math.NaN()}
	sol, seconds, err := cfg.solve(ctx, in.Problem())
	res.Seconds = seconds
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	res.Routes = len(sol.Routes)
	dist, err := Check(in, Routes(sol))
	switch {
	case err != nil:
		res.Err = err.Error()
	case float64(dist) != sol.Cost:
		res.Err = fmt.Sprintf("solver reports cost %v, checker computes %d", sol.Cost, dist)
	default:
		res.Feasible, res.Distance = true, dist
		if res.BKS > 0 {
			res.GapPct = 100 * float64(dist-res.BKS) / float64(res.BKS)
		}
	}
	return res, nil
}

// Run solves every instance of cfg in turn, writing a CSV row to out as soon
// as each finishes (so a long run can be watched), and returns the results.
func Run(ctx context.Context, cfg Config, out io.Writer) ([]Result, error) {
	files, err := cfg.Files()
	if err != nil {
		return nil, err
	}
	bks, err := LoadBKS(cfg.FS, "bks.csv")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	w := csv.NewWriter(out)
	if err := w.Write(Header); err != nil {
		return nil, err
	}
	w.Flush()
	return runRows(ctx, files, w, func(f string) (Result, error) { return RunOne(ctx, f, cfg, bks) })
}

// runRows runs one on each file in turn and writes each result's row to
// w as it comes, so that a long run shows its progress; it stops at the
// first error or when ctx ends.
func runRows[R interface{ Row() []string }](ctx context.Context, files []string, w *csv.Writer, one func(string) (R, error)) ([]R, error) {
	var results []R
	for _, f := range files {
		if ctx.Err() != nil {
			return results, ctx.Err()
		}
		r, err := one(f)
		if err != nil {
			return results, err
		}
		results = append(results, r)
		if err := w.Write(r.Row()); err != nil {
			return results, err
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return results, err
		}
	}
	return results, nil
}

// ClassSummary aggregates the results of one class (or "all").
type ClassSummary struct {
	Class      string
	Instances  int
	Infeasible int
	WithBKS    int // feasible instances with a BKS, the ones in the gaps
	MeanGapPct float64
	WorstGap   float64
	WorstOf    string
}

// Summarize groups results by class, in name order, followed by "all".
func Summarize(results []Result) []ClassSummary {
	by := map[string]*ClassSummary{}
	var order []string
	all := &ClassSummary{Class: "all"}
	add := func(c *ClassSummary, r Result) {
		c.Instances++
		if !r.Feasible {
			c.Infeasible++
			return
		}
		if math.IsNaN(r.GapPct) {
			return
		}
		if c.WithBKS == 0 || r.GapPct > c.WorstGap {
			c.WorstGap, c.WorstOf = r.GapPct, r.Instance
		}
		c.WithBKS++
		c.MeanGapPct += r.GapPct
	}
	for _, r := range results {
		c, ok := by[r.Class]
		if !ok {
			c = &ClassSummary{Class: r.Class}
			by[r.Class] = c
			order = append(order, r.Class)
		}
		add(c, r)
		add(all, r)
	}
	slices.Sort(order)
	out := make([]ClassSummary, 0, len(order)+1)
	for _, k := range order {
		out = append(out, *by[k])
	}
	out = append(out, *all)
	for i := range out {
		if out[i].WithBKS > 0 {
			out[i].MeanGapPct /= float64(out[i].WithBKS)
		}
	}
	return out
}

// WriteSummary prints the per-class summary as an aligned table, and the
// reason of every infeasible solution.
func WriteSummary(w io.Writer, results []Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %9s %10s %12s %12s  %s\n", "class", "instances", "infeasible", "mean_gap_%", "worst_gap_%", "worst")
	for _, c := range Summarize(results) {
		mean, worst := "-", "-"
		if c.WithBKS > 0 {
			mean, worst = fmt.Sprintf("%.3f", c.MeanGapPct), fmt.Sprintf("%.3f", c.WorstGap)
		}
		fmt.Fprintf(&b, "%-6s %9d %10d %12s %12s  %s\n", c.Class, c.Instances, c.Infeasible, mean, worst, c.WorstOf)
	}
	for _, r := range results {
		if !r.Feasible {
			fmt.Fprintf(&b, "infeasible %s: %s\n", r.Instance, r.Err)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// readRows reads a CSV file of benchmark rows under header and returns
// the rows after it.
func readRows(r io.Reader, header []string) ([][]string, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || !slices.Equal(rows[0], header) {
		return nil, fmt.Errorf("want the header %v", header)
	}
	return rows[1:], nil
}

// ReadResults reads rows written by Run (for example the CSV files of two
// processes that ran halves of a folder), so that they can be summarised
// together.
func ReadResults(r io.Reader) ([]Result, error) {
	rows, err := readRows(r, Header)
	if err != nil {
		return nil, err
	}
	var out []Result
	for n, row := range rows {
		res := Result{Instance: row[0], Class: Class(row[0]), GapPct: math.NaN()}
		var errs []error
		atoi := func(s string) int {
			if s == "" {
				return 0
			}
			x, err := strconv.Atoi(s)
			errs = append(errs, err)
			return x
		}
		res.Customers, res.Routes, res.Distance, res.BKS = atoi(row[1]), atoi(row[2]), atoi(row[3]), atoi(row[4])
		if row[5] != "" {
			res.GapPct, err = strconv.ParseFloat(row[5], 64)
			errs = append(errs, err)
		}
		res.Seconds, err = strconv.ParseFloat(row[6], 64)
		errs = append(errs, err)
		res.Feasible, err = strconv.ParseBool(row[7])
		errs = append(errs, err)
		if !res.Feasible {
			res.Err = "reported infeasible"
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("row %d: %w", n+2, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// ParseAblation returns the switches that turn the named pieces of the
// solver off (see AblationPieces), for Config.Ablation and RunRealistic;
// none is the full solver.
func ParseAblation(off []string) (ablation.Switches, error) { return ablation.Parse(off) }

// AblationPieces lists the pieces ParseAblation knows, with what turning
// each off means, one per line.
func AblationPieces() string { return ablation.Help() }
