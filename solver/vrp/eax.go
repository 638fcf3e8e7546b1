package vrp

import "math"

// Edge assembly crossover (EAX; Nagata, Bräysy & Dullaert 2010, "A
// penalty-based edge assembly memetic algorithm for the vehicle routing
// problem with time windows"). The edges in which two parents differ
// split into AB-cycles, each alternating an edge of a with an edge of b
// walked backwards. The child is a with two random AB-cycles applied (the
// paper's single strategy applies one; see eax): their edges of a removed,
// their edges of b added. That leaves every order with one predecessor
// and one successor, but some may now form subtours apart from the depot;
// each subtour is merged into a route next to a neighbour, by the exchange
// of two edges that costs least. Where SREX (crossover) moves whole
// routes, EAX moves a few edges across several routes: on short-route
// problems, where a plan near the best-known one differs from it in
// strings of orders spread over many routes, that is the change the local
// search cannot make alone (see useEAX).
//
// Locations are node ids here: 0 is the depot, u+1 is order u.

// eaxEdge is one edge of an AB-cycle.
type eaxEdge struct {
	fromA      bool // an edge of a (else of b)
	tail, head int  // node ids
}

// eaxScratch is the crossover's working memory, one per genetic search.
type eaxScratch struct {
	// Per order: its out edge in a, or its in edge in b, is shared by both
	// parents or already in a cycle.
	doneA, doneB []bool
	// The depot's edges not shared: heads of a's edges out of it, tails of
	// b's edges into it.
	depotA, depotB []int
	walk           []eaxEdge
	// Positions in walk of the edges before each visit of the depot that
	// still waits for an edge of a (atDepotA) or of b (atDepotB).
	atDepotA, atDepotB []int
	edges              []eaxEdge // every cycle's edges, one after the other
	cycleEnd           []int     // end of each cycle in edges
	union              []eaxEdge // the edges of the cycles applied
	starts             []int
	succ, pred         []int // the child's, node ids, per order
	firsts             []int // the child's route starts (node ids), -1 once removed
	subtour            []int
	seen               []int // per order, compared with stamp
	stamp              int
}

// useEAX reports whether half the crossovers of the genetic search are EAX:
// on problems with one vehicle type (the crossover assumes that any route
// can be driven by any vehicle), short routes (see hasLongRoutes) and at
// most geneticParams.eaxMaxOrders orders. See geneticParams.eaxShare.
func (s *solver) useEAX() bool {
	return !s.opt.Ablation.NoEAX && len(s.types) == 1 && !s.longRoutes && len(s.assignableOrders) <= s.genetic.eaxMaxOrders
}

// eax builds a child of a and b into st by EAX: a with two random
// AB-cycles applied (one when there is only one). It reports false when it
// cannot (the parents plan different orders, they share every edge, or the
// child needs more routes than there are vehicles), and then st is left as
// it was.
//
// Two cycles make children further from a than one; that helped rc102,
// whose good plans differ from a stuck one in many routes, and cost r108,
// whose children then took longer to polish, which the local search of
// the changed routes alone (searchChangedOnly) gives back.
func (h *hgs) eax(a, b *individual, st *state) bool {
	if !h.abCycles(a, b) {
		return false
	}
	x := &h.ex
	n := len(x.cycleEnd)
	c := h.s.rng.IntN(n)
	if n == 1 {
		return h.eaxChild(a, x.cycle(c), st)
	}
	d := h.s.rng.IntN(n - 1)
	if d >= c {
		d++
	}
	x.union = append(append(x.union[:0], x.cycle(c)...), x.cycle(d)...)
	return h.eaxChild(a, x.union, st)
}

// cycle is AB-cycle c's edges.
func (x *eaxScratch) cycle(c int) []eaxEdge {
	from := 0
	if c > 0 {
		from = x.cycleEnd[c-1]
	}
	return x.edges[from:x.cycleEnd[c]]
}

// abCycles collects the AB-cycles of a and b in h.ex; false when there are
// none or the parents do not plan the same orders.
func (h *hgs) abCycles(a, b *individual) bool {
	s, x := h.s, &h.ex
	n := s.n
	if len(x.doneA) != n {
		x.doneA, x.doneB = make([]bool, n), make([]bool, n)
		x.succ, x.pred, x.seen = make([]int, n), make([]int, n), make([]int, n)
	}
	x.depotA, x.depotB, x.starts = x.depotA[:0], x.depotB[:0], x.starts[:0]
	for u := range n {
		if (a.routeOf[u] >= 0) != (b.routeOf[u] >= 0) {
			return false
		}
		if a.routeOf[u] < 0 {
			x.doneA[u], x.doneB[u] = true, true
			continue
		}
		x.doneA[u] = b.succ[u] == a.succ[u]
		x.doneB[u] = a.pred[u] == b.pred[u]
		if a.pred[u] == 0 && b.pred[u] != 0 {
			x.depotA = append(x.depotA, u+1)
		}
		if b.succ[u] == 0 && a.succ[u] != 0 {
			x.depotB = append(x.depotB, u+1)
		}
		if !x.doneA[u] {
			x.starts = append(x.starts, u)
		}
	}
	s.rng.Shuffle(len(x.starts), func(i, j int) { x.starts[i], x.starts[j] = x.starts[j], x.starts[i] })
	x.edges, x.cycleEnd = x.edges[:0], x.cycleEnd[:0]
	for _, u := range x.starts {
		if !x.doneA[u] {
			h.walkFrom(a, b, u+1)
		}
	}
	return len(x.cycleEnd) > 0
}

// walkFrom walks alternately along a's free edge out of a node and b's free
// edge into the head of that edge, from start until it closes, recording
// every closed cycle. The depot has many edges: at each visit the walk
// takes a random free one, and the part of the walk since its last visit
// of the depot in the same phase closes a cycle there. A walk that finds
// no free edge is dropped (its edges stay used).
func (h *hgs) walkFrom(a, b *individual, start int) {
	s, x := h.s, &h.ex
	// atDepot records a visit of the depot that needs an edge from free:
	// the first such visit is remembered in mine; at a later one, the walk
	// since then closes a cycle, and visits of the other phase after it
	// are forgotten. It returns the other end of a random free edge, or -1.
	atDepot := func(mine, other, free *[]int) int {
		if len(*mine) == 0 {
			*mine = append(*mine, len(x.walk)-1)
		} else {
			j := (*mine)[len(*mine)-1]
			x.edges = append(x.edges, x.walk[j+1:]...)
			x.cycleEnd = append(x.cycleEnd, len(x.edges))
			x.walk = x.walk[:j+1]
			for len(*other) > 0 && (*other)[len(*other)-1] > j {
				*other = (*other)[:len(*other)-1]
			}
		}
		l := *free
		if len(l) == 0 {
			return -1
		}
		k := s.rng.IntN(len(l))
		v := l[k]
		l[k] = l[len(l)-1]
		*free = l[:len(l)-1]
		return v
	}
	x.walk, x.atDepotA, x.atDepotB = x.walk[:0], x.atDepotA[:0], x.atDepotB[:0]
	y := start // the walk is at y and needs a's edge out of it
	for steps := 0; ; steps++ {
		if steps > 4*s.n+10 {
			return
		}
		var q int // head of a's edge out of y
		if y == 0 {
			if q = atDepot(&x.atDepotA, &x.atDepotB, &x.depotA); q < 0 {
				return
			}
		} else {
			if y == start && len(x.walk) > 0 {
				break
			}
			if x.doneA[y-1] {
				return
			}
			x.doneA[y-1] = true
			q = int(a.succ[y-1])
		}
		x.walk = append(x.walk, eaxEdge{fromA: true, tail: y, head: q})
		var t int // tail of b's edge into q
		if q == 0 {
			if t = atDepot(&x.atDepotB, &x.atDepotA, &x.depotB); t < 0 {
				return
			}
		} else {
			if x.doneB[q-1] {
				return
			}
			x.doneB[q-1] = true
			t = int(b.pred[q-1])
		}
		x.walk = append(x.walk, eaxEdge{fromA: false, tail: t, head: q})
		y = t
	}
	if len(x.walk) > 0 {
		x.edges = append(x.edges, x.walk...)
		x.cycleEnd = append(x.cycleEnd, len(x.edges))
	}
}

// eaxChild applies cycle (the edges of one or more AB-cycles) to a, merges
// the subtours into routes and loads the result into st.
func (h *hgs) eaxChild(a *individual, cycle []eaxEdge, st *state) bool {
	s, x := h.s, &h.ex
	n := s.n
	for u := range n {
		x.succ[u], x.pred[u] = int(a.succ[u]), int(a.pred[u])
	}
	x.firsts = x.firsts[:0]
	for _, q := range a.seqs {
		if len(q) > 0 {
			x.firsts = append(x.firsts, q[0]+1)
		}
	}
	for _, e := range cycle {
		if e.fromA && e.tail == 0 {
			for i, f := range x.firsts {
				if f == e.head {
					x.firsts[i] = -1
					break
				}
			}
		}
	}
	// Every order in the cycle is the tail (head) of one edge of a and one
	// of b, so setting b's edges overwrites a's.
	for _, e := range cycle {
		if e.fromA {
			continue
		}
		if e.tail == 0 {
			x.firsts = append(x.firsts, e.head)
		} else {
			x.succ[e.tail-1] = e.head
		}
		if e.head != 0 {
			x.pred[e.head-1] = e.tail
		}
	}
	x.stamp++
	stamp := x.stamp
	for _, f := range x.firsts {
		for v, k := f, 0; v > 0; v, k = x.succ[v-1], k+1 {
			if k > n || x.seen[v-1] == stamp {
				return false
			}
			x.seen[v-1] = stamp
		}
	}
	for u := range n {
		if a.routeOf[u] >= 0 && x.seen[u] != stamp && !h.mergeSubtour(u, stamp) {
			return false
		}
	}
	// The child's routes, one per vehicle.
	x.stamp++
	stamp = x.stamp
	for v := range h.seqs {
		h.seqs[v] = h.seqs[v][:0]
	}
	v := 0
	for _, f := range x.firsts {
		if f < 0 {
			continue
		}
		if v == len(h.seqs) {
			return false
		}
		for w, k := f, 0; w != 0; w, k = x.succ[w-1], k+1 {
			if k > n || x.seen[w-1] == stamp {
				return false
			}
			x.seen[w-1] = stamp
			h.seqs[v] = append(h.seqs[v], w-1)
		}
		v++
	}
	for u := range n {
		if a.routeOf[u] >= 0 && x.seen[u] != stamp {
			return false
		}
	}
	h.loadSeqs(st, h.seqs)
	return true
}

// mergeSubtour joins the subtour through order u to a route: for some
// order w of it and a neighbour v of w on a route, either v's edge out and
// the subtour's edge into w, or v's edge in and the subtour's edge out of
// w, are swapped for the two edges that link them, whichever of these
// exchanges adds least. The subtour's orders are then marked seen.
func (h *hgs) mergeSubtour(u, stamp int) bool {
	s, x := h.s, &h.ex
	sub := x.subtour[:0]
	for w, k := u+1, 0; ; w, k = x.succ[w-1], k+1 {
		if w == 0 || k > s.n {
			return false
		}
		if len(sub) > 0 && w == u+1 {
			break
		}
		sub = append(sub, w-1)
	}
	x.subtour = sub
	bestD, bestW, bestV, after := math.MaxInt, -1, -1, false
	for _, w := range sub {
		pw, sw := x.pred[w], x.succ[w]
		for _, v := range s.nb[w] {
			if x.seen[v] != stamp {
				continue
			}
			// v, then w ... pw, then v's successor.
			vn := x.succ[v]
			if d := s.arc(v+1, w+1) + s.arc(pw, vn) - s.arc(pw, w+1) - s.arc(v+1, vn); d < bestD {
				bestD, bestW, bestV, after = d, w, v, true
			}
			// v's predecessor, then sw ... w, then v.
			pv := x.pred[v]
			if d := s.arc(pv, sw) + s.arc(w+1, v+1) - s.arc(w+1, sw) - s.arc(pv, v+1); d < bestD {
				bestD, bestW, bestV, after = d, w, v, false
			}
		}
	}
	if bestW < 0 {
		return false
	}
	w, v := bestW, bestV
	if after {
		pw, vn := x.pred[w], x.succ[v]
		x.succ[v], x.pred[w] = w+1, v+1
		x.succ[pw-1] = vn
		if vn != 0 {
			x.pred[vn-1] = pw
		}
	} else {
		sw, pv := x.succ[w], x.pred[v]
		x.succ[w], x.pred[v] = v+1, w+1
		x.pred[sw-1] = pv
		if pv != 0 {
			x.succ[pv-1] = sw
		} else {
			for i, f := range x.firsts {
				if f == v+1 {
					x.firsts[i] = sw
				}
			}
		}
	}
	for _, o := range sub {
		x.seen[o] = stamp
	}
	return true
}
