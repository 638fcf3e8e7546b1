package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"routeopt.io/routeopt/solver/vrp/bench"
	"routeopt.io/routeopt/solver/vrp/bench/instances"
)

// newBenchCommand is `routeopt bench`: the solver on a set of Solomon /
// Gehring–Homberger instances (embedded, or a folder) under the DIMACS
// convention, every solution checked independently and compared with
// bks.csv; or on a feature set, each plan checked against every rule of
// the fleet model and compared with the plan of the instance without its
// feature.
func newBenchCommand() *cobra.Command {
	var cfg bench.Config
	var set, dir, instanceGlobs, out string
	var realistic, fleet bool
	var summarize, ablate, cpuProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the solver on VRPTW instances (DIMACS convention) and on feature sets of real fleets",
		Long: `Solves every instance of a benchmark set (files *.txt, optionally filtered by
--instances, comma-separated globs on the name without .txt) under the DIMACS
convention (distance = time = floor(10 x Euclidean), times x 10, distance only,
fleet not binding), checks each solution with an independent checker and prints
a CSV row per instance, then a summary per class (gaps against the dimacs_int10
rows of the set's bks.csv). The binary carries these sets; --set picks one:

` + setList() + `
A feature set is a folder of overlays (*.json), each adding one feature of real
fleets (breaks, several windows, skills, ...) to a Solomon or Gehring–Homberger
instance; its rows give the served orders, their total priority and the cost of
each plan, checked against every rule of the problem, and with --relax also the
plan of the same instance without the feature and the gap to it.
--dir reads a folder of files in either format instead, with its bks.csv if
there is one. With --summarize it only prints the joint summary of CSV files
written before (for example by two processes that each ran half of a set).
With --realistic it solves the 500-order city problem instead (with --fleet,
with every fleet constraint on) and reports the time to the first plan, the
distance saving against the baseline and the peak memory. With --ablate it
turns pieces of the solver off, for the ablation table of docs/PERFORMANCE.md:

` + bench.AblationPieces(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if summarize != "" {
				return summarizeFiles(cmd.OutOrStdout(), strings.Split(summarize, ","))
			}
			var off []string
			for _, p := range strings.Split(ablate, ",") {
				if p = strings.TrimSpace(p); p != "" {
					off = append(off, p)
				}
			}
			var err error
			if cfg.Ablation, err = bench.ParseAblation(off); err != nil {
				return fmt.Errorf("--ablate: %w", err)
			}
			if cfg.Iterations < 0 {
				return errors.New("--iterations must be >= 0")
			}
			if realistic && cfg.Iterations > 0 {
				return errors.New("--iterations applies to instance sets, not --realistic")
			}
			flags := cmd.Flags()
			if fleet && !realistic {
				return errors.New("--fleet applies to --realistic")
			}
			if realistic && (flags.Changed("set") || flags.Changed("dir") || flags.Changed("instances") || cfg.Relax) {
				return errors.New("--set, --dir, --instances and --relax apply to instance sets, not --realistic")
			}
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			if realistic {
				return bench.RunRealistic(ctx, cmd.OutOrStdout(), fleet, cfg.Seconds, cfg.Threads, cfg.Seed, cfg.Ablation)
			}
			if cfg.Seconds <= 0 {
				return errors.New("--seconds must be > 0")
			}
			if cfg.FS, cfg.Source, err = benchSource(set, flags.Changed("set"), dir); err != nil {
				return err
			}
			features := bench.IsFeatureSet(cfg.FS)
			if cfg.Relax && !features {
				return fmt.Errorf("--relax applies to feature sets, and %s is not one", cfg.Source)
			}
			for _, p := range strings.Split(instanceGlobs, ",") {
				if p = strings.TrimSpace(p); p != "" {
					cfg.Instances = append(cfg.Instances, p)
				}
			}
			w := cmd.OutOrStdout()
			summary := cmd.ErrOrStderr()
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return err
				}
				defer f.Close()
				w, summary = f, cmd.OutOrStdout()
			}
			if features {
				return runFeatures(ctx, cfg, w, summary)
			}
			results, err := bench.Run(ctx, cfg, w)
			if len(results) > 0 {
				if serr := bench.WriteSummary(summary, results); serr != nil && err == nil {
					err = serr
				}
			}
			if err != nil {
				return err
			}
			for _, r := range results {
				if !r.Feasible {
					return fmt.Errorf("%s: infeasible solution: %s", r.Instance, r.Err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&cfg.Seconds, "seconds", 10, "time limit per instance, seconds")
	f.IntVar(&cfg.Threads, "threads", 1, "solver threads per instance (0 = all cores)")
	f.Int64Var(&cfg.Seed, "seed", 1, "random seed")
	f.StringVar(&set, "set", instances.Default, "the embedded benchmark set to run (listed above)")
	f.StringVar(&dir, "dir", "", "a folder of instance files (*.txt) and optionally bks.csv, run instead of an embedded set")
	f.StringVar(&instanceGlobs, "instances", "", "comma-separated globs of instance names (c1*,r101); empty = all")
	f.StringVar(&out, "out", "", "CSV output file (default stdout; the summary then goes to stderr)")
	f.BoolVar(&cfg.CPUTime, "cpu-time", false, "count --seconds in process CPU time (all threads together), not wall-clock: for a busy machine")
	f.StringVar(&summarize, "summarize", "", "comma-separated CSV files of earlier runs: print their joint summary and exit")
	f.BoolVar(&realistic, "realistic", false, "run the 500-order city problem instead of an instance set")
	f.BoolVar(&fleet, "fleet", false, "with --realistic: every fleet constraint on (breaks, several windows, skills, weight and volume, route limits, priorities, other starts and ends)")
	f.IntVar(&cfg.Iterations, "iterations", 0, "stop each instance after this many iterations of the search, or at --seconds if that comes first: a fixed amount of work, reproducible with --seed (0 = no limit)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (pprof format, for go tool pprof)")
	f.StringVar(&ablate, "ablate", "", "comma-separated pieces of the solver to turn off (listed above); empty = the full solver")
	f.BoolVar(&cfg.Relax, "relax", false, "with a feature set, also solve each instance without its feature and report the gap to it (twice the time)")
	return cmd
}

// runFeatures runs a feature set: a CSV row per instance to w, the
// summary to summary, and an error when a plan breaks a rule.
func runFeatures(ctx context.Context, cfg bench.Config, w, summary io.Writer) error {
	results, err := bench.RunFeatures(ctx, cfg, w)
	if len(results) > 0 {
		if serr := bench.WriteFeatureSummary(summary, results); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		if !r.Feasible || r.Relaxed && !r.RelaxedFeasible {
			return fmt.Errorf("%s/%s: infeasible plan: %s", r.Feature, r.Instance, bench.FirstViolation(r.Err))
		}
	}
	return nil
}

// setList is the embedded sets for --help, one per line.
func setList() string {
	var b strings.Builder
	for _, s := range instances.All() {
		fmt.Fprintf(&b, "  %-14s %s\n", s.Name, s.About)
	}
	return b.String()
}

// benchSource resolves --set and --dir to the files to run and the name
// that messages give them: the folder when dir is set, else the embedded
// set.
func benchSource(set string, setChanged bool, dir string) (fs.FS, string, error) {
	if dir == "" {
		fsys, err := instances.Open(set)
		if err != nil {
			return nil, "", fmt.Errorf("--set: %w", err)
		}
		return fsys, set, nil
	}
	if setChanged {
		return nil, "", errors.New("--set and --dir both name the instances: give one")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, "", fmt.Errorf("--dir: %w", err)
	}
	if !st.IsDir() {
		return nil, "", fmt.Errorf("--dir: %s is not a folder", dir)
	}
	return os.DirFS(dir), dir, nil
}

// startCPUProfile profiles the process into path until the returned stop
// is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close() // the profile failed already; nothing was written
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "--cpuprofile: the profile may be incomplete: %v\n", err)
		}
	}, nil
}

// summarizeFiles prints the joint summary of CSV files written by bench:
// of instance sets, of feature sets, or of both, each kind in its table.
func summarizeFiles(w io.Writer, files []string) error {
	var all []bench.Result
	var features []bench.FeatureResult
	for _, name := range files {
		data, err := os.ReadFile(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		if strings.HasPrefix(string(data), strings.Join(bench.FeatureHeader, ",")+"\n") {
			res, err := bench.ReadFeatureResults(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			features = append(features, res...)
			continue
		}
		res, err := bench.ReadResults(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all = append(all, res...)
	}
	if len(all) > 0 || len(features) == 0 {
		if err := bench.WriteSummary(w, all); err != nil {
			return err
		}
	}
	if len(features) > 0 {
		return bench.WriteFeatureSummary(w, features)
	}
	return nil
}
