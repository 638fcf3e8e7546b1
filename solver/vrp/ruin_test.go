package vrp

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

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
