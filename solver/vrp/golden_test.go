//go:build amd64 && !amd64.v3

// The recorded costs hold where floating-point products and sums are
// rounded one by one: the compiler fuses them into FMA instructions on
// other architectures and with GOAMD64=v3 or higher, which shifts the
// penalties by an ulp and with them the search's choices.

package vrp

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"time"
)

// TestSeededSolvesKeepTheirPlans pins the plans of a few seeded solves
// capped by MaxIterations, one per engine and crossover: their exact cost,
// route count and a fingerprint of every route's stops. A change meant to
// leave the search as it is (a refactoring, a faster evaluation of the
// same moves) must keep them; a change meant to alter the search updates
// them in the same commit, with its measurements in docs/PERFORMANCE.md.
func TestSeededSolvesKeepTheirPlans(t *testing.T) {
	if raceEnabled {
		t.Skip("fixed iteration counts take minutes under the race detector")
	}
	cases := []struct {
		name    string
		seed    uint64
		gen     genConfig
		opt     Options
		off     []string
		cost    float64
		routes  int
		fingerp uint64
	}{
		{
			// Solomon-like: 100 orders on short routes, one vehicle type:
			// the genetic search with EAX and SREX.
			name: "short-routes-genetic-eax", seed: 101,
			gen:  genConfig{orders: 100, vehicles: 25, side: 20000, windowShare: 0.8, capFactor: 1.3, objective: ObjectiveDistance},
			opt:  Options{TimeLimit: time.Minute, Seed: 1, MaxIterations: 600, Threads: 1},
			cost: 553806, routes: 20, fingerp: 0x390caf4cbabeb629,
		},
		{
			// Long routes, a mixed fleet and the duration objective on an
			// asymmetric matrix: the genetic search with SREX only.
			name: "long-routes-genetic-srex", seed: 102,
			gen:  genConfig{orders: 100, vehicles: 8, side: 20000, windowShare: 0.5, capFactor: 4, objective: ObjectiveDuration, fixedCost: 900, hetero: true, asymmetric: true},
			opt:  Options{TimeLimit: time.Minute, Seed: 2, MaxIterations: 500, Threads: 1},
			cost: 81177, routes: 3, fingerp: 0xfbebce569bd89ef3,
		},
		{
			// Ruin-and-recreate chains with fixed costs, two threads that
			// exchange their best plans.
			name: "ruin-and-recreate-two-threads", seed: 103,
			gen:  genConfig{orders: 120, vehicles: 15, side: 20000, windowShare: 0.6, capFactor: 1.1, objective: ObjectiveDistance, fixedCost: 2000},
			opt:  Options{TimeLimit: time.Minute, Seed: 3, MaxIterations: epochIterations + 1500, Threads: 2},
			off:  []string{"genetic"},
			cost: 469930, routes: 14, fingerp: 0x30948152082f3f76,
		},
		{
			// Short routes on a mixed fleet (SREX only), two threads that
			// exchange their best plans.
			name: "mixed-fleet-genetic-two-threads", seed: 104,
			gen:  genConfig{orders: 80, vehicles: 12, side: 15000, windowShare: 0.7, capFactor: 1.2, objective: ObjectiveDistance, fixedCost: 500, hetero: true},
			opt:  Options{TimeLimit: time.Minute, Seed: 4, MaxIterations: 250, Threads: 2},
			cost: 265322, routes: 10, fingerp: 0x48753cf7ca439062,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := genProblem(c.seed, c.gen)
			sol, err := Solve(context.Background(), p, ablated(t, c.opt, c.off...))
			if err != nil {
				t.Fatal(err)
			}
			f := fingerprint(sol)
			t.Logf("cost %v, routes %d, fingerprint %#x", sol.Cost, len(sol.Routes), f)
			if sol.Cost != c.cost || len(sol.Routes) != c.routes || f != c.fingerp {
				t.Errorf("cost %v, %d routes, fingerprint %#x; recorded cost %v, %d routes, fingerprint %#x",
					sol.Cost, len(sol.Routes), f, c.cost, c.routes, c.fingerp)
			}
		})
	}
}

// fingerprint hashes the stops of every route in plan order.
func fingerprint(sol *Solution) uint64 {
	h := fnv.New64a()
	for _, r := range sol.Routes {
		fmt.Fprint(h, r.Vehicle, ":")
		for _, s := range r.Stops {
			fmt.Fprint(h, s.Order, ",")
		}
		fmt.Fprint(h, ";")
	}
	return h.Sum64()
}
