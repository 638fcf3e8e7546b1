package vrpbrute

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"routeopt.io/routeopt/solver/vrp"
	"routeopt.io/routeopt/solver/vrp/bench"
)

// line is a problem whose locations lie on a line at the given positions
// (the depot first, then the orders, then extra locations): a unit is
// 100 m and 10 s of driving.
func line(pos ...int) *vrp.Problem {
	p := &vrp.Problem{Objective: vrp.ObjectiveDistance}
	for _, a := range pos {
		var dist, dur []int
		for _, b := range pos {
			d := max(a-b, b-a)
			dist, dur = append(dist, 100*d), append(dur, 10*d)
		}
		p.Distance, p.Duration = append(p.Distance, dist), append(p.Duration, dur)
	}
	return p
}

func open(o vrp.Order) vrp.Order {
	if o.WindowEnd == 0 {
		o.WindowEnd = vrp.NoWindowEnd
	}
	return o
}

// sequences is the orders of each route of a plan, in order of their
// first order: which of two identical vehicles drives a route is left
// open.
func sequences(sol *vrp.Solution) [][]int {
	var out [][]int
	for _, r := range sol.Routes {
		var seq []int
		for _, st := range r.Stops {
			seq = append(seq, st.Order)
		}
		out = append(out, seq)
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// TestSolveKnownOptima: small problems whose optimum is worked out by
// hand, one for each rule the enumeration must weigh; every plan must
// also pass the independent checker.
func TestSolveKnownOptima(t *testing.T) {
	tests := []struct {
		name   string
		p      func() *vrp.Problem
		cost   float64
		routes [][]int
		reason map[int]vrp.Reason
	}{
		{
			// depot 0, orders at 10 and -10: one trip out and back on each
			// side is 4,000 m either way; with a fixed cost of 500 per van
			// one van serves both.
			name: "one van for both sides",
			p: func() *vrp.Problem {
				p := line(0, 10, -10)
				p.Orders = []vrp.Order{open(vrp.Order{Demand: 1}), open(vrp.Order{Demand: 1})}
				p.Vehicles = []vrp.Vehicle{{Capacity: 2, ShiftEnd: 1000, FixedCost: 500}, {Capacity: 2, ShiftEnd: 1000, FixedCost: 500}}
				return p
			},
			cost: 4500, routes: [][]int{{0, 1}},
		},
		{
			// capacity 1 each: two vans, 2,000 m each plus 500 each.
			name: "capacity splits the orders",
			p: func() *vrp.Problem {
				p := line(0, 10, -10)
				p.Orders = []vrp.Order{open(vrp.Order{Demand: 1}), open(vrp.Order{Demand: 1})}
				p.Vehicles = []vrp.Vehicle{{Capacity: 1, ShiftEnd: 1000, FixedCost: 500}, {Capacity: 1, ShiftEnd: 1000, FixedCost: 500}}
				return p
			},
			cost: 5000, routes: [][]int{{0}, {1}},
		},
		{
			// the second dimension (pallets) splits them instead.
			name: "a load dimension splits the orders",
			p: func() *vrp.Problem {
				p := line(0, 10, -10)
				p.Dimensions = []string{"pallets"}
				p.Orders = []vrp.Order{open(vrp.Order{Demand: 1, Loads: []float64{2}}), open(vrp.Order{Demand: 1, Loads: []float64{1}})}
				p.Vehicles = []vrp.Vehicle{{Capacity: 2, ShiftEnd: 1000, FixedCost: 500, Capacities: []float64{2}}, {Capacity: 2, ShiftEnd: 1000, FixedCost: 500, Capacities: []float64{2}}}
				return p
			},
			cost: 5000, routes: [][]int{{0}, {1}},
		},
		{
			// order 1 needs "cold", which only the dearer van 1 has: it
			// takes both orders.
			name: "skills choose the van",
			p: func() *vrp.Problem {
				p := line(0, 10, 20)
				p.Orders = []vrp.Order{open(vrp.Order{}), open(vrp.Order{Skills: []string{"cold"}})}
				p.Vehicles = []vrp.Vehicle{{Capacity: 9, ShiftEnd: 1000}, {Capacity: 9, ShiftEnd: 1000, FixedCost: 100, Skills: []string{"cold"}}}
				return p
			},
			cost: 4100, routes: [][]int{{0, 1}},
		},
		{
			// order 0's first window [0, 50] is out of reach (100 s away):
			// it is served in its second, [300, 400]. Duration objective:
			// leaving at 200 or later, the route takes 200 s.
			name: "the second window and a later departure",
			p: func() *vrp.Problem {
				p := line(0, 10)
				p.Objective = vrp.ObjectiveDuration
				p.Orders = []vrp.Order{{WindowStart: 0, WindowEnd: 400, Windows: []vrp.Window{{Start: 0, End: 50}, {Start: 300, End: 400}}}}
				p.Vehicles = []vrp.Vehicle{{Capacity: 1, ShiftEnd: 1000}}
				return p
			},
			cost: 200, routes: [][]int{{0}},
		},
		{
			// a 100 s break in [150, 300]: leaving at 50 the van arrives
			// at 150, takes the break there until 250, serves 250-260 in
			// the window [200, 300] and is back at 360: 310 s, without a
			// second of waiting. After the service the break would end
			// past 300.
			name: "a break taken while waiting",
			p: func() *vrp.Problem {
				p := line(0, 10)
				p.Objective = vrp.ObjectiveDuration
				p.Orders = []vrp.Order{{ServiceS: 10, WindowStart: 200, WindowEnd: 300}}
				p.Vehicles = []vrp.Vehicle{{Capacity: 1, ShiftEnd: 1000, Breaks: []vrp.Break{{Start: 150, End: 300, Duration: 100}}}}
				return p
			},
			cost: 310, routes: [][]int{{0}},
		},
		{
			// both orders' windows are [100, 100] at opposite ends: one
			// van can serve one of them, and takes the higher priority,
			// although the other is nearer.
			name: "priority over cost",
			p: func() *vrp.Problem {
				p := line(0, 10, -5)
				p.Orders = []vrp.Order{{WindowStart: 100, WindowEnd: 100, Priority: 60}, {WindowStart: 100, WindowEnd: 100, Priority: 40}}
				p.Vehicles = []vrp.Vehicle{{Capacity: 9, ShiftEnd: 1000}}
				return p
			},
			cost: 2000, routes: [][]int{{0}}, reason: map[int]vrp.Reason{1: vrp.ReasonNoTime},
		},
		{
			// without priorities, two cheap orders come before one dear one.
			name: "more orders over cost",
			p: func() *vrp.Problem {
				p := line(0, 30, -5, -6)
				p.Orders = []vrp.Order{{WindowStart: 300, WindowEnd: 300}, {WindowStart: 50, WindowEnd: 300}, {WindowStart: 50, WindowEnd: 300}}
				p.Vehicles = []vrp.Vehicle{{Capacity: 9, ShiftEnd: 1000}}
				return p
			},
			cost: 1200, routes: [][]int{{1, 2}}, reason: map[int]vrp.Reason{0: vrp.ReasonNoTime},
		},
		{
			// the van starts at the extra location (position 12) and ends
			// at its last stop: 12 -> 10 -> 0 is 1,200 m, 12 -> 0 -> 10
			// 2,200 m.
			name: "start elsewhere, open end",
			p: func() *vrp.Problem {
				p := line(0, 10, 0, 12)
				p.ExtraLocations = 1
				p.Orders = []vrp.Order{open(vrp.Order{}), open(vrp.Order{})}
				p.Vehicles = []vrp.Vehicle{{Capacity: 9, ShiftEnd: 1000, Start: 3, OpenEnd: true}}
				return p
			},
			cost: 1200, routes: [][]int{{0, 1}},
		},
		{
			// a route limit of 250 s: orders at 10 and -10 with 10 s of
			// service cannot share a van (420 s); each alone takes 210 s.
			name: "duration limit",
			p: func() *vrp.Problem {
				p := line(0, 10, -10)
				p.Orders = []vrp.Order{open(vrp.Order{ServiceS: 10}), open(vrp.Order{ServiceS: 10})}
				veh := vrp.Vehicle{Capacity: 9, ShiftEnd: 1000, MaxDuration: 250}
				p.Vehicles = []vrp.Vehicle{veh, veh}
				return p
			},
			cost: 4000, routes: [][]int{{0}, {1}},
		},
		{
			// order 1's window closes before anyone can get there.
			name: "unreachable order",
			p: func() *vrp.Problem {
				p := line(0, 10, 50)
				p.Orders = []vrp.Order{open(vrp.Order{}), {WindowEnd: 100}}
				p.Vehicles = []vrp.Vehicle{{Capacity: 9, ShiftEnd: 2000}}
				return p
			},
			cost: 2000, routes: [][]int{{0}}, reason: map[int]vrp.Reason{1: vrp.ReasonWindowUnreachable},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p()
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			sol, err := Solve(p)
			if err != nil {
				t.Fatal(err)
			}
			if sol.Cost != tt.cost || !reflect.DeepEqual(sequences(sol), tt.routes) {
				t.Fatalf("cost %v, routes %v; want %v, %v", sol.Cost, sequences(sol), tt.cost, tt.routes)
			}
			got := map[int]vrp.Reason{}
			for _, u := range sol.Unassigned {
				got[u.Order] = u.Reason
			}
			if len(got) != len(tt.reason) || (len(got) > 0 && !reflect.DeepEqual(got, tt.reason)) {
				t.Errorf("unassigned %v, want %v", got, tt.reason)
			}
			if _, err := bench.CheckSolution(p, sol, bench.CheckOptions{}); err != nil {
				t.Fatalf("the checker rejects the optimum: %v", err)
			}
		})
	}
}

// TestRandom: Random's problems are valid, the same for the same seed,
// and together use every rule of the model.
func TestRandom(t *testing.T) {
	seen := map[string]int{}
	for seed := range uint64(300) {
		n, m := int(seed%9), 1+int(seed%4)
		p := Random(seed, n, m)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(p, Random(seed, n, m)) {
			t.Fatalf("seed %d: two different problems", seed)
		}
		if len(p.Orders) != n || len(p.Vehicles) != m {
			t.Fatalf("seed %d: %d orders and %d vehicles, want %d and %d", seed, len(p.Orders), len(p.Vehicles), n, m)
		}
		mark := func(rule string, on bool) {
			if on {
				seen[rule]++
			}
		}
		mark("duration objective", p.Objective == vrp.ObjectiveDuration)
		mark("dimensions", len(p.Dimensions) == 2)
		mark("extra locations", p.ExtraLocations > 0)
		mark("asymmetric", n > 1 && p.Distance[1][2] != p.Distance[2][1])
		for _, o := range p.Orders {
			mark("several windows", len(o.Windows) >= 2)
			mark("one window", len(o.Windows) == 0 && o.WindowEnd < vrp.NoWindowEnd)
			mark("skills needed", len(o.Skills) > 0)
			mark("priorities", o.Priority > 0)
		}
		for _, v := range p.Vehicles {
			mark("a break", len(v.Breaks) == 1)
			mark("two breaks", len(v.Breaks) == 2)
			mark("skills", len(v.Skills) > 0)
			mark("stops limit", v.MaxStops > 0)
			mark("duration limit", v.MaxDuration > 0)
			mark("distance limit", v.MaxDistance > 0)
			mark("fixed cost", v.FixedCost > 0)
			mark("start elsewhere", v.Start > 0)
			mark("end elsewhere", v.End > 0)
			mark("open end", v.OpenEnd)
		}
	}
	for _, rule := range []string{"duration objective", "dimensions", "extra locations", "asymmetric", "several windows", "one window",
		"skills needed", "priorities", "a break", "two breaks", "skills", "stops limit", "duration limit", "distance limit",
		"fixed cost", "start elsewhere", "end elsewhere", "open end"} {
		if seen[rule] < 5 {
			t.Errorf("%s: in %d problems of 300", rule, seen[rule])
		}
	}
}

// TestSolveRandom: on Random's problems the optimum passes the
// independent checker with the cost it reports, and is no worse than the
// best plan serving each order alone (a plan the enumeration also sees).
func TestSolveRandom(t *testing.T) {
	for seed := range uint64(60) {
		p := Random(seed, 4+int(seed%4), 1+int(seed%3))
		sol, err := Solve(p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		rep, err := bench.CheckSolution(p, sol, bench.CheckOptions{})
		if err != nil {
			t.Fatalf("seed %d: the checker rejects the optimum: %v", seed, err)
		}
		if rep.Served+len(sol.Unassigned) != len(p.Orders) {
			t.Fatalf("seed %d: %d served and %d unassigned of %d", seed, rep.Served, len(sol.Unassigned), len(p.Orders))
		}
	}
}

// TestShortestAgainstEveryDeparture: the departure shortest picks is as
// good as the best of every departure second of the shift, for random
// sequences of Random's problems.
func TestShortestAgainstEveryDeparture(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	tried := 0
	for seed := uint64(0); tried < 40 && seed < 400; seed++ {
		p := Random(seed, 5, 1)
		r := &route{p: p, v: 0, veh: &p.Vehicles[0]}
		seq := rng.Perm(5)[:1+rng.IntN(4)]
		d, ret, ok := r.shortest(seq)
		bestD, best := -1, 0
		for dep := r.veh.ShiftStart; dep <= r.veh.ShiftEnd; dep++ {
			if rt, ok := r.returnFrom(seq, dep); ok && (bestD < 0 || rt-dep < best) {
				bestD, best = dep, rt-dep
			}
		}
		if ok != (bestD >= 0) || ok && ret-d != best {
			t.Fatalf("seed %d, sequence %v: shortest gives %d s leaving at %d (%v), every departure %d s leaving at %d", seed, seq, ret-d, d, ok, best, bestD)
		}
		if ok {
			tried++
		}
	}
	if tried < 40 {
		t.Fatalf("only %d sequences had a schedule", tried)
	}
}

// tiny makes a problem on a small time scale (a shift of at most 120 s),
// where every departure, break place and window can be tried.
func tiny(seed uint64) *vrp.Problem {
	rng := rand.New(rand.NewPCG(seed, 3))
	n, extra := 1+rng.IntN(4), rng.IntN(2)
	pos := make([]int, 1+n+extra)
	for i := range pos {
		pos[i] = rng.IntN(5)
	}
	p := &vrp.Problem{Objective: vrp.Objective(rng.IntN(2)), ExtraLocations: extra, Dimensions: []string{"d"}}
	for _, a := range pos {
		var dist, dur []int
		for _, b := range pos {
			d := max(a-b, b-a)
			dist, dur = append(dist, 10*d+rng.IntN(3)), append(dur, 5*d)
		}
		p.Distance, p.Duration = append(p.Distance, dist), append(p.Duration, dur)
	}
	for range n {
		o := vrp.Order{Demand: float64(1 + rng.IntN(2)), ServiceS: rng.IntN(10), Loads: []float64{float64(rng.IntN(3))}, Priority: rng.IntN(4)}
		if rng.IntN(2) == 0 {
			a := rng.IntN(40)
			o.Windows = []vrp.Window{{Start: a, End: a + rng.IntN(15)}}
			b := o.Windows[0].End + 1 + rng.IntN(30)
			o.Windows = append(o.Windows, vrp.Window{Start: b, End: b + rng.IntN(20)})
			o.WindowStart, o.WindowEnd = o.Windows[0].Start, o.Windows[1].End
		} else {
			o.WindowStart = rng.IntN(60)
			o.WindowEnd = o.WindowStart + rng.IntN(60)
		}
		if rng.IntN(3) == 0 {
			o.Skills = []string{"s"}
		}
		p.Orders = append(p.Orders, o)
	}
	for range 1 + rng.IntN(2) {
		v := vrp.Vehicle{Capacity: float64(2 + rng.IntN(3)), ShiftStart: rng.IntN(10), Capacities: []float64{float64(1 + rng.IntN(4))}, FixedCost: float64(rng.IntN(20))}
		v.ShiftEnd = v.ShiftStart + 60 + rng.IntN(60)
		for k := range rng.IntN(3) {
			b := vrp.Break{Start: v.ShiftStart + 20*k + rng.IntN(20), Duration: 1 + rng.IntN(10)}
			b.End = min(v.ShiftEnd, b.Start+b.Duration+rng.IntN(20))
			if k > 0 {
				b.End = max(b.End, v.Breaks[k-1].End)
			}
			if b.Start+b.Duration <= b.End && b.End <= v.ShiftEnd {
				v.Breaks = append(v.Breaks, b)
			}
		}
		if rng.IntN(2) == 0 {
			v.Skills = []string{"s"}
		}
		if rng.IntN(3) == 0 {
			v.MaxDuration = 30 + rng.IntN(60)
		}
		if extra > 0 && rng.IntN(2) == 0 {
			v.Start = n + 1
		}
		if rng.IntN(3) == 0 {
			v.OpenEnd = true
		} else if extra > 0 && rng.IntN(2) == 0 {
			v.End = n + 1
		}
		p.Vehicles = append(p.Vehicles, v)
	}
	return p
}

// slowRoute is a route's shortest duration by trying everything: every
// departure second, every window of every stop and every place for every
// break (at the start, at each stop before or after its service, at the
// end location), each break taken as soon as the vehicle is at its place. It returns the
// duration and the distance, or false.
func slowRoute(p *vrp.Problem, v int, seq []int) (int, int, bool) {
	veh := p.Vehicles[v]
	for _, o := range seq {
		for _, s := range p.Orders[o].Skills {
			if !slices.Contains(veh.Skills, s) {
				return 0, 0, false
			}
		}
	}
	load, dim := 0.0, 0.0
	for _, o := range seq {
		load += p.Orders[o].Demand
		dim += p.Orders[o].Loads[0]
	}
	if load > veh.Capacity || dim > veh.Capacities[0] {
		return 0, 0, false
	}
	// place 0 is the start; 2j+1 stop j before its service, 2j+2 after
	// it; the last the end location (none for an open route)
	places := 2*len(seq) + 2
	if veh.OpenEnd {
		places--
	}
	var placements [][]int
	var place func(at []int, from int)
	place = func(at []int, from int) {
		if len(at) == len(veh.Breaks) {
			placements = append(placements, slices.Clone(at))
			return
		}
		for q := from; q < places; q++ {
			place(append(at, q), q)
		}
	}
	place(nil, 0)
	choices := 1
	for _, o := range seq {
		choices *= len(windows(&p.Orders[o]))
	}
	best, found := 0, false
	for d := veh.ShiftStart; d <= veh.ShiftEnd; d++ {
		for _, at := range placements {
			for c := range choices {
				ret, ok := simulate(p, veh, seq, d, at, c)
				if ok && ret <= veh.ShiftEnd && (veh.MaxDuration == 0 || ret-d <= veh.MaxDuration) && (!found || ret-d < best) {
					best, found = ret-d, true
				}
			}
		}
	}
	dist, from := 0, veh.Start
	for _, o := range seq {
		dist, from = dist+p.Distance[from][o+1], o+1
	}
	if !veh.OpenEnd {
		dist += p.Distance[from][veh.End]
	}
	return best, dist, found
}

// simulate drives seq leaving at d with break k at place at[k] and the
// windows numbered by choice (mixed radix), and returns the return time.
func simulate(p *vrp.Problem, veh vrp.Vehicle, seq []int, d int, at []int, choice int) (int, bool) {
	t, k := d, 0
	takeAt := func(q int) bool {
		for ; k < len(at) && at[k] == q; k++ {
			b := veh.Breaks[k]
			s := max(t, b.Start)
			if s+b.Duration > b.End {
				return false
			}
			t = s + b.Duration
		}
		return true
	}
	if !takeAt(0) {
		return 0, false
	}
	from := veh.Start
	for j, o := range seq {
		ws := windows(&p.Orders[o])
		w := ws[choice%len(ws)]
		choice /= len(ws)
		t += p.Duration[from][o+1]
		if !takeAt(2*j + 1) {
			return 0, false
		}
		t = max(t, w.Start)
		if t > w.End {
			return 0, false
		}
		t += p.Orders[o].ServiceS
		if !takeAt(2*j + 2) {
			return 0, false
		}
		from = o + 1
	}
	if !veh.OpenEnd {
		t += p.Duration[from][veh.End]
		if !takeAt(2*len(seq) + 1) {
			return 0, false
		}
	}
	return t, true
}

// TestSolveAgainstTryingEverything: on tiny problems the optimum equals
// the one found by trying every assignment of orders to vehicles, every
// sequence and, for every route, everything slowRoute tries.
func TestSolveAgainstTryingEverything(t *testing.T) {
	for seed := range uint64(150) {
		p := tiny(seed)
		if err := p.Validate(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sol, err := Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := bench.CheckSolution(p, sol, bench.CheckOptions{})
		if err != nil {
			t.Fatalf("seed %d: the checker rejects the optimum: %v", seed, err)
		}
		want := slowOptimum(p)
		got := value{priority: rep.Priority, served: rep.Served, cost: sol.Cost}
		if got != want {
			t.Fatalf("seed %d: optimum %+v, trying everything finds %+v", seed, got, want)
		}
	}
}

// slowOptimum tries every vehicle (or none) for every order and every
// order of each vehicle's orders.
func slowOptimum(p *vrp.Problem) value {
	n, m := len(p.Orders), len(p.Vehicles)
	// cheapest[v][mask]: the cheapest route of vehicle v over the orders
	// in mask, in any sequence
	cheapest := make([]map[int]float64, m)
	for v := range m {
		cheapest[v] = map[int]float64{}
		var perm func(seq []int, used int)
		perm = func(seq []int, used int) {
			if len(seq) > 0 {
				if dur, dist, ok := slowRoute(p, v, seq); ok {
					c := float64(dist)
					if p.Objective == vrp.ObjectiveDuration {
						c = float64(dur)
					}
					c += p.Vehicles[v].FixedCost
					if old, seen := cheapest[v][used]; !seen || c < old {
						cheapest[v][used] = c
					}
				}
			}
			for o := range n {
				if used&(1<<o) == 0 {
					perm(append(seq, o), used|1<<o)
				}
			}
		}
		perm(nil, 0)
	}
	best := value{priority: -1}
	assignment := make([]int, n) // vehicle of each order, m for none
	var try func(o int)
	try = func(o int) {
		if o == n {
			val, masks := value{}, make([]int, m)
			for i, v := range assignment {
				if v < m {
					masks[v] |= 1 << i
					val.priority += p.Orders[i].Priority
					val.served++
				}
			}
			for v, mask := range masks {
				if mask == 0 {
					continue
				}
				c, ok := cheapest[v][mask]
				if !ok {
					return
				}
				val.cost += c
			}
			if best.priority < 0 || val.better(best) {
				best = val
			}
			return
		}
		for v := 0; v <= m; v++ {
			assignment[o] = v
			try(o + 1)
		}
	}
	try(0)
	return best
}

func ExampleSolve() {
	// orders at 10 and 20 on a line from the depot; vehicle 0 carries one
	// order, vehicle 1 both for a fixed cost of 300: one trip of 4,000 m
	// beats two of 2,000 and 4,000 m.
	p := line(0, 10, 20)
	p.Orders = []vrp.Order{open(vrp.Order{Demand: 1}), open(vrp.Order{Demand: 1})}
	p.Vehicles = []vrp.Vehicle{{Capacity: 1, ShiftEnd: 1000}, {Capacity: 2, ShiftEnd: 1000, FixedCost: 300}}
	sol, err := Solve(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sol.Cost, sequences(sol))
	// Output: 4300 [[0 1]]
}
