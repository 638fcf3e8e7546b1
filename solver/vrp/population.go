package vrp

import (
	"cmp"
	"slices"
)

// individual is one plan of the population.
type individual struct {
	seqs       [][]int // per vehicle, in driving order
	routeOf    []int32 // per order: vehicle, -1 when not planned
	succ, pred []int32 // per order: next and previous location (0 = depot)
	objective  float64 // cost without penalties (fixed costs included)
	tw         int     // total time warp
	excess     float64 // total load above capacity
	feasible   bool
	pc         float64     // penalised cost at the current penalties
	prox       []proximity // the other members of its subpopulation, closest first
	fit        float64     // biased fitness, lower is better
}

type proximity struct {
	d float64
	o *individual
}

// ranked is a member's diversity with its cost rank, for fitness.
type ranked struct {
	div float64
	i   int
}

// capture records st as an individual.
func (h *hgs) capture(st *state) *individual {
	s := h.s
	var ind *individual
	if k := len(h.free); k > 0 {
		ind, h.free = h.free[k-1], h.free[:k-1]
	} else {
		ind = &individual{seqs: make([][]int, s.m), routeOf: make([]int32, s.n), succ: make([]int32, s.n), pred: make([]int32, s.n)}
	}
	ind.objective, ind.tw, ind.excess, ind.prox = 0, 0, 0, ind.prox[:0]
	for u := range ind.routeOf {
		ind.routeOf[u] = -1
	}
	for v := range st.routes {
		r := s.fresh(st, v)
		ind.seqs[v] = append(ind.seqs[v][:0], r.seq...)
		prev := int32(0)
		for i, u := range r.seq {
			ind.routeOf[u] = int32(v)
			ind.pred[u] = prev
			prev = int32(u + 1)
			if i > 0 {
				ind.succ[r.seq[i-1]] = prev
			}
		}
		if k := len(r.seq); k > 0 {
			ind.succ[r.seq[k-1]] = 0
			if s.fleet.exact {
				ind.objective += r.x.cost
				ind.tw += r.x.tw
				ind.excess += r.x.excess
				continue
			}
			ind.objective += s.cost(v, &r.full)
			ind.tw += r.full.tw
			ind.excess += s.excess(v, r.full.load)
		}
	}
	ind.feasible = ind.tw == 0 && ind.excess == 0 && st.missing == 0
	ind.pc = h.price(ind)
	return ind
}

func (h *hgs) release(ind *individual) { h.free = append(h.free, ind) }

// brokenPairs is the share of orders whose neighbours differ between a and
// b (Prins's broken-pairs distance, as HGS computes it). Every child is
// compared with every member of its half, so the loop is branch-free: on
// random differences the branches mispredicted (5 % of the genetic
// search's time, docs/PERFORMANCE.md).
func (h *hgs) brokenPairs(a, b *individual) float64 {
	diff := int32(0)
	for _, u := range h.s.assignableOrders {
		as, bs, bp := a.succ[u], b.succ[u], b.pred[u]
		diff += nonZero(as^bs)&nonZero(as^bp) + (1-nonZero(a.pred[u]))&nonZero(bp)&nonZero(bs)
	}
	return float64(diff) / float64(max(1, len(h.s.assignableOrders)))
}

// nonZero is 1 when x is not 0, else 0, without a branch.
func nonZero(x int32) int32 { return int32((uint32(x) | uint32(-x)) >> 31) }

// add puts ind into its subpopulation and selects survivors when the
// subpopulation is full.
func (h *hgs) add(ind *individual) {
	sub := &h.infeas
	if ind.feasible {
		sub = &h.feas
	}
	for _, o := range *sub {
		d := h.brokenPairs(ind, o)
		o.prox = insertProximity(o.prox, proximity{d, ind})
		ind.prox = insertProximity(ind.prox, proximity{d, o})
	}
	i, _ := slices.BinarySearchFunc(*sub, ind.pc, func(x *individual, pc float64) int { return cmp.Compare(x.pc, pc) })
	*sub = slices.Insert(*sub, i, ind)
	if g := &h.s.genetic; len(*sub) > g.popSize+g.generation {
		for len(*sub) > g.popSize {
			h.removeWorst(sub)
		}
	}
}

func insertProximity(list []proximity, p proximity) []proximity {
	i, _ := slices.BinarySearchFunc(list, p.d, func(x proximity, d float64) int { return cmp.Compare(x.d, d) })
	return slices.Insert(list, i, p)
}

// removeWorst removes the member with the worst biased fitness, clones
// first; the cheapest member always stays.
func (h *hgs) removeWorst(sub *[]*individual) {
	list := *sub
	h.fitness(list)
	worst, worstClone := -1, false
	for i := 1; i < len(list); i++ {
		ind := list[i]
		clone := len(ind.prox) > 0 && ind.prox[0].d < 1e-9
		if worst < 0 || clone && !worstClone || clone == worstClone && ind.fit > list[worst].fit {
			worst, worstClone = i, clone
		}
	}
	gone := list[worst]
	*sub = slices.Delete(list, worst, worst+1)
	for _, o := range *sub {
		o.prox = slices.DeleteFunc(o.prox, func(p proximity) bool { return p.o == gone })
	}
	h.release(gone)
}

// fitness computes the biased fitness of a subpopulation sorted by cost.
func (h *hgs) fitness(list []*individual) {
	n := len(list)
	if n == 1 {
		list[0].fit = 0
	}
	if n <= 1 {
		return
	}
	rank := h.rank[:0]
	for i, ind := range list {
		k := min(h.s.genetic.diversityNeighbours, len(ind.prox))
		d := 0.0
		for _, p := range ind.prox[:k] {
			d += p.d
		}
		if k > 0 {
			d /= float64(k)
		}
		rank = append(rank, ranked{-d, i})
	}
	h.rank = rank
	slices.SortStableFunc(rank, func(a, b ranked) int { return cmp.Compare(a.div, b.div) })
	elite := h.s.genetic.elite
	for r, x := range rank {
		div, fit := float64(r)/float64(n-1), float64(x.i)/float64(n-1)
		if n <= elite {
			list[x.i].fit = fit
		} else {
			list[x.i].fit = fit + (1-float64(elite)/float64(n))*div
		}
	}
}

// tournament picks the fitter of two random members of the population.
func (h *hgs) tournament() *individual {
	pick := func() *individual {
		i := h.s.rng.IntN(len(h.feas) + len(h.infeas))
		if i < len(h.feas) {
			return h.feas[i]
		}
		return h.infeas[i-len(h.feas)]
	}
	a, b := pick(), pick()
	if b.fit < a.fit {
		return b
	}
	return a
}
