package bench

import (
	"fmt"

	"routeopt.io/routeopt/solver/vrp"
)

// Routes turns a solution into customer-id sequences (1..n), the only thing
// Check trusts from the solver.
func Routes(sol *vrp.Solution) [][]int {
	out := make([][]int, 0, len(sol.Routes))
	for _, r := range sol.Routes {
		seq := make([]int, len(r.Stops))
		for i, st := range r.Stops {
			seq[i] = st.Order + 1
		}
		out = append(out, seq)
	}
	return out
}

// Check verifies routes (customer ids) against the instance under the DIMACS
// convention and returns the total distance it recomputes from the
// coordinates. It deliberately shares no code with the solver: it walks
// each route, waiting at early arrivals, and rejects a customer served
// twice or never, a load above Q, a service starting after the due date
// and a return to the depot after the horizon.
func Check(in *Instance, routes [][]int) (int, error) {
	n := in.Customers()
	seen := make([]bool, n+1)
	total := 0
	depot := in.Nodes[0]
	for ri, r := range routes {
		if len(r) == 0 {
			return 0, fmt.Errorf("route %d is empty", ri)
		}
		load, t, prev := 0, 10*depot.Ready, depot
		for _, c := range r {
			if c < 1 || c > n {
				return 0, fmt.Errorf("route %d: customer %d does not exist", ri, c)
			}
			if seen[c] {
				return 0, fmt.Errorf("route %d: customer %d served twice", ri, c)
			}
			seen[c] = true
			nd := in.Nodes[c]
			d := dimacsDist(prev, nd)
			total += d
			t += d
			if t < 10*nd.Ready {
				t = 10 * nd.Ready
			}
			if t > 10*nd.Due {
				return 0, fmt.Errorf("route %d: customer %d served at %d, after its due date %d", ri, c, t, 10*nd.Due)
			}
			t += 10 * nd.Service
			load += nd.Demand
			prev = nd
		}
		if load > in.Capacity {
			return 0, fmt.Errorf("route %d: load %d above capacity %d", ri, load, in.Capacity)
		}
		d := dimacsDist(prev, depot)
		total += d
		if t+d > 10*depot.Due {
			return 0, fmt.Errorf("route %d: back at the depot at %d, after the horizon %d", ri, t+d, 10*depot.Due)
		}
	}
	for c := 1; c <= n; c++ {
		if !seen[c] {
			return 0, fmt.Errorf("customer %d is not served", c)
		}
	}
	return total, nil
}
