package vrp

import (
	"cmp"
	"slices"
)

// initialPenalties prices one second of time warp at initialTimeWarp
// (geneticParams) times the average cost per second of the neighbour
// edges, and one unit of excess load like the longest depot round trip per
// unit of the largest demand (as HGS does).
func (s *solver) initialPenalties() (tw, load float64) {
	cost, dur := 0.0, 0.0
	for u, nb := range s.nb {
		for _, w := range nb {
			cost += float64(s.arc(u+1, w+1))
			dur += float64(s.travel(u+1, w+1))
		}
	}
	tw = s.genetic.initialTimeWarp
	if s.opt.Ablation.LowTimeWarpPenalty {
		tw = 1
	}
	if cost > 0 && dur > 0 {
		tw *= cost / dur
	}
	maxLeg, maxDemand := 1.0, 0.0
	for u := range s.n {
		maxLeg = max(maxLeg, float64(s.depotCost[u]))
		maxDemand = max(maxDemand, s.demand[u])
	}
	load = 1
	if maxDemand > 0 {
		load = maxLeg / maxDemand
	}
	return tw, load
}

// reprice recomputes st's route costs after a change of the penalties.
func (h *hgs) reprice(st *state) {
	s := h.s
	st.cost = 0
	for v := range st.routes {
		r := &st.routes[v]
		r.cost = s.searchCost(v, r)
		st.cost += r.cost
	}
}

func (h *hgs) price(ind *individual) float64 {
	return ind.objective + h.s.twPen*float64(ind.tw) + h.s.loadPen*ind.excess
}

// register counts a child for the penalty update and adapts each price
// every penaltyUpdateEvery children (geneticParams) to the share of them
// that was free of its violation: up when the share is below the target
// band, steeply when almost none was, down when it is above the band.
// The infeasible subpopulation is then re-priced and re-sorted.
func (h *hgs) register(ind *individual) {
	h.seen++
	if ind.tw == 0 {
		h.twOK++
	}
	if ind.excess == 0 {
		h.loadOK++
	}
	g := &h.s.genetic
	if h.seen < g.penaltyUpdateEvery {
		return
	}
	adapt := func(pen float64, ok int) float64 {
		switch f := float64(ok) / float64(h.seen); {
		case f <= g.scarceFeasible:
			return min(pen*g.penaltyUpScarce, g.maxPenalty)
		case f < g.targetFeasibleLow:
			return min(pen*g.penaltyUp, g.maxPenalty)
		case f > g.targetFeasibleHigh:
			return max(pen*g.penaltyDown, g.minPenalty)
		}
		return pen
	}
	h.s.twPen = adapt(h.s.twPen, h.twOK)
	h.s.loadPen = adapt(h.s.loadPen, h.loadOK)
	h.seen, h.twOK, h.loadOK = 0, 0, 0
	for _, ind := range h.infeas {
		ind.pc = h.price(ind)
	}
	slices.SortStableFunc(h.infeas, func(a, b *individual) int { return cmp.Compare(a.pc, b.pc) })
}
