package vrp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// genFleet builds a random city problem of n orders and m vehicles with
// every constraint of a real fleet mixed in: several windows, breaks,
// skills, two load dimensions, route limits, priorities, vehicles that
// start and end elsewhere and open routes. Some features are off by seed
// so that each appears alone and together.
func genFleet(seed uint64, n, m int) *Problem {
	rng := rand.New(rand.NewPCG(seed, 11))
	extra := 2
	size := n + 1 + extra
	xs, ys := make([]float64, size), make([]float64, size)
	for i := range size {
		xs[i], ys[i] = rng.Float64()*15000, rng.Float64()*15000
	}
	xs[0], ys[0] = 7500, 7500
	p := &Problem{Objective: Objective(rng.IntN(2)), ExtraLocations: extra, Dimensions: []string{"weight", "volume"}}
	p.Distance = make([][]int, size)
	p.Duration = make([][]int, size)
	for i := range size {
		p.Distance[i] = make([]int, size)
		p.Duration[i] = make([]int, size)
		for j := range size {
			d := 1.3 * math.Hypot(xs[i]-xs[j], ys[i]-ys[j])
			p.Distance[i][j] = int(d)
			p.Duration[i][j] = int(d / 8)
		}
	}
	on := func(share float64) bool { return rng.Float64() < share }
	feature := seed % 8 // 0: all features; 1..7 one family each
	has := func(f uint64) bool { return feature == 0 || feature == f }
	skills := []string{"fridge", "lift", "adr"}
	for range n {
		o := Order{Demand: float64(1 + rng.IntN(5)), ServiceS: 60 * (2 + rng.IntN(8)), WindowEnd: NoWindowEnd}
		if has(1) && on(0.6) {
			a := 8*3600 + 1800*rng.IntN(8)
			b := a + 3600 + 1800*rng.IntN(3)
			c := b + 1800 + 1800*rng.IntN(4)
			o.Windows = []Window{{a, b}, {c, c + 3600 + 1800*rng.IntN(3)}}
			o.WindowStart, o.WindowEnd = a, o.Windows[1].End
		} else if on(0.4) {
			o.WindowStart = 8*3600 + 1800*rng.IntN(16)
			o.WindowEnd = o.WindowStart + 3600*(1+rng.IntN(3))
		}
		if has(2) && on(0.35) {
			o.Skills = []string{skills[rng.IntN(3)]}
		}
		o.Loads = []float64{0, 0}
		if has(3) {
			o.Loads = []float64{float64(rng.IntN(300)), float64(rng.IntN(900))}
		}
		if has(4) {
			o.Priority = rng.IntN(101)
		}
		p.Orders = append(p.Orders, o)
	}
	for k := range m {
		v := Vehicle{Capacity: float64(5 * n / m), ShiftStart: 8 * 3600, ShiftEnd: 18 * 3600, FixedCost: float64(rng.IntN(2) * 500),
			Capacities: []float64{1e9, 1e9}, Name: fmt.Sprintf("van-%d", k+1)}
		if has(4) {
			v.Capacity = float64(2 * n / m) // too little fleet: priorities decide
		}
		if has(2) {
			v.Skills = []string{skills[k%3]}
			if on(0.3) {
				v.Skills = append(v.Skills, skills[(k+1)%3])
			}
		}
		if has(3) {
			v.Capacities = []float64{float64(100 * (5 + rng.IntN(10))), float64(300 * (5 + rng.IntN(10)))}
		}
		if has(5) && on(0.8) {
			s := 11*3600 + 900*rng.IntN(8)
			v.Breaks = []Break{{Start: s, End: s + 3600 + 900*rng.IntN(4), Duration: 60 * (30 + 15*rng.IntN(2))}}
			if on(0.3) {
				v.Breaks = append([]Break{{Start: 9 * 3600, End: 10 * 3600, Duration: 900}}, v.Breaks...)
			}
		}
		if has(6) {
			v.MaxDuration = 3600 * (4 + rng.IntN(5))
			v.MaxDistance = 1000 * (40 + rng.IntN(60))
			v.MaxStops = 3 + rng.IntN(n)
		}
		if has(7) {
			v.Start = n + 1 + rng.IntN(2)*rng.IntN(2)
			if on(0.4) {
				v.OpenEnd = true
			} else if on(0.5) {
				v.End = n + 2
			}
		}
		p.Vehicles = append(p.Vehicles, v)
	}
	return p
}

// TestFleetPlansKeepEveryConstraint: on random problems with every
// constraint of a real fleet, plans (of both strategies) keep them all
// (routeFeasible re-times nothing: it reads the route Solve reports), and
// the search's caches agree with the exact evaluation after every change.
func TestFleetPlansKeepEveryConstraint(t *testing.T) {
	debugVerify = true
	defer func() { debugVerify = false }()
	for seed := range uint64(24) {
		n, m := 6+int(seed%5)*6, 2+int(seed%4)
		p := genFleet(seed, n, m)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprintf("seed%d_n%d", seed, n), func(t *testing.T) {
			sol, err := Solve(t.Context(), p, Options{TimeLimit: 20 * time.Second, Seed: int64(seed), MaxIterations: 150, Threads: 1 + int(seed%3)/2})
			if err != nil {
				t.Fatal(err)
			}
			checkFleetSolution(t, p, sol, false)
			base, err := Baseline(p)
			if err != nil {
				t.Fatal(err)
			}
			checkFleetSolution(t, p, base, true)
		})
	}
}

// checkFleetSolution checks the routes with routeFeasible (windows unless
// baseline, shift, breaks, skills, loads, limits), that every order is
// either routed or unassigned once, and the cost.
func checkFleetSolution(t *testing.T, p *Problem, sol *Solution, baseline bool) {
	t.Helper()
	seen := make([]int, len(p.Orders))
	cost := 0.0
	for _, r := range sol.Routes {
		for _, st := range r.Stops {
			seen[st.Order]++
		}
		rr := r
		if baseline {
			rr.Stops = append([]Stop(nil), r.Stops...)
			for i := range rr.Stops {
				rr.Stops[i].Late = 0
			}
		}
		if !routeFeasible(p, &rr) {
			t.Errorf("vehicle %d: route %+v breaks a constraint", r.Vehicle, r)
		}
		if len(r.Breaks) != len(p.Vehicles[r.Vehicle].Breaks) {
			t.Errorf("vehicle %d: %d breaks planned of %d", r.Vehicle, len(r.Breaks), len(p.Vehicles[r.Vehicle].Breaks))
		}
		cost += routeCost(p, &r)
	}
	for _, u := range sol.Unassigned {
		seen[u.Order]++
		if u.Message == "" {
			t.Errorf("order %d: empty message", u.Order)
		}
	}
	for u, c := range seen {
		if c != 1 {
			t.Errorf("order %d appears %d times", u, c)
		}
	}
	if math.Abs(cost-sol.Cost) > 1e-6*math.Max(1, cost) {
		t.Errorf("cost %v, recomputed %v", sol.Cost, cost)
	}
}
