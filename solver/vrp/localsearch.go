package vrp

import (
	"fmt"
	"slices"
)

// improveEps is the smallest cost decrease that counts as an improvement.
const improveEps = 1e-7

// localSearch applies first-improvement moves around each order's nearest
// neighbours until no move improves (or time is up):
//
//   - relocate / or-opt (relocate.go): move a string of orders starting at
//     u next to a neighbour w (before or after it): to another route, 1..2
//     orders in their order; within the route, 1..2 orders forward or
//     reversed (1..3 in hard mode, and within a route with EAX: see
//     maxString and maxStringWithin);
//   - swap u with w (swap.go);
//   - 2-opt* (between routes, twooptstar.go): exchange the tails after u
//     and after (or from) w;
//   - 2-opt (within a route, twoopt.go): reverse the path between u and w;
//   - move u alone to an empty vehicle of another type or with a cheaper
//     fixed cost (emptyvehicle.go);
//   - in soft mode, move the orders after u to an empty vehicle when u's
//     route has time warp or excess load (emptyvehicle.go);
//   - in the genetic search on short routes with a long time limit, once
//     the moves above stop improving: RELOCATE* and SWAP* between
//     neighbouring routes (swapstar.go, intensify);
//   - insert orders that are not planned wherever they fit.
//
// Moves between routes are evaluated in O(1) from the cached segments (plus
// the moved string); moves inside a route walk only the changed part.
func (s *solver) localSearch(st *state) {
	order := slices.Clone(s.assignableOrders)
	// The first pass tests every order with every neighbour; later passes
	// only the pairs with a route changed since the order's last test.
	s.skipTested = false
	defer func() { s.skipTested = false }()
	intensify := s.intensify()
	if intensify {
		s.startSwapStar()
	}
	for {
		improved := s.insertMissing(st)
		s.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, u := range order {
			if s.poll() {
				return
			}
			if st.routeOf[u] >= 0 && s.improveOrder(st, u) {
				improved = true
				if debugVerify {
					s.verify(st, "local search")
				}
			}
		}
		if !improved && (!intensify || !s.swapStarPass(st)) {
			return
		}
		s.skipTested = !s.opt.Ablation.RetestAll
	}
}

// localSearchRoutes is localSearch restricted to the orders of the given
// routes and of the routes that its moves change (a worklist), so that a
// few changed routes are polished without a pass over the whole plan.
func (s *solver) localSearchRoutes(st *state, routes []int) {
	s.trackChanged = true
	defer func() { s.trackChanged = false }()
	s.queue = append(s.queue[:0], routes...)
	s.stamp++
	for _, v := range s.queue {
		s.mark[v] = s.stamp
	}
	for len(s.queue) > 0 {
		v := s.queue[len(s.queue)-1]
		s.queue = s.queue[:len(s.queue)-1]
		s.mark[v] = 0
		orders := append(s.orders[:0], st.routes[v].seq...)
		s.orders = orders
		for _, u := range orders {
			if s.poll() {
				return
			}
			if st.routeOf[u] < 0 {
				continue
			}
			s.changed = s.changed[:0]
			if !s.improveOrder(st, u) {
				continue
			}
			if debugVerify {
				s.verify(st, "local search of routes")
			}
			for _, c := range s.changed {
				if s.mark[c] != s.stamp && len(st.routes[c].seq) > 0 {
					s.mark[c] = s.stamp
					s.queue = append(s.queue, c)
				}
			}
		}
	}
}

// insertMissing inserts planned-out orders at their best feasible position.
func (s *solver) insertMissing(st *state) bool {
	if st.missing == 0 {
		return false
	}
	any := false
	for _, u := range s.assignableOrders {
		if st.routeOf[u] >= 0 {
			continue
		}
		if v, q, _ := s.bestInsertion(st, u, 0, false); v >= 0 {
			s.insert(st, u, v, q)
			any = true
		}
	}
	return any
}

// improveOrder tries the moves of u with its neighbours and applies the first
// improving one.
func (s *solver) improveOrder(st *state, u int) bool {
	s.out.valid = false
	since := s.tested[u]
	s.tested[u] = s.moves
	nb := s.nb[u]
	if s.granular > 0 && s.granular < len(nb) {
		nb = nb[:s.granular]
	}
	a := st.routeOf[u]
	aFree := s.pricesRose && s.routeFree(st, a)
	for _, w := range nb {
		b := st.routeOf[w]
		if b < 0 || (s.skipTested || aFree && s.routeFree(st, b)) && max(s.modified[a], s.modified[b]) <= since {
			continue
		}
		s.fresh(st, a)
		s.fresh(st, b)
		if a != b {
			if s.interMoves(st, a, st.posOf[u], b, st.posOf[w]) {
				return true
			}
		} else if s.intraMoves(st, a, st.posOf[u], st.posOf[w]) {
			return true
		}
	}
	return s.moveToEmpty(st, u) || s.splitToEmpty(st, u)
}

// interMoves tries moves between route a (u at position i) and route b (w at
// position j) and applies the first that improves: relocate, swap, 2-opt*.
// Each candidate is first bounded from edge sums (exact for the distance
// objective), and only promising ones are evaluated with segments.
func (s *solver) interMoves(st *state, a, i, b, j int) bool {
	base := st.routes[a].cost + st.routes[b].cost - improveEps
	return s.relocateBetween(st, a, i, b, j, base) ||
		s.swapBetween(st, a, i, b, j, base) ||
		s.twoOptStar(st, a, i, b, j, base)
}

// intraMoves tries moves inside route v between positions i (u) and j (w)
// and applies the first that improves: relocate (or-opt), 2-opt, swap.
// Each candidate is first bounded from the change of its edges, computed
// in O(1) from the few edges it replaces (O(length) only for a reversal on
// an asymmetric matrix); only promising ones are evaluated with segments.
func (s *solver) intraMoves(st *state, v, i, j int) bool {
	r := &st.routes[v]
	k := len(r.seq)
	c := &withinRoute{
		v: v, k: k, r: r, scan: r.scan[:k+1], start: s.startLoc[v],
		e0: s.edges(&r.full), limit: r.cost - improveEps,
		// In soft mode the route keeps its load, so its excess load
		// penalty is part of every candidate's cost.
		soft: s.softBound(v, 0, r.full.load),
	}
	if s.relocateWithin(st, c, i, j) {
		return true
	}
	lo, hi := min(i, j), max(i, j)
	return s.twoOpt(st, c, lo, hi) || s.swapWithin(st, c, lo, hi)
}

// withinRoute is what the moves inside route v share while improveOrder
// tests one pair of its orders.
type withinRoute struct {
	v, k  int
	start int // the vehicle's start location
	r     *route
	scan  []scanPos // r.scan[:k+1]
	e0    int       // the route's edges
	limit float64   // its cost less improveEps: a move must cost less
	soft  float64   // the penalty every candidate keeps (see softBound)
}

// loc is the location at position x: the start location before the first
// order, the end location after the last (r.scan holds it for 0 <= x <= k).
func (c *withinRoute) loc(x int) int {
	if x < 0 {
		return c.start
	}
	return c.scan[x].next
}

// boundWithin is the cost bound of c's route with its edges changed by de.
func (s *solver) boundWithin(c *withinRoute, de int) float64 {
	return s.bound(c.v, c.k, c.e0+de, c.r.full.svc)
}

// tryIntra evaluates replacing seq[lo:hi+1] of route v by mid (the same
// orders in another order), whose cost is at least lb and whose penalty
// is at least soft plus that of the time warp of the parts it keeps, and
// applies it when it improves.
func (s *solver) tryIntra(st *state, v, lo, hi int, mid []int, lb, soft float64) bool {
	r := &st.routes[v]
	if s.soft {
		if soft += s.softBound(v, r.pre[lo].tw+r.tail[hi+1].tw, 0); lb+soft >= r.cost-improveEps {
			return false
		}
	}
	// Time warp only grows as orders are added, so the walk over mid
	// stops as soon as the time warp it adds rules the move out (most
	// candidates that pass the edge bound fail here; on long routes the
	// walk was a fifth of the genetic search's time).
	x, limit := r.pre[lo], r.cost-improveEps
	for _, u := range mid {
		x = s.merge(&x, &s.single[u])
		if x.tw > r.pre[lo].tw && (!s.soft || lb+soft+s.softBound(v, x.tw-r.pre[lo].tw, 0) >= limit) {
			return false
		}
	}
	full := s.merge(&x, &r.tail[hi+1])
	if debugVerify {
		s.assertBound(lb, soft, v, full)
	}
	if !s.admits(v, &full) || s.pcost(v, &full) >= limit {
		return false
	}
	if s.fleet.exact {
		buf := append(append(append(s.bufC[:0], r.seq[:lo]...), mid...), r.seq[hi+1:]...)
		s.bufC = buf
		if !s.keeps(v, buf, -1, nil, limit) {
			return false
		}
	}
	copy(r.seq[lo:hi+1], mid)
	s.rebuild(st, v)
	return true
}

// assertBound panics when lb is not a lower bound of the cost of full
// (tests only), or, for the distance objective, not the exact cost, or
// when soft is not a lower bound of its penalty.
func (s *solver) assertBound(lb, soft float64, v int, full seg) {
	c := s.cost(v, &full)
	if c < lb-1e-6 || s.obj == ObjectiveDistance && c != lb {
		panic(fmt.Sprintf("vehicle %d: bound %v, cost %v (%+v)", v, lb, c, full))
	}
	if p := s.pcost(v, &full) - c; p < soft-1e-6*max(1, p) {
		panic(fmt.Sprintf("vehicle %d: penalty bound %v, penalty %v (%+v)", v, soft, p, full))
	}
}

// softBound is, in soft mode, a lower bound of the penalty of a route of
// vehicle v that keeps parts whose time warp sums to tw and carries load:
// merging sequences only adds time warp. It is 0 in hard mode. The factor
// keeps it below the penalty the segments give despite rounding, so that
// it never skips an improving move.
func (s *solver) softBound(v, tw int, load float64) float64 {
	if !s.soft {
		return 0
	}
	return (s.twPen*float64(tw) + s.loadPen*s.excess(v, load)) * (1 - 1e-9)
}

func reverse(x []int) {
	for i, j := 0, len(x)-1; i < j; i, j = i+1, j-1 {
		x[i], x[j] = x[j], x[i]
	}
}
