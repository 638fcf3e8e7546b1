package vrp_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"routeopt.io/routeopt/solver/vrp"
	"routeopt.io/routeopt/solver/vrp/bench"
	"routeopt.io/routeopt/test/vrpbrute"
)

// TestFleetAgainstBruteForce: on tiny problems mixing every constraint of
// a real fleet, the solver's plan passes the independent checker and is
// the exact optimum the brute force finds (total priority served, then
// orders served, then cost); the baseline's plan passes the checker (late
// stops allowed) and is no better than the optimum.
func TestFleetAgainstBruteForce(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	for seed := range uint64(seeds) {
		n, m := 3+int(seed%6), 1+int(seed%3)
		p := vrpbrute.Random(seed, n, m)
		t.Run(fmt.Sprintf("seed%d_n%d_m%d", seed, n, m), func(t *testing.T) {
			opt, err := vrpbrute.Solve(p)
			if err != nil {
				t.Fatal(err)
			}
			want, err := bench.CheckSolution(p, opt, bench.CheckOptions{})
			if err != nil {
				t.Fatalf("the brute force's plan fails the checker: %v", err)
			}
			sol, err := vrp.Solve(t.Context(), p, vrp.Options{TimeLimit: 30 * time.Second, Seed: int64(seed), MaxIterations: 300, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := bench.CheckSolution(p, sol, bench.CheckOptions{})
			if err != nil {
				t.Fatalf("the solver's plan fails the checker: %v", err)
			}
			if got.Priority != want.Priority || got.Served != want.Served || math.Abs(got.Cost-want.Cost) > 1e-6*math.Max(1, want.Cost) {
				t.Errorf("solver: priority %d, served %d, cost %v; optimum: priority %d, served %d, cost %v",
					got.Priority, got.Served, got.Cost, want.Priority, want.Served, want.Cost)
			}
			checkReasons(t, p, sol)

			base, err := vrp.Baseline(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bench.CheckSolution(p, base, bench.CheckOptions{AllowLate: true})
			if err != nil {
				t.Fatalf("the baseline's plan fails the checker: %v", err)
			}
			if b.Late == 0 && lexBetter(b, want) {
				t.Errorf("baseline on time beats the optimum: priority %d, served %d, cost %v vs %d, %d, %v", b.Priority, b.Served, b.Cost, want.Priority, want.Served, want.Cost)
			}
		})
	}
}

// lexBetter reports whether a is a better plan than b in the solver's
// order of preference.
func lexBetter(a, b bench.Report) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Served != b.Served {
		return a.Served > b.Served
	}
	return a.Cost < b.Cost-1e-6*math.Max(1, b.Cost)
}

// checkReasons recomputes every unassigned order's reason with the brute
// force on the order alone: skills_missing when no vehicle has its
// skills, too_large when none with them carries it, window_unreachable
// when none that carries it can serve it alone, and the others only for
// an order some vehicle can serve alone.
func checkReasons(t *testing.T, p *vrp.Problem, sol *vrp.Solution) {
	t.Helper()
	for _, u := range sol.Unassigned {
		o := p.Orders[u.Order]
		skilled, carriers, alone := 0, 0, 0
		for v := range p.Vehicles {
			veh := p.Vehicles[v]
			if !hasAll(veh.Skills, o.Skills) {
				continue
			}
			skilled++
			if o.Demand > veh.Capacity*(1+1e-9) || !fits(o.Loads, veh.Capacities) {
				continue
			}
			carriers++
			one := *p
			one.Orders = []vrp.Order{o}
			one.Vehicles = []vrp.Vehicle{veh}
			one.Distance, one.Duration = sub(p, p.Distance, u.Order), sub(p, p.Duration, u.Order)
			shift := func(loc int) int {
				if loc > len(p.Orders) {
					return loc - len(p.Orders) + 1
				}
				return loc
			}
			one.Vehicles[0].Start, one.Vehicles[0].End = shift(veh.Start), shift(veh.End)
			opt, err := vrpbrute.Solve(&one)
			if err != nil {
				t.Fatal(err)
			}
			if len(opt.Routes) == 1 {
				alone++
			}
		}
		var want []vrp.Reason
		switch {
		case skilled == 0:
			want = []vrp.Reason{vrp.ReasonSkillsMissing}
		case carriers == 0:
			want = []vrp.Reason{vrp.ReasonTooLarge}
		case alone == 0:
			want = []vrp.Reason{vrp.ReasonWindowUnreachable}
		default:
			want = []vrp.Reason{vrp.ReasonNoCapacity, vrp.ReasonNoTime, vrp.ReasonRouteLimit}
		}
		if !slices.Contains(want, u.Reason) {
			t.Errorf("order %d: reason %s (%s), recomputed %v", u.Order, u.Reason, u.Message, want)
		}
	}
}

func hasAll(have, need []string) bool {
	for _, s := range need {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

func fits(loads, caps []float64) bool {
	for d, l := range loads {
		if l > caps[d]*(1+1e-9) {
			return false
		}
	}
	return true
}

// sub is the matrix m of p cut to the depot, order u and the extra
// locations, in that order.
func sub(p *vrp.Problem, m [][]int, u int) [][]int {
	keep := []int{0, u + 1}
	for e := 1; e <= p.ExtraLocations; e++ {
		keep = append(keep, len(p.Orders)+e)
	}
	return pick(m, keep)
}

func pick(m [][]int, keep []int) [][]int {
	out := make([][]int, len(keep))
	for i, a := range keep {
		out[i] = make([]int, len(keep))
		for j, b := range keep {
			out[i][j] = m[a][b]
		}
	}
	return out
}

// TestFleetPlansPassTheChecker: on larger problems mixing every
// constraint, the plans of both strategies pass the independent checker
// and every unassigned reason holds by recomputation.
func TestFleetPlansPassTheChecker(t *testing.T) {
	for seed := range uint64(12) {
		n, m := 20+int(seed%3)*30, 3+int(seed%4)*2
		p := vrpbrute.Random(1000+seed, n, m)
		t.Run(fmt.Sprintf("seed%d_n%d_m%d", seed, n, m), func(t *testing.T) {
			sol, err := vrp.Solve(t.Context(), p, vrp.Options{TimeLimit: 30 * time.Second, Seed: int64(seed), MaxIterations: 200, Threads: 1 + int(seed%2)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bench.CheckSolution(p, sol, bench.CheckOptions{}); err != nil {
				t.Fatalf("the solver's plan fails the checker: %v", err)
			}
			checkReasons(t, p, sol)
			base, err := vrp.Baseline(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bench.CheckSolution(p, base, bench.CheckOptions{AllowLate: true}); err != nil {
				t.Fatalf("the baseline's plan fails the checker: %v", err)
			}
		})
	}
}
