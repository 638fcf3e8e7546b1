package vrp

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// The constraints of real fleets in the search. Start and end locations
// (an open route ends at a location every leg into costs nothing) are in
// the segments, exact. Priorities weigh the orders left out (state.lost).
// Everything else — several windows, breaks, skills, load dimensions and
// route limits — the segments leave out: the cost they give a route is a
// lower bound of its exact one, so a move that the segments find no better
// is no better. Where the problem has any of them (fleetInfo.exact), a
// route's cached cost is its exact cost (exactRoute), and a move is kept
// only when the routes it leaves cost less exactly (keeps).

// fleetInfo is what the exact evaluation of routes reads.
type fleetInfo struct {
	exact      bool
	priorities bool // some order has a priority above 0
	timer      timer
	// compat[u*m+v]: vehicle v has every skill order u needs
	compat []bool
	// loads[u*dims+d], capacities[v*dims+d]
	dims       int
	loads      []float64
	capacities []float64
	// norms scale the excess of each dimension (index dims: stops, dims+1:
	// metres) to units of demand for the load penalty
	norms []float64
	// weight[u] is what leaving order u out costs the plan: its priority
	// above every count of orders, plus one
	weight      []int
	dimLoad     []float64 // scratch of evalExact
	multiWindow []bool    // per order: it has several windows
}

// problemIsPlain reports whether p uses nothing beyond one window per
// order, demand and capacity, and the depot: then the segments are exact.
func problemIsPlain(p *Problem) bool {
	if len(p.Dimensions) > 0 {
		return false
	}
	for i := range p.Orders {
		if o := &p.Orders[i]; len(o.Windows) >= 2 || len(o.Skills) > 0 {
			return false
		}
	}
	for i := range p.Vehicles {
		v := &p.Vehicles[i]
		if len(v.Breaks) > 0 || v.MaxDuration > 0 || v.MaxDistance > 0 || v.MaxStops > 0 {
			return false
		}
	}
	return true
}

// orderWeights returns state.lost's weight of every order.
func orderWeights(p *Problem) []int {
	w := make([]int, len(p.Orders))
	for u := range w {
		w[u] = p.Orders[u].Priority*(len(p.Orders)+1) + 1
	}
	return w
}

// hasSkills reports whether vehicle veh has every skill of o.
func hasSkills(veh *Vehicle, o *Order) bool {
	for _, sk := range o.Skills {
		if !slices.Contains(veh.Skills, sk) {
			return false
		}
	}
	return true
}

// initFleet fills s.fleet; it runs before the vehicles are grouped into
// types.
func (s *solver) initFleet() {
	p := s.p
	f := &s.fleet
	f.weight = orderWeights(p)
	for u := range p.Orders {
		f.priorities = f.priorities || p.Orders[u].Priority > 0
	}
	f.exact = !problemIsPlain(p)
	if !f.exact {
		return
	}
	f.timer = timer{p: p}
	f.multiWindow = make([]bool, s.n)
	for u := range p.Orders {
		f.multiWindow[u] = len(p.Orders[u].Windows) >= 2
	}
	f.compat = make([]bool, s.n*s.m)
	for u := range p.Orders {
		for v := range p.Vehicles {
			f.compat[u*s.m+v] = hasSkills(&p.Vehicles[v], &p.Orders[u])
		}
	}
	f.dims = len(p.Dimensions)
	f.loads = make([]float64, s.n*f.dims)
	f.capacities = make([]float64, s.m*f.dims)
	f.norms = make([]float64, f.dims+2)
	f.dimLoad = make([]float64, f.dims)
	maxDemand, maxLeg := 0.0, 1.0
	for u := range p.Orders {
		maxDemand = max(maxDemand, p.Orders[u].Demand)
		maxLeg = max(maxLeg, float64(p.Distance[0][u+1]+p.Distance[u+1][0]))
		for d, x := range p.Orders[u].Loads {
			f.loads[u*f.dims+d] = x
			f.norms[d] = max(f.norms[d], x)
		}
	}
	for v := range p.Vehicles {
		copy(f.capacities[v*f.dims:(v+1)*f.dims], p.Vehicles[v].Capacities)
	}
	unit := maxDemand
	if unit == 0 {
		unit = maxLeg
	}
	f.norms[f.dims], f.norms[f.dims+1] = 1, maxLeg
	for d := range f.norms {
		if f.norms[d] <= 0 {
			f.norms[d] = 1
		}
		f.norms[d] = unit / f.norms[d]
	}
}

// exactRoute is the exact evaluation of a route.
type exactRoute struct {
	cost float64 // objective plus fixed cost
	tw   int     // time warp, the duration above the limit included
	// excess is the load above capacity in every dimension, the stops
	// and metres above the limits and the orders whose skills the
	// vehicle lacks, in units of demand
	excess float64
}

// evalExact evaluates vehicle v's route through seq exactly.
func (s *solver) evalExact(v int, seq []int) exactRoute {
	if len(seq) == 0 {
		return exactRoute{}
	}
	f := &s.fleet
	p := s.p
	veh := &p.Vehicles[v]
	var x exactRoute
	var tw, dur int
	if s.segmentsExact(v, seq) {
		full := s.evalSeq(v, seq)
		tw, dur = full.tw, full.dur
	} else if s.obj == ObjectiveDistance && veh.MaxDuration == 0 {
		tw, _ = f.timer.best(v, seq) // the departure does not matter
	} else if s.obj == ObjectiveDistance && f.timer.withinLimit(v, seq) {
		tw = 0 // on time and short enough: the departure does not matter
	} else {
		t, depart, ret := f.timer.schedule(v, seq, nil, true)
		tw, dur = t, ret-depart
	}
	if veh.MaxDuration > 0 && dur > veh.MaxDuration {
		tw += dur - veh.MaxDuration
	}
	x.tw = tw
	dist, from, load := 0, s.startLoc[v], 0.0
	dimLoad := f.dimLoad
	clear(dimLoad)
	for _, u := range seq {
		if !f.compat[u*s.m+v] {
			x.excess += f.norms[f.dims]
		}
		dist += int(s.legs[from*s.size+u+1][legDist])
		from = u + 1
		load += s.demand[u]
		for d := range f.dims {
			dimLoad[d] += f.loads[u*f.dims+d]
		}
	}
	dist += int(s.legs[from*s.size+s.endLoc[v]][legDist])
	x.excess += s.excess(v, load)
	for d := range f.dims {
		if c := f.capacities[v*f.dims+d]; !fitsCapacity(dimLoad[d], c) {
			x.excess += (dimLoad[d] - c) * f.norms[d]
		}
	}
	if veh.MaxStops > 0 && len(seq) > veh.MaxStops {
		x.excess += float64(len(seq)-veh.MaxStops) * f.norms[f.dims]
	}
	if veh.MaxDistance > 0 && dist > veh.MaxDistance {
		x.excess += float64(dist-veh.MaxDistance) * f.norms[f.dims+1]
	}
	if s.obj == ObjectiveDuration {
		x.cost = float64(dur) + s.fixed[v]
	} else {
		x.cost = float64(dist) + s.fixed[v]
	}
	return x
}

// segmentsExact reports whether the segments time vehicle v's route
// through seq exactly: no breaks, one window per order.
func (s *solver) segmentsExact(v int, seq []int) bool {
	if len(s.p.Vehicles[v].Breaks) > 0 {
		return false
	}
	for _, u := range seq {
		if s.fleet.multiWindow[u] {
			return false
		}
	}
	return true
}

// feasible reports whether the route breaks nothing.
func (x *exactRoute) feasible() bool {
	return x.tw == 0 && x.excess == 0
}

// exactCost is the exact counterpart of pcost: the cost, and in soft mode
// the penalties. (In hard mode the search takes no route that breaks
// anything: see admitsExact.)
func (s *solver) exactCost(x *exactRoute) float64 {
	if s.soft {
		return x.cost + s.twPen*float64(x.tw) + s.loadPen*x.excess
	}
	return x.cost
}

// keeps reports, where the problem needs exact evaluation, whether the
// move that leaves vehicle a with seqA and vehicle b with seqB (b < 0:
// only a changes) makes those routes cost less than base exactly. Where
// it does not, the segments were exact and it is true.
func (s *solver) keeps(a int, seqA []int, b int, seqB []int, base float64) bool {
	if !s.fleet.exact {
		return true
	}
	xa := s.evalExact(a, seqA)
	c := s.exactCost(&xa)
	if c >= base || !s.admitsExact(&xa) {
		return false
	}
	if b >= 0 {
		xb := s.evalExact(b, seqB)
		if !s.admitsExact(&xb) {
			return false
		}
		c += s.exactCost(&xb)
	}
	return c < base
}

// applyKept makes seqA and seqB the routes of vehicles a and b, in that
// order, when keeps finds that they cost less than base; it reports
// whether it did.
func (s *solver) applyKept(st *state, a int, seqA []int, b int, seqB []int, base float64) bool {
	if !s.keeps(a, seqA, b, seqB, base) {
		return false
	}
	s.setSeq(st, a, seqA)
	s.setSeq(st, b, seqB)
	return true
}

// admitsExact is admits for an exact evaluation.
func (s *solver) admitsExact(x *exactRoute) bool {
	return s.soft || x.feasible()
}

// vehicleKey is what, beyond capacity, shift and fixed cost, makes two
// vehicles of a real fleet interchangeable: "" for a plain one.
func vehicleKey(veh *Vehicle) string {
	if len(veh.Skills) == 0 && len(veh.Capacities) == 0 && len(veh.Breaks) == 0 && veh.MaxDuration == 0 &&
		veh.MaxDistance == 0 && veh.MaxStops == 0 && veh.Start == 0 && veh.End == 0 && !veh.OpenEnd {
		return ""
	}
	skills := slices.Clone(veh.Skills)
	slices.Sort(skills)
	return fmt.Sprint(skills, veh.Capacities, veh.Breaks, veh.MaxDuration, veh.MaxDistance, veh.MaxStops, veh.Start, veh.End, veh.OpenEnd)
}

// keepsSwap is keeps for the exchange of the order at position i of route
// a with the one at position j of route b.
func (s *solver) keepsSwap(st *state, a, i, b, j int, base float64) bool {
	if !s.fleet.exact {
		return true
	}
	ra, rb := &st.routes[a], &st.routes[b]
	bufA := append(s.bufA[:0], ra.seq...)
	bufB := append(s.bufB[:0], rb.seq...)
	bufA[i], bufB[j] = rb.seq[j], ra.seq[i]
	s.bufA, s.bufB = bufA, bufB
	return s.keeps(a, bufA, b, bufB, base)
}

// routeFree reports whether vehicle v's route in st breaks nothing.
func (s *solver) routeFree(st *state, v int) bool {
	r := &st.routes[v]
	if s.fleet.exact {
		return r.x.feasible()
	}
	return s.feasible(v, &r.full)
}

// searchCost is route r's cost as the search compares it (vehicle v): its
// exact evaluation's where the problem needs one, else its segment's.
func (s *solver) searchCost(v int, r *route) float64 {
	if s.fleet.exact {
		return s.exactCost(&r.x)
	}
	return s.pcost(v, &r.full)
}

// routePenalty is the penalty part of route r's cost (vehicle v).
func (s *solver) routePenalty(v int, r *route) float64 {
	if s.fleet.exact {
		return r.cost - r.x.cost
	}
	return s.penalty(v, &r.full)
}

// insertionCand is a position of an insertion with the segments' cost of
// it, a lower bound of the exact one.
type insertionCand struct {
	lb float64
	q  int
}

// bestInRoute is the cheapest insertion of u into vehicle v's route (used)
// that costs less than limit exactly, where the problem needs exact
// evaluation: the positions are ranked by their segment cost and timed
// exactly in that order until the bound reaches the best found. With
// blink > 0 each position is skipped with that probability. It returns
// q = -1 when none costs less than limit.
func (s *solver) bestInRoute(st *state, u, v int, blink, limit float64) (q int, delta float64) {
	q = -1
	if !s.fleet.compat[u*s.m+v] {
		return q, 0
	}
	r := s.fresh(st, v)
	k := len(r.seq)
	lo, hi := 0, k
	if !s.soft {
		// What the segments and the loads rule out in O(1) per position
		// needs no timing: the stops, the loads, the windows (merged
		// into one per order, see windowRange), the metres (exact in the
		// segments) and the duration (a lower bound there).
		if !s.mayInsert(r, u, v) {
			return q, 0
		}
		if lo, hi = windowRange(r, &s.single[u]); lo > hi {
			return q, 0
		}
	}
	cands := s.cands[:0]
	for p := lo; p <= hi; p++ {
		if blink > 0 && s.blinked(blink) {
			continue
		}
		full := s.merge3(&r.pre[p], &s.single[u], &r.tail[p])
		if !s.admits(v, &full) || !s.soft && !s.limitsAllow(v, &full) {
			continue
		}
		if lb := s.pcost(v, &full) - r.cost; lb < limit {
			cands = append(cands, insertionCand{lb, p})
		}
	}
	slices.SortFunc(cands, func(a, b insertionCand) int { return cmp.Compare(a.lb, b.lb) })
	s.cands = cands
	for _, c := range cands {
		if c.lb >= limit {
			break
		}
		buf := append(append(append(s.bufC[:0], r.seq[:c.q]...), u), r.seq[c.q:]...)
		s.bufC = buf
		x := s.evalExact(v, buf)
		if !s.admitsExact(&x) {
			continue
		}
		if d := s.exactCost(&x) - r.cost; d < limit {
			q, delta, limit = c.q, d, d
		}
	}
	return q, delta
}

// limitsAllow reports whether full, a route of vehicle v, may keep its
// limits of metres (exact in the segments) and duration (a lower bound).
func (s *solver) limitsAllow(v int, full *seg) bool {
	veh := &s.p.Vehicles[v]
	return (veh.MaxDistance == 0 || full.sums[legDist] <= veh.MaxDistance) && (veh.MaxDuration == 0 || full.dur <= veh.MaxDuration)
}

// mayInsert reports whether order u may join route r of vehicle v as far
// as its skills, the stops limit and the load dimensions tell.
func (s *solver) mayInsert(r *route, u, v int) bool {
	veh := &s.p.Vehicles[v]
	return s.fleet.compat[u*s.m+v] && (veh.MaxStops == 0 || len(r.seq) < veh.MaxStops) && s.roomInDims(r, u, v)
}

// roomInDims reports whether route r of vehicle v has room for order u in
// every load dimension.
func (s *solver) roomInDims(r *route, u, v int) bool {
	f := &s.fleet
	for d := range f.dims {
		l := f.loads[u*f.dims+d]
		if l == 0 {
			continue
		}
		for _, w := range r.seq {
			l += f.loads[w*f.dims+d]
		}
		if !fitsCapacity(l, f.capacities[v*f.dims+d]) {
			return false
		}
	}
	return true
}

// bestInsertionExact is bestInsertion where the problem needs exact
// evaluation.
func (s *solver) bestInsertionExact(st *state, u int, blink float64, nearOnly bool) (bv, bq int, bd float64) {
	bv, bq, bd = -1, -1, math.Inf(1)
	try := func(v int) {
		if q, d := s.bestInRoute(st, u, v, blink, bd); q >= 0 {
			bv, bq, bd = v, q, d
		}
	}
	s.usedRoutes(st, u, nearOnly, try, func() bool { return bv >= 0 })
	nt := len(s.types)
	for t, c := range s.alone[u*nt : u*nt+nt] {
		if math.IsInf(c, 1) || c >= bd {
			continue
		}
		if v := s.firstEmpty(st, t); v >= 0 {
			bv, bq, bd = v, 0, c
		}
	}
	if bv < 0 {
		bd = 0
	}
	return bv, bq, bd
}
