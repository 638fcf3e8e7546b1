// Package vrpbrute finds the exact optimum of tiny vehicle-routing
// problems (up to MaxOrders orders and a few vehicles) by enumeration, so
// that the solver's tests can compare its plans with the best there is.
// It shares no code with the solver: it reads the problem's types and
// nothing else. Random makes such problems, mixing every rule of the
// model.
//
// The optimum is the solver's order of preference: the largest total
// priority served, then the most orders served, then the lowest cost
// (distance in metres, or route duration from departure to return, plus
// the fixed cost of every vehicle used).
package vrpbrute

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"routeopt.io/routeopt/solver/vrp"
)

// MaxOrders is the largest problem Solve takes: every sequence of every
// subset of the orders is tried on every vehicle.
const MaxOrders = 8

// best is the cheapest route found for one vehicle and one set of orders.
type best struct {
	ok   bool
	cost float64 // objective value plus the fixed cost
	seq  []int
}

// Solve returns an optimal plan of p, every route scheduled exactly: the
// earliest schedule, with the breaks where they fit best, from the
// departure that makes the route shortest. Unassigned orders get a reason
// from a simple rule (skills_missing, too_large, window_unreachable when
// no vehicle can serve the order alone, else no_time), which need not be
// the solver's: compare plans by their served orders and cost.
func Solve(p *vrp.Problem) (*vrp.Solution, error) {
	if err := checkShape(p); err != nil {
		return nil, err
	}
	n := len(p.Orders)
	table := make([][]best, len(p.Vehicles))
	for v := range p.Vehicles {
		table[v] = vehicleRoutes(p, v)
	}
	plan := assign(p, table)
	sol := &vrp.Solution{Routes: []vrp.Route{}, Unassigned: []vrp.Unassigned{}}
	served := 0
	for v, mask := range plan {
		if mask == 0 {
			continue
		}
		b := table[v][mask]
		r := &route{p: p, v: v, veh: &p.Vehicles[v]}
		d, _, ok := r.shortest(b.seq)
		if !ok {
			return nil, errors.New("a route found feasible has no schedule")
		}
		sol.Routes = append(sol.Routes, r.build(b.seq, d))
		sol.Cost += b.cost
		served |= mask
	}
	for o := range n {
		if served&(1<<o) == 0 {
			sol.Unassigned = append(sol.Unassigned, unassigned(p, table, o))
		}
	}
	return sol, nil
}

// vehicleRoutes tries every sequence of orders on vehicle v, growing them
// one order at a time and dropping a sequence as soon as it breaks a rule
// no longer sequence can mend (a window, a load, a skill, a limit), and
// keeps the cheapest route for every set of orders.
func vehicleRoutes(p *vrp.Problem, v int) []best {
	n := len(p.Orders)
	veh := &p.Vehicles[v]
	r := &route{p: p, v: v, veh: veh}
	table := make([]best, 1<<n)
	seq := make([]int, 0, n)
	loads := make([]float64, len(p.Dimensions))
	var grow func(mask int, lv []label, from, dist int, load float64)
	grow = func(mask int, lv []label, from, dist int, load float64) {
		if mask != 0 {
			consider(r, table, mask, seq, lv, from, dist)
		}
		if veh.MaxStops > 0 && len(seq) == veh.MaxStops {
			return
		}
		for o := range n {
			if mask&(1<<o) != 0 || !serves(p, veh, o) {
				continue
			}
			ord := &p.Orders[o]
			d := dist + p.Distance[from][o+1]
			if veh.MaxDistance > 0 && d > veh.MaxDistance || !fits(load+ord.Demand, veh.Capacity) {
				continue
			}
			fitsAll := true
			for i := range loads {
				fitsAll = fitsAll && fits(loads[i]+orderLoad(ord, i), veh.Capacities[i])
			}
			if !fitsAll {
				continue
			}
			next := r.step(nil, lv, from, o)
			if len(next) == 0 {
				continue
			}
			for i := range loads {
				loads[i] += orderLoad(ord, i)
			}
			seq = append(seq, o)
			grow(mask|1<<o, next, o+1, d, load+ord.Demand)
			seq = seq[:len(seq)-1]
			for i := range loads {
				loads[i] -= orderLoad(ord, i)
			}
		}
	}
	grow(0, r.start(veh.ShiftStart), veh.Start, 0, 0)
	return table
}

// consider closes the sequence as a route and keeps it when it is the
// cheapest for its set of orders. lv are its labels leaving at the shift
// start, which tell whether it has a schedule at all.
func consider(r *route, table []best, mask int, seq []int, lv []label, last, dist int) {
	p, veh := r.p, r.veh
	ret, from, _ := r.finish(lv, last)
	if from < 0 {
		return
	}
	if !veh.OpenEnd {
		dist += p.Distance[last][veh.End]
	}
	if veh.MaxDistance > 0 && dist > veh.MaxDistance {
		return
	}
	duration, least := ret-veh.ShiftStart, r.least(seq)
	if veh.MaxDuration > 0 && least > veh.MaxDuration {
		return
	}
	b := &table[mask]
	if p.Objective == vrp.ObjectiveDuration && b.ok && float64(least)+veh.FixedCost >= b.cost {
		return // no schedule of seq beats the best route of these orders
	}
	if duration > least && (p.Objective == vrp.ObjectiveDuration || veh.MaxDuration > 0 && duration > veh.MaxDuration) {
		// leaving later may shorten the route
		d, rt, ok := r.shortest(seq)
		if !ok {
			return
		}
		duration = rt - d
	}
	if veh.MaxDuration > 0 && duration > veh.MaxDuration {
		return
	}
	cost := float64(dist)
	if p.Objective == vrp.ObjectiveDuration {
		cost = float64(duration)
	}
	cost += veh.FixedCost
	if !b.ok || cost < b.cost {
		*b = best{ok: true, cost: cost, seq: slices.Clone(seq)}
	}
}

// value is how good a plan is, in the solver's order of preference.
type value struct {
	priority, served int
	cost             float64
}

func (a value) better(b value) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.served != b.served {
		return a.served > b.served
	}
	return a.cost < b.cost
}

// assign chooses for every vehicle a set of orders (possibly none), the
// sets disjoint, to make the best plan: best[v][mask] is the best plan of
// the orders in mask by the first v vehicles.
func assign(p *vrp.Problem, table [][]best) []int {
	n, m := len(p.Orders), len(p.Vehicles)
	full := 1<<n - 1
	prio := make([]int, 1<<n)
	for mask := 1; mask <= full; mask++ {
		o := bits.TrailingZeros(uint(mask))
		prio[mask] = prio[mask&(mask-1)] + p.Orders[o].Priority
	}
	worst := value{priority: -1}
	bestOf := make([][]value, m+1)
	choice := make([][]int, m+1)
	for v := range bestOf {
		bestOf[v] = slices.Repeat([]value{worst}, 1<<n)
		choice[v] = make([]int, 1<<n)
	}
	bestOf[0][0] = value{}
	for v := range m {
		for mask, cur := range bestOf[v] {
			if cur == worst {
				continue
			}
			rest := full &^ mask
			// every subset of the orders left, the empty one included
			for s := rest; ; s = (s - 1) & rest {
				if s == 0 || table[v][s].ok {
					next := cur
					if s != 0 {
						next = value{priority: cur.priority + prio[s], served: cur.served + bits.OnesCount(uint(s)), cost: cur.cost + table[v][s].cost}
					}
					if t := &bestOf[v+1][mask|s]; *t == worst || next.better(*t) {
						*t, choice[v+1][mask|s] = next, s
					}
				}
				if s == 0 {
					break
				}
			}
		}
	}
	end := 0
	for mask, val := range bestOf[m] {
		if val != worst && val.better(bestOf[m][end]) {
			end = mask
		}
	}
	plan := make([]int, m)
	for v := m; v > 0; v-- {
		plan[v-1] = choice[v][end]
		end &^= plan[v-1]
	}
	return plan
}

// unassigned gives an order left out of the optimum a reason.
func unassigned(p *vrp.Problem, table [][]best, o int) vrp.Unassigned {
	ord := &p.Orders[o]
	skilled, large := false, true
	for v := range p.Vehicles {
		veh := &p.Vehicles[v]
		if !serves(p, veh, o) {
			continue
		}
		skilled = true
		fitsAll := fits(ord.Demand, veh.Capacity)
		for i := range p.Dimensions {
			fitsAll = fitsAll && fits(orderLoad(ord, i), veh.Capacities[i])
		}
		large = large && !fitsAll
	}
	alone := false
	for v := range p.Vehicles {
		alone = alone || table[v][1<<o].ok
	}
	u := vrp.Unassigned{Order: o, Reason: vrp.ReasonNoTime, Message: "left out of the optimum"}
	switch {
	case !skilled:
		u.Reason, u.Message = vrp.ReasonSkillsMissing, "no vehicle has every skill it needs"
	case large:
		u.Reason, u.Message = vrp.ReasonTooLarge, "larger than every vehicle that has its skills"
	case !alone:
		u.Reason, u.Message = vrp.ReasonWindowUnreachable, "no vehicle can serve it even alone"
	}
	return u
}

// checkShape refuses what the enumeration cannot take, and a problem whose
// indices it would follow out of range; the model's other rules (Validate)
// are the caller's to keep.
func checkShape(p *vrp.Problem) error {
	if p == nil || len(p.Orders) > MaxOrders {
		return fmt.Errorf("want a problem of at most %d orders", MaxOrders)
	}
	size := len(p.Orders) + 1 + p.ExtraLocations
	if p.ExtraLocations < 0 || len(p.Distance) != size || len(p.Duration) != size {
		return fmt.Errorf("the matrices are not %d square", size)
	}
	for i := range size {
		if len(p.Distance[i]) != size || len(p.Duration[i]) != size {
			return fmt.Errorf("matrix row %d is not %d long", i, size)
		}
	}
	for v, veh := range p.Vehicles {
		if veh.Start < 0 || veh.Start >= size || veh.End < 0 || veh.End >= size || len(veh.Capacities) != len(p.Dimensions) {
			return fmt.Errorf("vehicle %d: start, end or capacities do not fit the problem", v)
		}
		if len(veh.Breaks) > maxBreaks {
			return fmt.Errorf("vehicle %d: %d breaks, at most %d", v, len(veh.Breaks), maxBreaks)
		}
	}
	for o, ord := range p.Orders {
		if ord.Loads != nil && len(ord.Loads) != len(p.Dimensions) {
			return fmt.Errorf("order %d: %d loads for %d dimensions", o, len(ord.Loads), len(p.Dimensions))
		}
	}
	return nil
}

// serves reports whether veh has every skill order o needs.
func serves(p *vrp.Problem, veh *vrp.Vehicle, o int) bool {
	for _, s := range p.Orders[o].Skills {
		if !slices.Contains(veh.Skills, s) {
			return false
		}
	}
	return true
}

func orderLoad(o *vrp.Order, d int) float64 {
	if o.Loads == nil {
		return 0
	}
	return o.Loads[d]
}

// fits is the capacity rule of the model: a load may exceed the capacity
// by 1e-9 of the larger of the two.
func fits(load, capacity float64) bool {
	return load-capacity <= 1e-9*math.Max(load, capacity)
}
