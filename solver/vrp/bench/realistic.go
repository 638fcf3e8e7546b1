package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"routeopt.io/routeopt/solver/vrp"
	"routeopt.io/routeopt/solver/vrp/internal/ablation"
)

// Realistic builds the 500-order city problem: a 25 km x 25 km
// city with the depot off-centre, road distance 1.3 x Euclidean at 30 km/h,
// 40 % of the orders with a 2 h window, 20 % with a 4 h window, the rest
// open; 20 vehicles of three kinds (capacity, shift and fixed cost differ).
func Realistic(seed uint64) *vrp.Problem {
	const n, side = 500, 25000.0
	rng := rand.New(rand.NewPCG(seed, 11))
	xs, ys := make([]float64, n+1), make([]float64, n+1)
	xs[0], ys[0] = 0.4*side, 0.55*side
	centres := [][2]float64{{0.3, 0.3}, {0.7, 0.4}, {0.5, 0.75}, {0.2, 0.8}}
	for i := 1; i <= n; i++ {
		if rng.Float64() < 0.5 { // neighbourhoods
			c := centres[rng.IntN(len(centres))]
			xs[i] = side * (c[0] + 0.06*rng.NormFloat64())
			ys[i] = side * (c[1] + 0.06*rng.NormFloat64())
		} else {
			xs[i], ys[i] = side*rng.Float64(), side*rng.Float64()
		}
	}
	p := &vrp.Problem{Objective: vrp.ObjectiveDistance}
	p.Distance = make([][]int, n+1)
	p.Duration = make([][]int, n+1)
	for i := range n + 1 {
		p.Distance[i] = make([]int, n+1)
		p.Duration[i] = make([]int, n+1)
		for j := range n + 1 {
			d := 1.3 * math.Hypot(xs[i]-xs[j], ys[i]-ys[j])
			p.Distance[i][j] = int(math.Round(d))
			p.Duration[i][j] = int(math.Round(d / (30 / 3.6)))
		}
	}
	for range n {
		o := vrp.Order{Demand: float64(1 + rng.IntN(10)), ServiceS: 180 + 60*rng.IntN(8), WindowEnd: vrp.NoWindowEnd}
		switch x := rng.Float64(); {
		case x < 0.4:
			o.WindowStart = (8 + rng.IntN(8)) * 3600
			o.WindowEnd = o.WindowStart + 2*3600
		case x < 0.6:
			o.WindowStart = (8 + 5*rng.IntN(2)) * 3600
			o.WindowEnd = o.WindowStart + 4*3600
		}
		p.Orders = append(p.Orders, o)
	}
	kinds := []vrp.Vehicle{
		{Capacity: 120, ShiftStart: 7 * 3600, ShiftEnd: 16 * 3600, FixedCost: 5000},
		{Capacity: 180, ShiftStart: 8 * 3600, ShiftEnd: 18 * 3600, FixedCost: 8000},
		{Capacity: 250, ShiftStart: 10 * 3600, ShiftEnd: 20 * 3600, FixedCost: 12000},
	}
	for v := range 20 {
		p.Vehicles = append(p.Vehicles, kinds[v%len(kinds)])
	}
	return p
}

// peakMemory samples the Go runtime's memory while f runs and returns the
// peak of the memory obtained from the OS (Sys) and of the live heap.
func peakMemory(f func()) (sys, heap uint64) {
	var mu sync.Mutex
	done := make(chan struct{})
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		mu.Lock()
		sys, heap = max(sys, ms.Sys), max(heap, ms.HeapAlloc)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	sample()
	return sys, heap
}

// RunRealistic solves Realistic(1), or RealisticFleet(1) with fleet:
// first with a 1 ms limit, which returns the construction (the time to a
// first feasible plan), then with the full limit, and prints the figures
// against the baseline with the peak memory.
// The baseline leaves orders unplanned when shifts run out, so the saving is
// also given per served order. Both solves run with the pieces off turned
// off (see ParseAblation).
func RunRealistic(ctx context.Context, w io.Writer, fleet bool, seconds float64, threads int, seed int64, off ablation.Switches) error {
	p, what := Realistic(1), "realistic 500 orders, 20 vehicles (3 kinds)"
	if fleet {
		p, what = RealisticFleet(1), "realistic 500 orders, 20 vehicles (3 kinds), every fleet constraint on"
	}
	base, err := vrp.Baseline(p)
	if err != nil {
		return err
	}
	served := func(s *vrp.Solution) int { return len(p.Orders) - len(s.Unassigned) }
	distance := func(s *vrp.Solution) int {
		d := 0
		for _, r := range s.Routes {
			d += r.Distance
		}
		return d
	}
	late := func(s *vrp.Solution) int {
		k := 0
		for _, r := range s.Routes {
			for _, st := range r.Stops {
				if st.Late > 0 {
					k++
				}
			}
		}
		return k
	}
	t0, c0 := time.Now(), cpuTime()
	first, err := vrp.Solve(ctx, p, vrp.Options{TimeLimit: time.Millisecond, Seed: seed, Threads: 1, Ablation: off})
	if err != nil {
		return err
	}
	firstT, firstCPU := time.Since(t0), cpuTime()-c0
	var sol *vrp.Solution
	var elapsed time.Duration
	sys, heap := peakMemory(func() {
		t := time.Now()
		sol, err = vrp.Solve(ctx, p, vrp.Options{TimeLimit: time.Duration(seconds * float64(time.Second)), Seed: seed, Threads: threads, Ablation: off})
		elapsed = time.Since(t)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, what)
	fmt.Fprintf(w, "baseline:   served %d, routes %d, distance %d m, late stops %d\n", served(base), len(base.Routes), distance(base), late(base))
	fmt.Fprintf(w, "first plan: served %d, routes %d, distance %d m, cost %.0f, in %v (CPU %v)\n", served(first), len(first.Routes), distance(first), first.Cost,
		firstT.Round(time.Millisecond), firstCPU.Round(time.Millisecond))
	fmt.Fprintf(w, "%-11s served %d, routes %d, distance %d m, cost %.0f, in %v\n", fmt.Sprintf("%gs:", seconds), served(sol), len(sol.Routes), distance(sol), sol.Cost, elapsed.Round(time.Millisecond))
	if d := distance(base); d > 0 && served(base) > 0 && served(sol) > 0 {
		perBase, perSol := float64(d)/float64(served(base)), float64(distance(sol))/float64(served(sol))
		fmt.Fprintf(w, "saving vs baseline: %.1f %% total distance, %.1f %% distance per served order (%.0f vs %.0f m)\n",
			100*float64(d-distance(sol))/float64(d), 100*(perBase-perSol)/perBase, perSol, perBase)
	}
	fmt.Fprintf(w, "peak memory: runtime Sys %.1f MB, live heap %.1f MB\n", float64(sys)/1e6, float64(heap)/1e6)
	return nil
}
