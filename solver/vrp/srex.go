package vrp

import (
	"cmp"
	"slices"
)

// crossover builds a child of a and b in h.work by a selective route
// exchange (SREX, Nagata & Kobayashi): a few neighbouring routes of a are
// replaced by the routes of b that share most orders with them. Routes are
// chosen by the neighbour lists around a random order, not by polar angle,
// so that it works on road matrices without coordinates. Of the two
// children (b's routes trimmed to the orders of a's removed routes, or a's
// other routes trimmed of the orders b brings) the cheaper one is kept;
// orders left out are inserted at their cheapest position.
func (h *hgs) crossover(a, b *individual) {
	s := h.s
	nA, nB := 0, 0
	for v := range a.seqs {
		if len(a.seqs[v]) > 0 {
			nA++
		}
		if len(b.seqs[v]) > 0 {
			nB++
		}
	}
	if nA == 0 || nB == 0 {
		h.loadSeqs(h.work, a.seqs)
		return
	}
	nMove := 1 + s.rng.IntN(max(1, min(nA, nB)/2))

	// a's routes met first from a random order through neighbour lists.
	h.stamp++
	stamp := h.stamp
	seed := -1
	for k, start := 0, s.rng.IntN(s.n); k < s.n; k++ {
		if u := (start + k) % s.n; a.routeOf[u] >= 0 {
			seed = u
			break
		}
	}
	queue := append(h.queue[:0], seed)
	h.visit[seed] = stamp
	var selected []int
	for qi := 0; qi < len(queue) && len(selected) < nMove; qi++ {
		u := queue[qi]
		if v := int(a.routeOf[u]); v >= 0 && h.selA[v] != stamp {
			h.selA[v] = stamp
			selected = append(selected, v)
		}
		for _, w := range s.nb[u] {
			if h.visit[w] != stamp {
				h.visit[w] = stamp
				queue = append(queue, w)
			}
		}
	}
	h.queue = queue
	for _, v := range selected {
		for _, u := range a.seqs[v] {
			h.inA[u] = stamp
		}
	}

	// b's routes holding most of those orders.
	routesB := h.routesB[:0]
	for v := range b.seqs {
		h.score[v] = 0
		if len(b.seqs[v]) == 0 {
			continue
		}
		for _, u := range b.seqs[v] {
			if h.inA[u] == stamp {
				h.score[v]++
			}
		}
		routesB = append(routesB, v)
	}
	s.rng.Shuffle(len(routesB), func(i, j int) { routesB[i], routesB[j] = routesB[j], routesB[i] })
	slices.SortStableFunc(routesB, func(x, y int) int { return cmp.Compare(h.score[y], h.score[x]) })
	routesB = routesB[:min(len(selected), len(routesB))]
	h.routesB = routesB
	for _, v := range routesB {
		for _, u := range b.seqs[v] {
			h.inB[u] = stamp
		}
	}

	h.child(a, b, selected, routesB, stamp, false, h.work)
	h.child(a, b, selected, routesB, stamp, true, h.trial)
	if h.trial.cost < h.work.cost {
		h.work, h.trial = h.trial, h.work
	}
}

// child builds one SREX child into st: a without its selected routes, plus
// b's routes. With trimA, a's other routes lose the orders b's routes
// bring; without it, b's routes keep only the orders of a's selected
// routes. The orders of a's selected routes that b's routes lack are then
// inserted at their cheapest positions.
func (h *hgs) child(a, b *individual, selected, routesB []int, stamp int, trimA bool, st *state) {
	s := h.s
	for v := range h.seqs {
		h.seqs[v] = h.seqs[v][:0]
		if h.selA[v] == stamp {
			continue
		}
		for _, u := range a.seqs[v] {
			if !trimA || h.inB[u] != stamp {
				h.seqs[v] = append(h.seqs[v], u)
			}
		}
	}
	for _, vb := range routesB {
		v := vb
		if len(h.seqs[v]) > 0 {
			v = h.emptyVehicle(s.typeOf[vb])
		}
		if v < 0 {
			continue // its orders are inserted below
		}
		for _, u := range b.seqs[vb] {
			if trimA || h.inA[u] == stamp {
				h.seqs[v] = append(h.seqs[v], u)
			}
		}
	}
	h.loadSeqs(st, h.seqs)
	missing := h.missing[:0]
	for _, v := range selected {
		for _, u := range a.seqs[v] {
			if st.routeOf[u] < 0 {
				missing = append(missing, u)
			}
		}
	}
	for _, vb := range routesB {
		for _, u := range b.seqs[vb] {
			if st.routeOf[u] < 0 && (trimA || h.inA[u] == stamp) {
				missing = append(missing, u)
			}
		}
	}
	s.rng.Shuffle(len(missing), func(i, j int) { missing[i], missing[j] = missing[j], missing[i] })
	for _, u := range missing {
		if st.routeOf[u] >= 0 {
			continue
		}
		if v, q, _ := s.bestInsertion(st, u, 0, true); v >= 0 {
			s.insert(st, u, v, q)
		}
	}
	h.missing = missing
}

// emptyVehicle is a vehicle without orders in h.seqs, of type t if there
// is one, else of any type; -1 if none.
func (h *hgs) emptyVehicle(t int) int {
	s := h.s
	for _, v := range s.types[t] {
		if len(h.seqs[v]) == 0 {
			return v
		}
	}
	for v := range h.seqs {
		if len(h.seqs[v]) == 0 {
			return v
		}
	}
	return -1
}
