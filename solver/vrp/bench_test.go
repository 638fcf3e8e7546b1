package vrp

import (
	"context"
	"testing"
	"time"
)

// benchProblem: 500 orders, 20 vehicles, a 30 km city, 60 % of the orders
// with 1-3 h windows.
func benchProblem() *Problem {
	return genProblem(2024, genConfig{orders: 500, vehicles: 20, side: 30000, windowShare: 0.6, capFactor: 1.15, objective: ObjectiveDistance, fixedCost: 2000})
}

// BenchmarkConstruct500 measures the time to the first feasible plan
// (neighbour lists, prechecks and regret-2 insertion).
func BenchmarkConstruct500(b *testing.B) {
	p := benchProblem()
	var st *state
	for b.Loop() {
		s := newSolver(context.Background(), p, Options{TimeLimit: time.Minute}, time.Now())
		st = s.newState()
		s.construct(st)
	}
	b.ReportMetric(float64(len(p.Orders)-st.missing), "served")
	b.ReportMetric(st.cost, "cost")
}

// BenchmarkSolve500 runs Solve with a 1 s limit and reports the plan.
func BenchmarkSolve500(b *testing.B) {
	p := benchProblem()
	base, _ := Baseline(p)
	var sol *Solution
	for b.Loop() {
		var err error
		sol, err = Solve(context.Background(), p, Options{TimeLimit: time.Second, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
	}
	checkSolution(b, p, sol, false)
	b.ReportMetric(float64(served(sol)), "served")
	b.ReportMetric(sol.Cost, "cost")
	b.ReportMetric(float64(len(sol.Routes)), "routes")
	b.ReportMetric(float64(served(base)), "baseline-served")
	b.ReportMetric(base.Cost, "baseline-cost")
}
