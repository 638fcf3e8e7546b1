package vrp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"routeopt.io/routeopt/solver/vrp/internal/ablation"
)

func served(sol *Solution) int {
	k := 0
	for _, r := range sol.Routes {
		k += len(r.Stops)
	}
	return k
}

// TestSolveMatchesBruteForce compares Solve with exhaustive search on tiny
// instances: the number of served orders, then the cost, must be optimal.
func TestSolveMatchesBruteForce(t *testing.T) {
	for i := range 60 {
		obj := Objective(i % 2)
		c := genConfig{
			orders: 4 + i%4, vehicles: 2 + i%2, side: 8000,
			windowShare: 0.7, capFactor: []float64{0.6, 0.9, 1.3}[i%3],
			objective: obj, fixedCost: []float64{0, 2000, 500}[i%3], hetero: i%4 >= 2,
			asymmetric: i%5 == 0,
		}
		p := genProblem(uint64(100+i), c)
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		for k := range p.Orders { // tighter windows make the order matter
			if o := &p.Orders[k]; o.WindowEnd != NoWindowEnd && rng.IntN(2) == 0 {
				o.WindowEnd = o.WindowStart + 1800
			}
		}
		engine := "genetic"
		var off []string
		if i%3 == 2 {
			engine, off = "chains", []string{"genetic"}
		}
		t.Run(fmt.Sprintf("%d_%s_n%d_m%d_%s", i, obj, c.orders, c.vehicles, engine), func(t *testing.T) {
			wantServed, wantCost := bruteForce(p)
			sol, err := Solve(context.Background(), p, ablated(t, Options{TimeLimit: 5 * time.Second, Seed: int64(i), MaxIterations: 3000}, off...))
			if err != nil {
				t.Fatal(err)
			}
			checkSolution(t, p, sol, false)
			if got := served(sol); got != wantServed || math.Abs(sol.Cost-wantCost) > 1e-6 {
				t.Errorf("served %d cost %.1f, optimum served %d cost %.1f", got, sol.Cost, wantServed, wantCost)
			}
		})
	}
}

// TestSolveRandomFeasibleAndDeterministic runs Solve on larger random
// instances: every plan passes the independent checker, and the same seed
// gives the same plan.
func TestSolveRandomFeasibleAndDeterministic(t *testing.T) {
	cases := []genConfig{
		{orders: 50, vehicles: 5, side: 15000, windowShare: 0.5, capFactor: 1.2, objective: ObjectiveDistance},
		{orders: 100, vehicles: 10, side: 20000, windowShare: 0.8, capFactor: 1.1, objective: ObjectiveDuration, fixedCost: 1800, hetero: true},
		{orders: 150, vehicles: 8, side: 25000, windowShare: 0.6, capFactor: 0.8, objective: ObjectiveDistance, fixedCost: 5000, asymmetric: true},
		{orders: 200, vehicles: 4, side: 20000, windowShare: 0.3, capFactor: 1.5, objective: ObjectiveDuration, hetero: true},
		// a larger plan for the genetic search (10 s is above its limit for
		// 320 orders, see hasGeneticBudget)
		{orders: 320, vehicles: 40, side: 25000, windowShare: 0.5, capFactor: 2, objective: ObjectiveDistance, fixedCost: 2000, hetero: true},
		// solved renumbered (localityMinOrders), by ruin-and-recreate, with
		// orders left out and a duration matrix apart from the distances
		{orders: 500, vehicles: 12, side: 30000, windowShare: 0.6, capFactor: 0.9, objective: ObjectiveDuration, fixedCost: 1200, hetero: true, asymmetric: true},
	}
	for i, c := range cases {
		p := genProblem(uint64(7+i), c)
		t.Run(fmt.Sprintf("n%d_m%d_%s", c.orders, c.vehicles, c.objective), func(t *testing.T) {
			if raceEnabled && c.orders > 200 {
				// Minutes under the detector for no concurrency the smaller
				// cases do not run; make test covers them.
				t.Skip("large plans are checked without the race detector")
			}
			a := solveTwice(t, p, raceBudget(Options{TimeLimit: 10 * time.Second, Seed: 42, MaxIterations: 400}))
			base, err := Baseline(p)
			if err != nil {
				t.Fatal(err)
			}
			checkSolution(t, p, base, true)
			// When the baseline happens to be on time everywhere it is a
			// feasible plan, and Solve must not be worse than it.
			if lateFree(base) && (served(a) < served(base) || served(a) == served(base) && a.Cost > base.Cost+1e-6) {
				t.Errorf("solve (served %d, cost %.0f) worse than an on-time baseline (served %d, cost %.0f)", served(a), a.Cost, served(base), base.Cost)
			}
			t.Logf("served %d/%d, cost %.0f, routes %d, unassigned %d; baseline served %d cost %.0f",
				served(a), c.orders, a.Cost, len(a.Routes), len(a.Unassigned), served(base), base.Cost)
		})
	}
}

func lateFree(sol *Solution) bool {
	for _, r := range sol.Routes {
		for _, s := range r.Stops {
			if s.Late > 0 {
				return false
			}
		}
	}
	return true
}

func TestSolveUnassignedReasons(t *testing.T) {
	day := func(h, m int) int { return h*3600 + m*60 }
	veh := func(capacity float64) Vehicle {
		return Vehicle{Capacity: capacity, ShiftStart: day(8, 0), ShiftEnd: day(18, 0)}
	}
	openOrder := func(demand float64) Order { return Order{Demand: demand, ServiceS: 300, WindowEnd: NoWindowEnd} }
	tests := []struct {
		name     string
		orders   []Order
		vehicles []Vehicle
		travel   int // seconds (and metres) between any two locations
		want     map[int]Reason
		contains map[int][]string
	}{
		{
			name:     "too large",
			orders:   []Order{openOrder(120), openOrder(10)},
			vehicles: []Vehicle{veh(100), veh(80)},
			travel:   600,
			want:     map[int]Reason{0: ReasonTooLarge},
			contains: map[int][]string{0: {"120", "100"}},
		},
		{
			name:     "window unreachable",
			orders:   []Order{{Demand: 1, ServiceS: 300, WindowStart: day(8, 0), WindowEnd: day(8, 30)}, openOrder(1)},
			vehicles: []Vehicle{veh(10)},
			travel:   3600,
			want:     map[int]Reason{0: ReasonWindowUnreachable},
			contains: map[int][]string{0: {"09:00", "08:00-08:30"}},
		},
		{
			name:     "window after shift",
			orders:   []Order{{Demand: 1, ServiceS: 300, WindowStart: day(17, 50), WindowEnd: day(19, 0)}},
			vehicles: []Vehicle{veh(10)},
			travel:   600,
			want:     map[int]Reason{0: ReasonWindowUnreachable},
			contains: map[int][]string{0: {"18:05", "18:00"}},
		},
		{
			name:     "too large for the only vehicle that is in time",
			orders:   []Order{{Demand: 50, ServiceS: 60, WindowStart: day(7, 0), WindowEnd: day(7, 30)}},
			vehicles: []Vehicle{veh(100), {Capacity: 10, ShiftStart: day(6, 0), ShiftEnd: day(12, 0)}},
			travel:   600,
			want:     map[int]Reason{0: ReasonWindowUnreachable},
		},
		{
			name:     "no capacity",
			orders:   []Order{openOrder(60), openOrder(60), openOrder(60)},
			vehicles: []Vehicle{veh(100), veh(110)},
			travel:   600,
			want:     map[int]Reason{-1: ReasonNoCapacity},
			contains: map[int][]string{-1: {"demand 60", "largest remaining 50", "90 remaining in total"}},
		},
		{
			name: "no time",
			orders: []Order{
				{Demand: 1, ServiceS: 1200, WindowStart: day(9, 0), WindowEnd: day(9, 0)},
				{Demand: 1, ServiceS: 1200, WindowStart: day(9, 0), WindowEnd: day(9, 0)},
			},
			vehicles: []Vehicle{veh(100)},
			travel:   600,
			want:     map[int]Reason{-1: ReasonNoTime},
			contains: map[int][]string{-1: {"window 09:00-09:00", "(vehicle 1)", "would start at 09:30, after its window end 09:00"}},
		},
		{
			name:     "float capacity fits",
			orders:   []Order{openOrder(0.1), openOrder(0.2)},
			vehicles: []Vehicle{veh(0.3)},
			travel:   600,
			want:     map[int]Reason{},
		},
		{
			name:     "tiny capacity takes one tiny order, not two",
			orders:   []Order{openOrder(1e-9), openOrder(1e-9)},
			vehicles: []Vehicle{veh(1e-9)},
			travel:   600,
			want:     map[int]Reason{-1: ReasonNoCapacity},
		},
		{
			name:     "large float capacity fits its exact sum",
			orders:   []Order{openOrder(1e6 + 0.1), openOrder(0.2)},
			vehicles: []Vehicle{veh(1e6 + 0.3)},
			travel:   600,
			want:     map[int]Reason{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := matrixProblem(tc.orders, tc.vehicles, func(i, j int) int { return tc.travel })
			sol, err := Solve(context.Background(), p, Options{TimeLimit: time.Second, MaxIterations: 200})
			if err != nil {
				t.Fatal(err)
			}
			checkSolution(t, p, sol, false)
			got := map[int]Unassigned{}
			for _, u := range sol.Unassigned {
				got[u.Order] = u
			}
			wantCount := len(tc.want)
			if len(sol.Unassigned) != wantCount {
				t.Fatalf("unassigned %+v, want %d", sol.Unassigned, wantCount)
			}
			for order, reason := range tc.want {
				u, ok := got[order]
				if order == -1 { // whichever order is left over
					u, ok = sol.Unassigned[0], true
				}
				if !ok || u.Reason != reason {
					t.Fatalf("order %d: got %+v, want reason %s", order, sol.Unassigned, reason)
				}
				for _, s := range tc.contains[order] {
					if !strings.Contains(u.Message, s) {
						t.Errorf("message %q does not mention %q", u.Message, s)
					}
				}
				t.Logf("%s: %s", u.Reason, u.Message)
			}
		})
	}
}

func TestSolveTimeLimit(t *testing.T) {
	p := genProblem(3, genConfig{orders: 300, vehicles: 20, side: 20000, windowShare: 0.5, capFactor: 1.2, objective: ObjectiveDistance})
	var calls []float64
	start := time.Now()
	sol, err := Solve(context.Background(), p, Options{TimeLimit: 300 * time.Millisecond, Seed: 1,
		Progress: func(f float64) { calls = append(calls, f) }})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	checkSolution(t, p, sol, false)
	if elapsed > 500*time.Millisecond {
		t.Errorf("took %v with a 300 ms limit", elapsed)
	}
	if len(calls) < 2 || calls[len(calls)-1] != 1 || len(calls) > 10 {
		t.Errorf("progress calls %v: want a few, ending with 1", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] < calls[i-1] || calls[i] < 0 || calls[i] > 1 {
			t.Errorf("progress not monotone in [0,1]: %v", calls)
		}
	}
}

func TestSolveCancel(t *testing.T) {
	p := genProblem(5, genConfig{orders: 200, vehicles: 15, side: 20000, windowShare: 0.5, capFactor: 1.2, objective: ObjectiveDuration})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	sol, err := Solve(ctx, p, Options{TimeLimit: time.Minute, Seed: 1})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	checkSolution(t, p, sol, false)
	if elapsed > 400*time.Millisecond {
		t.Errorf("returned %v after start, cancelled at 100 ms", elapsed)
	}
	if served(sol) == 0 {
		t.Error("cancelled solve returned an empty plan")
	}

	// Already cancelled: still a plan (construction always completes).
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	sol, err = Solve(ctx, p, Options{TimeLimit: time.Minute})
	if err != nil || sol == nil {
		t.Fatalf("cancelled before start: %v, %v", sol, err)
	}
	checkSolution(t, p, sol, false)
	if served(sol) == 0 {
		t.Error("cancelled before start: empty plan")
	}
}

func TestSolveEdgeCases(t *testing.T) {
	// No orders.
	p := matrixProblem(nil, []Vehicle{{Capacity: 1, ShiftEnd: 100}}, nil)
	sol, err := Solve(context.Background(), p, Options{})
	if err != nil || len(sol.Routes) != 0 || len(sol.Unassigned) != 0 || sol.Cost != 0 {
		t.Fatalf("empty problem: %+v, %v", sol, err)
	}
	// Invalid problem.
	if _, err := Solve(context.Background(), &Problem{}, Options{}); err == nil {
		t.Fatal("want an error for a problem without vehicles")
	}
	// Fixed costs: two vehicles, the cheap one must be used alone.
	p = matrixProblem([]Order{{Demand: 1, WindowEnd: NoWindowEnd}, {Demand: 1, WindowEnd: NoWindowEnd}},
		[]Vehicle{{Capacity: 5, ShiftEnd: 10000, FixedCost: 1000}, {Capacity: 5, ShiftEnd: 10000, FixedCost: 10}},
		func(i, j int) int { return 100 })
	sol, err = Solve(context.Background(), p, Options{MaxIterations: 3000})
	if err != nil {
		t.Fatal(err)
	}
	checkSolution(t, p, sol, false)
	if len(sol.Routes) != 1 || sol.Routes[0].Vehicle != 1 || sol.Cost != 310 {
		t.Errorf("want one route on vehicle 1 costing 310, got %+v", sol)
	}
}

func TestValidate(t *testing.T) {
	good := func() *Problem {
		return matrixProblem([]Order{{Demand: 1, WindowEnd: NoWindowEnd}}, []Vehicle{{Capacity: 1, ShiftEnd: 100}}, func(i, j int) int { return 1 })
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("valid problem: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(p *Problem)
		match string
	}{
		{"no vehicles", func(p *Problem) { p.Vehicles = nil }, "vehicle"},
		{"bad objective", func(p *Problem) { p.Objective = 7 }, "objective"},
		{"short matrix", func(p *Problem) { p.Distance = p.Distance[:1] }, "distance matrix has 1 rows"},
		{"ragged matrix", func(p *Problem) { p.Duration[1] = p.Duration[1][:1] }, "duration matrix row 1"},
		{"negative entry", func(p *Problem) { p.Distance[0][1] = -5 }, "distance[0][1]"},
		{"negative demand", func(p *Problem) { p.Orders[0].Demand = -1 }, "demand"},
		{"NaN demand", func(p *Problem) { p.Orders[0].Demand = math.NaN() }, "demand"},
		{"window reversed", func(p *Problem) { p.Orders[0].WindowStart, p.Orders[0].WindowEnd = 7200, 3600 }, "before window start 02:00"},
		{"negative service", func(p *Problem) { p.Orders[0].ServiceS = -1 }, "service"},
		{"zero capacity", func(p *Problem) { p.Vehicles[0].Capacity = 0 }, "capacity"},
		{"shift reversed", func(p *Problem) { p.Vehicles[0].ShiftStart = 200 }, "shift end"},
		{"negative fixed cost", func(p *Problem) { p.Vehicles[0].FixedCost = -1 }, "fixed cost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good()
			tc.edit(p)
			err := p.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.match) {
				t.Errorf("got %v, want an error mentioning %q", err, tc.match)
			}
		})
	}
	var nilP *Problem
	if nilP.Validate() == nil {
		t.Error("nil problem validated")
	}
}

// TestSolveInternalConsistency runs Solve with the solver's internal cache
// verification switched on: after construction, every local-search move and
// every ruin-and-recreate iteration, all cached segments, positions, costs
// and counts must equal a recomputation from scratch, and Schedule must agree
// that every route is feasible.
func TestSolveInternalConsistency(t *testing.T) {
	debugVerify = true
	defer func() { debugVerify = false }()
	cases := []genConfig{
		{orders: 60, vehicles: 6, side: 15000, windowShare: 0.7, capFactor: 0.9, objective: ObjectiveDistance, fixedCost: 1000, hetero: true},
		{orders: 80, vehicles: 3, side: 20000, windowShare: 0.5, capFactor: 1.5, objective: ObjectiveDuration, hetero: true, asymmetric: true},
		{orders: 40, vehicles: 10, side: 10000, windowShare: 0.9, capFactor: 2, objective: ObjectiveDuration, fixedCost: 300},
		// distance on an asymmetric matrix: ruin-and-recreate's lazy segments (solver.lazy)
		{orders: 70, vehicles: 5, side: 15000, windowShare: 0.8, capFactor: 1.1, objective: ObjectiveDistance, fixedCost: 500, asymmetric: true},
	}
	for i, c := range cases {
		p := genProblem(uint64(50+i), c)
		for _, off := range [][]string{nil, {"genetic"}} {
			t.Run(fmt.Sprint(i, off), func(t *testing.T) {
				sol, err := Solve(context.Background(), p, ablated(t, Options{TimeLimit: 10 * time.Second, Seed: int64(i), MaxIterations: 300}, off...))
				if err != nil {
					t.Fatal(err)
				}
				checkSolution(t, p, sol, false)
			})
		}
	}
}

// TestSolveThreads: parallel searches give feasible plans that are
// reproducible with MaxIterations (they exchange plans at iteration counts,
// not times), across an exchange between epochs, for both engines.
func TestSolveThreads(t *testing.T) {
	p := genProblem(11, genConfig{orders: 120, vehicles: 12, side: 20000, windowShare: 0.6, capFactor: 1.1, objective: ObjectiveDistance, fixedCost: 1000})
	for _, tc := range []struct {
		name  string
		off   []string
		iters int
	}{
		{"genetic", nil, defaultGeneticParams().exchangeEvery + 30},
		{"chains", []string{"genetic"}, epochIterations + 300},
	} {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprint(tc.name, threads), func(t *testing.T) {
				solveTwice(t, p, ablated(t, Options{TimeLimit: time.Minute, Seed: 3, MaxIterations: tc.iters, Threads: threads}, tc.off...))
			})
		}
	}
}

// TestSkippedPairsCannotImprove: the local search skips the pairs of orders
// it tested since their routes last changed, and in the genetic search's
// repair, whose prices are higher, also those whose routes are both free of
// time warp and excess load (pricesRose). Neither can skip an improving
// move, so re-testing every pair (the skip-tested ablation) must give the
// same plans at the same seed and iteration count.
func TestSkippedPairsCannotImprove(t *testing.T) {
	cases := []genConfig{
		// short routes: EAX and the changed-route search of children
		{orders: 80, vehicles: 12, side: 15000, windowShare: 0.8, capFactor: 1.1, objective: ObjectiveDistance},
		// long routes, duration objective, mixed fleet: the full search
		{orders: 120, vehicles: 4, side: 20000, windowShare: 0.5, capFactor: 3, objective: ObjectiveDuration, fixedCost: 900, hetero: true, asymmetric: true},
	}
	for i, c := range cases {
		p := genProblem(uint64(31+i), c)
		t.Run(fmt.Sprintf("n%d_m%d_%s", c.orders, c.vehicles, c.objective), func(t *testing.T) {
			opt := raceBudget(Options{TimeLimit: time.Minute, Seed: 5, MaxIterations: 300})
			skipping, err := Solve(context.Background(), p, opt)
			if err != nil {
				t.Fatal(err)
			}
			all, err := Solve(context.Background(), p, ablated(t, opt, "skip-tested"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(skipping, all) {
				t.Errorf("skipping tested pairs changed the plan: cost %v, re-testing all %v", skipping.Cost, all.Cost)
			}
		})
	}
}

// raceBudget is opt, or under the race detector opt with a tenth of its
// iterations and twenty times its time limit. A test that compares plans
// made with the same seed and iteration count holds only while every
// solve ends by its iteration count, not by its time limit, which the
// detector's slowdown (and a busy machine) made them reach. The property
// is the same at any count; fewer iterations keep make test-race short.
func raceBudget(opt Options) Options {
	if raceEnabled {
		opt.MaxIterations = max(opt.MaxIterations/10, 20)
		opt.TimeLimit *= 20
	}
	return opt
}

// solveTwice solves p twice with opt: both plans must pass the checker and
// be identical (same seed and MaxIterations). It returns the first.
func solveTwice(t *testing.T, p *Problem, opt Options) *Solution {
	t.Helper()
	a, err := Solve(context.Background(), p, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkSolution(t, p, a, false)
	b, err := Solve(context.Background(), p, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different plans: cost %v vs %v", a.Cost, b.Cost)
	}
	return a
}

// ablated is opt with the named pieces of the solver turned off.
func ablated(t testing.TB, opt Options, off ...string) Options {
	t.Helper()
	var err error
	if opt.Ablation, err = ablation.Parse(off); err != nil {
		t.Fatal(err)
	}
	return opt
}

// TestSolveClock: Options.Now drives the time limit. A clock that advances
// 10 ms per reading ends a 1 s budget after about 100 readings however
// fast the machine is.
func TestSolveClock(t *testing.T) {
	p := genProblem(9, genConfig{orders: 80, vehicles: 8, side: 20000, windowShare: 0.5, capFactor: 1.2, objective: ObjectiveDistance})
	base := time.Now()
	calls := 0
	now := func() time.Time {
		calls++
		return base.Add(time.Duration(calls) * 10 * time.Millisecond)
	}
	sol, err := Solve(context.Background(), p, Options{TimeLimit: time.Second, Seed: 1, Threads: 1, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	checkSolution(t, p, sol, false)
	if calls < 90 || calls > 110 {
		t.Errorf("clock read %d times, want about 100", calls)
	}
}

// TestBestInsertionExactWithoutTriangleInequality: the exhaustive insertion
// (the one that decides whether an order stays unplanned) must not stop at
// a position that reaches the order too late, because with a matrix that
// breaks the triangle inequality a later position can reach it in time:
// depot -> A -> u takes 210 s but depot -> A -> B -> u only 25 s.
func TestBestInsertionExactWithoutTriangleInequality(t *testing.T) {
	const A, B, U = 0, 1, 2 // orders; locations are +1
	leg := map[[2]int]int{
		{0, 1}: 10, {1, 2}: 10, {2, 3}: 5, {1, 3}: 200, {0, 3}: 50, {3, 1}: 500,
		{3, 0}: 50, {2, 0}: 20, {1, 0}: 10, {0, 2}: 20, {3, 2}: 500, {2, 1}: 10,
	}
	p := matrixProblem(
		[]Order{{WindowEnd: 100}, {WindowEnd: 1000}, {WindowEnd: 60}},
		[]Vehicle{{Capacity: 10, ShiftEnd: 10000}},
		func(i, j int) int { return leg[[2]int{i, j}] },
	)
	s := newSolver(context.Background(), p, Options{Threads: 1}, time.Now())
	st := s.newState()
	s.setSeq(st, 0, []int{A, B})
	if v, q, _ := s.bestInsertion(st, U, 0, false); v != 0 || q != 2 {
		t.Fatalf("exact insertion of u at vehicle %d position %d, want vehicle 0 position 2", v, q)
	}
}

// TestBestInsertionDeltaIsExact: the cost change bestInsertion reports is the
// change that inserting there makes, on asymmetric matrices (which it reads
// through the transposed rows of legsIn) with both objectives, in
// hard and soft mode.
func TestBestInsertionDeltaIsExact(t *testing.T) {
	for _, obj := range []Objective{ObjectiveDistance, ObjectiveDuration} {
		for _, soft := range []bool{false, true} {
			p := genProblem(5, genConfig{orders: 60, vehicles: 6, side: 15000, windowShare: 0.6, capFactor: 1.3, objective: obj, fixedCost: 500, hetero: true, asymmetric: true})
			s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 2}, time.Now())
			if isSymmetric(p.Distance) || &s.legsIn[0] == &s.legs[0] || s.legsIn[3*s.size+7] != s.legs[7*s.size+3] || s.legsIn[7*s.size+3][legDur] != int32(p.Duration[3][7]) {
				t.Fatal("the test needs an asymmetric matrix and its transpose")
			}
			s.soft, s.twPen, s.loadPen = soft, 3, 50
			st := s.newState()
			inserted := 0
			for u := range s.n {
				v, q, delta := s.bestInsertion(st, u, 0, u%2 == 0)
				if v < 0 {
					continue
				}
				before := st.cost
				s.insert(st, u, v, q)
				inserted++
				if got := st.cost - before; math.Abs(got-delta) > 1e-6 {
					t.Fatalf("objective %v soft %v: order %d at vehicle %d position %d changed the cost by %v, bestInsertion said %v", obj, soft, u, v, q, got, delta)
				}
			}
			if inserted < s.n/2 {
				t.Fatalf("objective %v soft %v: only %d of %d orders inserted", obj, soft, inserted, s.n)
			}
		}
	}
}

// TestWindowRangeKeepsFeasiblePositions: every position where an order fits
// without time warp lies in its windowRange, on a matrix with and without
// the triangle inequality, and the range does leave positions out (else
// the test would not show anything).
func TestWindowRangeKeepsFeasiblePositions(t *testing.T) {
	for _, broken := range []bool{false, true} {
		p := genProblem(9, genConfig{orders: 80, vehicles: 5, side: 15000, windowShare: 0.7, capFactor: 2, objective: ObjectiveDistance, hetero: true, asymmetric: true})
		if broken {
			breakTriangle(p, 3, 400)
		}
		s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
		st := s.newState()
		for u := range s.n / 2 {
			if v, q, _ := s.bestInsertion(st, u, 0, false); v >= 0 {
				s.insert(st, u, v, q)
			}
		}
		feasible, outside := 0, 0
		for u := s.n / 2; u < s.n; u++ {
			for v := range st.routes {
				r := &st.routes[v]
				lo, hi := windowRange(r, &s.single[u])
				for q := 0; q <= len(r.seq); q++ {
					x := s.merge(&r.pre[q], &s.single[u])
					full := s.merge(&x, &r.tail[q])
					if full.tw == 0 {
						feasible++
						if q < lo || q > hi {
							t.Fatalf("broken %v: order %d fits vehicle %d at position %d outside its window range %d..%d", broken, u, v, q, lo, hi)
						}
					} else if q < lo || q > hi {
						outside++
					}
				}
			}
		}
		if feasible == 0 || outside == 0 {
			t.Fatalf("broken %v: %d feasible positions, %d left out by the range: the test shows nothing", broken, feasible, outside)
		}
	}
}

// TestWindowRangeMatchesLinearScan: the branch-free searches of
// windowRange return what a scan of every position returns: hi the last
// position whose prefix ends by the window's close, lo the first one up to
// hi whose tail starts late enough, on random non-decreasing scans with
// the time-warp sentinels and on routes of 0 to 20 orders.
func TestWindowRangeMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 20000 {
		k := trial % 21
		r := &route{scan: make([]scanPos, k+1)}
		ee, ls := rng.IntN(50), rng.IntN(50)
		for i := range r.scan {
			ee += rng.IntN(20)
			ls += rng.IntN(20)
			r.scan[i].ee, r.scan[i].ls = ee, ls
		}
		// prefixes with time warp end the scan, tails with it start it
		if w := rng.IntN(k + 3); w <= k {
			for i := w; i <= k; i++ {
				r.scan[i].ee = noEnd
			}
		}
		if w := rng.IntN(k + 3); w <= k {
			for i := 0; i <= w; i++ {
				r.scan[i].ls = noStart
			}
		}
		su := &seg{e: rng.IntN(400), dur: rng.IntN(30)}
		su.l = su.e + rng.IntN(200)
		wantHi := -1
		for i, p := range r.scan {
			if p.ee <= su.l {
				wantHi = i
			}
		}
		wantLo := wantHi + 1
		for i := wantHi; i >= 0; i-- {
			if r.scan[i].ls >= su.e+su.dur {
				wantLo = i
			}
		}
		if wantHi < 0 {
			wantLo = 0
		}
		if lo, hi := windowRange(r, su); lo != wantLo || hi != wantHi {
			t.Fatalf("scan %+v, order %+v: range %d..%d, want %d..%d", r.scan, *su, lo, hi, wantLo, wantHi)
		}
	}
}

// TestFastInsertionMatchesSegments: in hard mode with the distance
// objective an insertion reads only route.scan, and ruin-and-recreate does
// not even keep the segments up to date (solver.lazy). The cheapest
// insertion it finds must cost what a brute force over every position of
// every route finds with segments, on matrices with and without the
// triangle inequality, and the position it returns must be feasible at
// that cost.
func TestFastInsertionMatchesSegments(t *testing.T) {
	for _, broken := range []bool{false, true} {
		p := genProblem(21, genConfig{orders: 90, vehicles: 6, side: 15000, windowShare: 0.7, capFactor: 1.3, objective: ObjectiveDistance, fixedCost: 700, hetero: true, asymmetric: true})
		if broken {
			breakTriangle(p, 5, 600)
		}
		s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
		st := s.newState()
		s.lazy = true
		for u := range s.n * 2 / 3 {
			if v, q, _ := s.bestInsertion(st, u, 0, false); v >= 0 {
				s.insert(st, u, v, q)
			}
		}
		s.lazy = false
		s.verify(st, "lazy insertions")
		stale := 0
		for v := range st.routes {
			if st.routes[v].stale {
				stale++
			}
		}
		if stale == 0 {
			t.Fatalf("broken %v: no route left stale: the lazy refresh was not exercised", broken)
		}
		found, late := 0, 0
		for u := s.n * 2 / 3; u < s.n; u++ {
			v, q, d := s.bestInsertion(st, u, 0, false)
			want := math.Inf(1)
			for w := range st.routes {
				r := s.fresh(st, w)
				if len(r.seq) == 0 {
					continue
				}
				for k := 0; k <= len(r.seq); k++ {
					x := s.merge(&r.pre[k], &s.single[u])
					full := s.merge(&x, &r.tail[k])
					if s.feasible(w, &full) {
						want = min(want, s.cost(w, &full)-r.cost)
					} else {
						late++
					}
				}
			}
			nt := len(s.types)
			for tp, c := range s.alone[u*nt : u*nt+nt] {
				if s.firstEmpty(st, tp) >= 0 {
					want = min(want, c)
				}
			}
			if v < 0 {
				t.Fatalf("broken %v: order %d: no insertion found, brute force costs %v", broken, u, want)
			}
			if d != want {
				t.Fatalf("broken %v: order %d: insertion costs %v, brute force %v", broken, u, d, want)
			}
			r := s.fresh(st, v)
			seq := append(append(append([]int{}, r.seq[:q]...), u), r.seq[q:]...)
			full := s.evalSeq(v, seq)
			if !s.feasible(v, &full) || s.cost(v, &full)-r.cost != d {
				t.Fatalf("broken %v: order %d at vehicle %d position %d: feasible %v, cost %v, want %v", broken, u, v, q, s.feasible(v, &full), s.cost(v, &full)-r.cost, d)
			}
			found++
		}
		s.verify(st, "fresh")
		if found == 0 || late == 0 {
			t.Fatalf("broken %v: %d orders inserted, %d infeasible positions: the test shows too little", broken, found, late)
		}
	}
}

// TestRecreateStopsOnlyWhenRejected: ruin-and-recreate gives up once the
// plan costs the annealing limit (recreate's stopAt), because on a matrix
// with the triangle inequality no later insertion lowers the cost. Twin
// solvers with the same seed ruin the same orders; one recreates with a
// limit, the other without. Where the first gives up, the second must end
// at the limit or above (or serve fewer orders); where it finishes, both
// plans must be the same.
func TestRecreateStopsOnlyWhenRejected(t *testing.T) {
	for _, obj := range []Objective{ObjectiveDistance, ObjectiveDuration} {
		p := genProblem(31, genConfig{orders: 60, vehicles: 8, side: 15000, windowShare: 0.7, capFactor: 1.4, objective: obj, fixedCost: 400, hetero: true, asymmetric: true})
		metricClosure(p)
		stopped, finished := 0, 0
		for seed := range int64(150) {
			var twins [2]*solver
			var states [2]*state
			for k := range twins {
				s := newSolver(context.Background(), p, Options{Threads: 1, Seed: seed}, time.Now())
				st := s.newState()
				s.construct(st)
				s.localSearch(st)
				if st.missing > 0 {
					t.Fatalf("%v seed %d: the first plan misses orders", obj, seed)
				}
				s.lazy = obj == ObjectiveDistance
				s.ruin(st, chainAvgRemoved)
				twins[k], states[k] = s, st
			}
			// A limit between the plan's cost after the ruin and a few
			// edges above it, so that both outcomes occur.
			limit := states[0].cost + float64(seed%10)*2000
			done := twins[0].recreate(states[0], limit)
			if !twins[1].recreate(states[1], math.Inf(1)) {
				t.Fatalf("%v seed %d: recreate without a limit gave up", obj, seed)
			}
			full := states[1]
			if !done {
				stopped++
				if full.missing == 0 && full.cost < limit {
					t.Fatalf("%v seed %d: gave up at limit %v, but the full recreate costs %v", obj, seed, limit, full.cost)
				}
				continue
			}
			finished++
			if states[0].cost != full.cost || states[0].missing != full.missing {
				t.Fatalf("%v seed %d: finished at %v (%d missing), the full recreate at %v (%d missing)", obj, seed, states[0].cost, states[0].missing, full.cost, full.missing)
			}
			for v := range full.routes {
				if !slices.Equal(states[0].routes[v].seq, full.routes[v].seq) {
					t.Fatalf("%v seed %d: route %d differs", obj, seed, v)
				}
			}
		}
		if stopped == 0 || finished == 0 {
			t.Fatalf("%v: %d recreates gave up and %d finished: both must be exercised", obj, stopped, finished)
		}
		t.Logf("%v: %d gave up, %d finished", obj, stopped, finished)
	}
}

// TestSplitToEmptyMendsLateRoute: in soft mode a route that is late after
// its first order is split when its time warp costs more than the second
// route's extra distance (no single-order move to an empty vehicle clears
// it), and is left alone when the time warp is cheap, when its tail is
// empty, and in hard mode.
func TestSplitToEmptyMendsLateRoute(t *testing.T) {
	// Depot at 0; order 0 at 100 must start at 100 and takes 50 s; orders
	// 1 and 2 at 110 and 115 close at 120 and 130. Together: 230 m and 40 s
	// of time warp at order 1; split after order 0: 430 m, on time.
	x := []int{0, 100, 110, 115}
	p := matrixProblem([]Order{
		{Demand: 1, ServiceS: 50, WindowStart: 100, WindowEnd: 100},
		{Demand: 1, WindowEnd: 120},
		{Demand: 1, WindowEnd: 130},
	}, []Vehicle{{Capacity: 10, ShiftEnd: 1000}, {Capacity: 10, ShiftEnd: 1000}}, func(i, j int) int {
		return max(x[i]-x[j], x[j]-x[i])
	})
	p.Objective = ObjectiveDistance
	cases := []struct {
		name  string
		soft  bool
		twPen float64
		u     int
		split bool
	}{
		{"time warp dearer than the detour", true, 10, 0, true},
		{"time warp cheaper than the detour", true, 1, 0, false},
		// 230 m + 40 s x 5.1 = 434 against 430: the bounds must not
		// rule out a saving of 4; at 4.9, 426 against 430.
		{"time warp just dearer", true, 5.1, 0, true},
		{"time warp just cheaper", true, 4.9, 0, false},
		{"nothing after u", true, 10, 2, false},
		{"hard mode", false, 10, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
			s.soft, s.twPen, s.loadPen = c.soft, c.twPen, 1
			st := s.newState()
			s.setSeq(st, 0, []int{0, 1, 2})
			st.missing -= 3
			if got := st.routes[0].full.tw; got != 40 {
				t.Fatalf("time warp %d, want 40", got)
			}
			before := st.cost
			if got := s.splitToEmpty(st, c.u); got != c.split {
				t.Fatalf("splitToEmpty = %v, want %v", got, c.split)
			}
			if c.soft { // hard mode keeps no late route: verify would refuse the start
				s.verify(st, "split")
			}
			if !c.split {
				if st.cost != before || len(st.routes[1].seq) != 0 {
					t.Fatalf("plan changed: cost %v -> %v, vehicle 2 %v", before, st.cost, st.routes[1].seq)
				}
				return
			}
			if !slices.Equal(st.routes[0].seq, []int{0}) || !slices.Equal(st.routes[1].seq, []int{1, 2}) {
				t.Fatalf("routes %v and %v, want [0] and [1 2]", st.routes[0].seq, st.routes[1].seq)
			}
			if st.cost != 430 {
				t.Fatalf("cost %v, want 430 (on time)", st.cost)
			}
		})
	}
}

func TestWideFromStart(t *testing.T) {
	// 100 orders of demand 10: a vehicle of capacity 300 holds 30 average
	// orders (long routes), one of 200 holds 20.
	problem := func(demand, capacity float64) *Problem {
		orders := make([]Order, 100)
		for i := range orders {
			orders[i] = Order{Demand: demand, WindowEnd: 1000}
		}
		return matrixProblem(orders, []Vehicle{{Capacity: capacity, ShiftEnd: 1000}}, func(i, j int) int {
			return max(i-j, j-i)
		})
	}
	cases := []struct {
		name             string
		demand, capacity float64
		limit            time.Duration
		wide             bool
	}{
		{"long routes, 60 ms per order", 10, 300, 6 * time.Second, true},
		{"long routes, 59 ms per order", 10, 300, 5900 * time.Millisecond, false},
		{"short routes", 10, 200, 30 * time.Second, false},
		{"no demand", 0, 200, 6 * time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSolver(context.Background(), problem(c.demand, c.capacity), Options{Threads: 1, Seed: 1, TimeLimit: c.limit}, time.Now())
			if got := s.wideFromStart(); got != c.wide {
				t.Fatalf("wideFromStart = %v, want %v", got, c.wide)
			}
		})
	}
}
