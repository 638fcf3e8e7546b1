package vrp

import (
	"fmt"
	"math"
	"slices"
)

// improveEps is the smallest cost decrease that counts as an improvement.
const improveEps = 1e-7

// maxString is the longest string of orders the local search moves. Between
// routes a string keeps its order (reversed strings, which HGS and PyVRP
// leave out too, made the search slower and the plans no better); within a
// route it may be reversed. In soft mode, the genetic search's local search
// of every child, strings of 3 made a child slower and the plans no better:
//   - between routes, without them, mean gap over 3 seeds on Solomon at
//     1.5 s 0.127 % against 0.152 %, on gh200-sample at 5 s 0.123 % against
//     0.175 %, gh400-sample at 30 s within noise;
//   - within a route (HGS's limit too), on Solomon's five worst instances at
//     1.5 s a seed with one above 1 % at 30 seeds of 48 against 34, on
//     gh200-sample at 5 s 0.040 % against 0.064 % (4 seeds), all of Solomon
//     at 1.5 s and gh400-sample at 30 s level.
//
// In hard mode, which polishes the new best plans of ruin-and-recreate,
// strings of 3 stay: without them between routes the 500-order city problem
// at 10 s was 0.6 % dearer (seeds 1-6: 951,446 against 945,225). See
// docs/PERFORMANCE.md.
func (s *solver) maxString() int {
	if s.soft {
		return 2
	}
	return 3
}

// maxStringWithin is the longest string moved within a route: maxString,
// except that strings of 3 stay in soft mode where the genetic search uses
// EAX (useEAX). They were measured together: EAX alone and strings of 3
// alone each left all of Solomon at 1.5 s level on its worst instance;
// both, on short routes only, made it better (see geneticParams.eaxShare).
func (s *solver) maxStringWithin() int {
	if s.edgeAssembly {
		return 3
	}
	return s.maxString()
}

// localSearch applies first-improvement moves around each order's nearest
// neighbours until no move improves (or time is up):
//
//   - relocate / or-opt: move a string of orders starting at u next to a
//     neighbour w (before or after it): to another route, 1..2 orders in
//     their order; within the route, 1..2 orders forward or reversed
//     (1..3 in hard mode or with EAX, see maxStringWithin);
//   - swap u with w;
//   - 2-opt* (between routes): exchange the tails after u and after (or
//     from) w;
//   - 2-opt (within a route): reverse the path between u and w;
//   - move u alone to an empty vehicle of another type or with a cheaper
//     fixed cost;
//   - in soft mode, move the orders after u to an empty vehicle when u's
//     route has time warp or excess load;
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
	aFree := s.pricesRose && s.feasible(a, &st.routes[a].full)
	for _, w := range nb {
		b := st.routeOf[w]
		if b < 0 || (s.skipTested || aFree && s.feasible(b, &st.routes[b].full)) && max(s.modified[a], s.modified[b]) <= since {
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
// position j). Each candidate is first bounded from edge sums (exact for the
// distance objective), and only promising ones are evaluated with segments.
func (s *solver) interMoves(st *state, a, i, b, j int) bool {
	ra, rb := &st.routes[a], &st.routes[b]
	ka, kb := len(ra.seq), len(rb.seq)
	base := ra.cost + rb.cost - improveEps

	// Relocate: ra.seq[i:i+L] goes, in its order, before position q of b.
	// What does not depend on b (the string and route a without it) is
	// the same for every neighbour of u (see outStrings). The legs into
	// the string are read from its first order's row of legsIn (arcIn).
	out := s.outOf(st, a, i)
	for L := 1; L <= out.n; L++ {
		o := &out.str[L-1]
		str := ra.seq[i : i+L]
		if !s.soft && !fitsCapacity(st.load[b]+o.load, s.capacity[b]) {
			break
		}
		if o.lbA+o.softA >= base {
			continue
		}
		lbA, softA := o.lbA, o.softA
		for _, q := range [2]int{j, j + 1} {
			eB := s.edges(&rb.pre[q]) + s.arcIn(rb.pre[q].last, o.first) + o.edges + s.arc(o.last, rb.tail[q].first) + s.edges(&rb.tail[q])
			lbB := s.bound(b, kb+L, eB, rb.full.svc+o.svc)
			softB := 0.0
			if lbA+softA+lbB < base || debugVerify {
				tw := s.insertWarp(rb, q, o.first, o.last)
				if !s.soft && tw > 0 {
					continue
				}
				softB = s.softBound(b, tw, rb.pre[q].load+o.load+rb.tail[q].load)
			}
			if debugVerify {
				s.assertBound(lbA, softA, a, s.merge(&ra.pre[i], &ra.tail[i+L]))
				x := s.chain(&emptySeg, str)
				s.assertBound(lbB, softB, b, s.merge3(&rb.pre[q], &x, &rb.tail[q]))
			}
			if lbA+softA+lbB+softB >= base {
				continue
			}
			if !o.haveA {
				o.newA, o.haveA = s.merge(&ra.pre[i], &ra.tail[i+L]), true
				o.costA = s.pcost(a, &o.newA)
			}
			if !s.admits(a, &o.newA) {
				break
			}
			if !o.haveSeg {
				o.seg, o.haveSeg = s.chain(&emptySeg, str), true
			}
			newB := s.merge3(&rb.pre[q], &o.seg, &rb.tail[q])
			if !s.admits(b, &newB) || o.costA+s.pcost(b, &newB) >= base {
				continue
			}
			bufB := append(append(append(s.bufB[:0], rb.seq[:q]...), str...), rb.seq[q:]...)
			bufA := append(append(s.bufA[:0], ra.seq[:i]...), ra.seq[i+L:]...)
			s.bufA, s.bufB = bufA, bufB
			s.setSeq(st, a, bufA)
			s.setSeq(st, b, bufB)
			return true
		}
	}

	// Swap u and w.
	u, w := ra.seq[i], rb.seq[j]
	su, sw := &s.single[u], &s.single[w]
	eA := s.edges(&ra.pre[i]) + s.arcIn(ra.pre[i].last, w+1) + s.arc(w+1, ra.tail[i+1].first) + s.edges(&ra.tail[i+1])
	eB := s.edges(&rb.pre[j]) + s.arcIn(rb.pre[j].last, u+1) + s.arc(u+1, rb.tail[j+1].first) + s.edges(&rb.tail[j+1])
	lbA, lbB := s.bound(a, ka, eA, ra.full.svc-su.svc+sw.svc), s.bound(b, kb, eB, rb.full.svc-sw.svc+su.svc)
	var softA, softB float64
	if lbA+lbB < base || debugVerify {
		softA = s.softBound(a, ra.pre[i].tw+ra.tail[i+1].tw, ra.pre[i].load+sw.load+ra.tail[i+1].load)
		softB = s.softBound(b, rb.pre[j].tw+rb.tail[j+1].tw, rb.pre[j].load+su.load+rb.tail[j+1].load)
	}
	if debugVerify {
		s.assertBound(lbA, softA, a, s.merge3(&ra.pre[i], sw, &ra.tail[i+1]))
		s.assertBound(lbB, softB, b, s.merge3(&rb.pre[j], su, &rb.tail[j+1]))
	}
	if lbA+softA+lbB+softB < base {
		newA := s.merge3(&ra.pre[i], sw, &ra.tail[i+1])
		if s.admits(a, &newA) {
			newB := s.merge3(&rb.pre[j], su, &rb.tail[j+1])
			if s.admits(b, &newB) && s.pcost(a, &newA)+s.pcost(b, &newB) < base {
				ra.seq[i], rb.seq[j] = w, u
				s.rebuild(st, a)
				s.rebuild(st, b)
				return true
			}
		}
	}

	// 2-opt*: a keeps seq[:i+1] and takes b's tail from cut; b keeps
	// seq[:cut] and takes a's tail after u. cut = j+1 puts u before w's
	// successor, cut = j puts u right before w.
	for _, cut := range [2]int{j + 1, j} {
		if i+1 == ka && cut == kb {
			continue // nothing changes
		}
		// The tails come with their own route's end depot; the other
		// route's depot is only merged in when the shifts differ.
		preA, tailA, preB, tailB := &ra.pre[i+1], &ra.tail[i+1], &rb.pre[cut], &rb.tail[cut]
		lbA := s.bound(a, preA.n+tailB.n, s.closeEdges(preA, tailB), preA.svc+tailB.svc)
		lbB := s.bound(b, preB.n+tailA.n, s.closeEdges(preB, tailA), preB.svc+tailA.svc)
		var softA, softB float64
		if lbA+lbB < base || debugVerify {
			// A tail keeps its time warp only where both vehicles
			// end at the same depot window (see retail).
			twA, twB := preA.tw, preB.tw
			if s.depot[a] == s.depot[b] {
				twA, twB = twA+tailB.tw, twB+tailA.tw
			}
			softA = s.softBound(a, twA, preA.load+tailB.load)
			softB = s.softBound(b, twB, preB.load+tailA.load)
		}
		if debugVerify {
			ta, tb := s.retail(st, b, cut, a), s.retail(st, a, i+1, b)
			s.assertBound(lbA, softA, a, s.merge(preA, &ta))
			s.assertBound(lbB, softB, b, s.merge(preB, &tb))
		}
		if lbA+softA+lbB+softB >= base {
			continue
		}
		newA := s.mergeTail(preA, st, b, cut, a)
		if !s.admits(a, &newA) {
			continue
		}
		newB := s.mergeTail(preB, st, a, i+1, b)
		if !s.admits(b, &newB) || s.pcost(a, &newA)+s.pcost(b, &newB) >= base {
			continue
		}
		bufA := append(append(s.bufA[:0], ra.seq[:i+1]...), rb.seq[cut:]...)
		bufB := append(append(s.bufB[:0], rb.seq[:cut]...), ra.seq[i+1:]...)
		s.bufA, s.bufB = bufA, bufB
		s.setSeq(st, a, bufA)
		s.setSeq(st, b, bufB)
		return true
	}
	return false
}

// outStrings describes the strings of up to maxString orders that start at
// the order improveOrder is testing (at position i of route a), and route a
// without each of them. None of it depends on the neighbour tried, so
// interMoves computes it once per improveOrder call (valid) instead of once
// per neighbour; the segments, dearer, only when a move needs them.
type outStrings struct {
	valid bool
	n     int // strings of 1..n orders fit in the route
	str   [maxStringLimit]outString
}

// outString is one string of outStrings.
type outString struct {
	first, last int     // locations of its first and last order
	edges       int     // edges inside it
	svc         int     // its service seconds
	load        float64 // its demand
	lbA, softA  float64 // bounds of route a's cost and penalty without it
	// route a without it and its cost, and the string as a segment, once
	// computed (haveA, haveSeg)
	newA, seg      seg
	costA          float64
	haveA, haveSeg bool
}

// maxStringLimit is the largest value maxString returns.
const maxStringLimit = 3

// outOf returns s.out for the order at position i of route a, filling it
// on the first call of an improveOrder call.
func (s *solver) outOf(st *state, a, i int) *outStrings {
	out := &s.out
	if out.valid {
		return out
	}
	out.valid = true
	ra := &st.routes[a]
	ka := len(ra.seq)
	out.n = min(s.maxString(), ka-i)
	strSvc, strLoad, strEdges := 0, 0.0, 0
	for L := 1; L <= out.n; L++ {
		str := ra.seq[i : i+L]
		first, last := str[0]+1, str[L-1]+1
		strSvc += s.single[last-1].svc
		strLoad += s.demand[last-1]
		if L > 1 {
			strEdges += s.arc(str[L-2]+1, last)
		}
		eA := s.edges(&ra.pre[i]) + s.arc(ra.pre[i].last, ra.tail[i+L].first) + s.edges(&ra.tail[i+L])
		out.str[L-1] = outString{
			first: first, last: last, edges: strEdges, svc: strSvc, load: strLoad,
			lbA:   s.bound(a, ka-L, eA, ra.full.svc-strSvc),
			softA: s.softBound(a, ra.pre[i].tw+ra.tail[i+L].tw, ra.pre[i].load+ra.tail[i+L].load),
		}
	}
	return out
}

// closeEdges is edges of pre followed by tail (orders, possibly none, then
// the end depot).
func (s *solver) closeEdges(pre, tail *seg) int {
	return s.edges(pre) + s.arc(pre.last, tail.first) + s.edges(tail)
}

// retail is the tail of route v from position i followed by the end depot
// of vehicle w: the cached tail when both vehicles have the same shift,
// else built order by order.
func (s *solver) retail(st *state, v, i, w int) seg {
	r := &st.routes[v]
	if s.depot[v] == s.depot[w] {
		return r.tail[i]
	}
	return s.evalTail(w, r.seq[i:])
}

// mergeTail is pre followed by retail(st, v, i, w), without copying the
// cached tail when both vehicles have the same shift.
func (s *solver) mergeTail(pre *seg, st *state, v, i, w int) seg {
	if s.depot[v] == s.depot[w] {
		return s.merge(pre, &st.routes[v].tail[i])
	}
	t := s.evalTail(w, st.routes[v].seq[i:])
	return s.merge(pre, &t)
}

// intraMoves tries moves inside route v between positions i (u) and j (w).
// Each candidate is first bounded from the change of its edges, computed
// in O(1) from the few edges it replaces (O(length) only for a reversal on
// an asymmetric matrix); only promising ones are evaluated with segments.
func (s *solver) intraMoves(st *state, v, i, j int) bool {
	r := &st.routes[v]
	k := len(r.seq)
	// loc is the location at position x, 0 (the depot) before the first
	// order and after the last: r.scan holds it for 0 <= x <= k.
	scan := r.scan[:k+1]
	loc := func(x int) int {
		if x < 0 {
			return 0
		}
		return scan[x].next
	}
	e0, limit := s.edges(&r.full), r.cost-improveEps
	// In soft mode the route keeps its load, so its excess load penalty
	// is part of every candidate's cost.
	soft := s.softBound(v, 0, r.full.load)
	bound := func(de int) float64 { return s.bound(v, k, e0+de, r.full.svc) }

	// Relocate / or-opt within the route: seq[i:i+L] goes before position q.
	for L, maxL := 1, s.maxStringWithin(); L <= maxL && i+L <= k; L++ {
		if j >= i && j < i+L {
			break // w inside the string
		}
		a, s1, sl, b := loc(i-1), loc(i), loc(i+L-1), loc(i+L)
		for _, rev := range [2]bool{false, true} {
			if rev && L == 1 {
				break
			}
			first, last, inner := s1, sl, 0
			if rev {
				first, last = sl, s1
				for x := i; x < i+L-1; x++ {
					inner += s.arc(loc(x+1), loc(x)) - s.arc(loc(x), loc(x+1))
				}
			}
			for _, q := range [2]int{j, j + 1} {
				if q >= i && q <= i+L {
					continue // no move
				}
				p, n := loc(q-1), loc(q)
				lb := bound(s.arc(a, b) + s.arc(p, first) + s.arc(last, n) - s.arc(a, s1) - s.arc(sl, b) - s.arc(p, n) + inner)
				if lb+soft >= limit {
					continue
				}
				// The string's first order now follows p (forward) or its
				// last order precedes n (backward), a pair inside the
				// reordered part: the move adds at least that pair's time
				// warp to that of the parts it keeps.
				var lo, hi, pair int
				if q > i+L {
					lo, hi, pair = i, q-1, s.pairWarp(p, first)
				} else {
					lo, hi, pair = q, i+L-1, s.pairWarp(last, n)
				}
				if pair > 0 && (!s.soft || lb+soft+s.softBound(v, r.pre[lo].tw+r.tail[hi+1].tw+pair, 0) >= limit) {
					continue
				}
				buf := s.bufA[:0]
				if q > i+L {
					buf = append(buf, r.seq[i+L:q]...)
					buf = append(buf, r.seq[i:i+L]...)
					if rev {
						reverse(buf[len(buf)-L:])
					}
				} else {
					buf = append(buf, r.seq[i:i+L]...)
					if rev {
						reverse(buf)
					}
					buf = append(buf, r.seq[q:i]...)
				}
				s.bufA = buf
				if s.tryIntra(st, v, lo, hi, buf, lb, soft) {
					return true
				}
			}
		}
	}

	lo, hi := min(i, j), max(i, j)
	// 2-opt: reverse seq[lo+1 : hi+1] so that seq[lo] is followed by seq[hi].
	if hi-lo >= 2 {
		de := s.arc(loc(lo), loc(hi)) + s.arc(loc(lo+1), loc(hi+1)) - s.arc(loc(lo), loc(lo+1)) - s.arc(loc(hi), loc(hi+1))
		if !s.symmetric {
			for x := lo + 1; x < hi; x++ {
				de += s.arc(loc(x+1), loc(x)) - s.arc(loc(x), loc(x+1))
			}
		}
		if lb := bound(de); lb+soft < limit {
			buf := append(s.bufA[:0], r.seq[lo+1:hi+1]...)
			reverse(buf)
			s.bufA = buf
			if s.tryIntra(st, v, lo+1, hi, buf, lb, soft) {
				return true
			}
		}
	}
	// Swap u and w.
	if hi > lo {
		a, x, y, b := loc(lo-1), loc(lo), loc(hi), loc(hi+1)
		var de int
		if hi == lo+1 {
			de = s.arc(a, y) + s.arc(y, x) + s.arc(x, b) - s.arc(a, x) - s.arc(x, y) - s.arc(y, b)
		} else {
			x2, y2 := loc(lo+1), loc(hi-1)
			de = s.arc(a, y) + s.arc(y, x2) + s.arc(y2, x) + s.arc(x, b) - s.arc(a, x) - s.arc(x, x2) - s.arc(y2, y) - s.arc(y, b)
		}
		if lb := bound(de); lb+soft < limit {
			buf := append(s.bufA[:0], r.seq[lo:hi+1]...)
			buf[0], buf[len(buf)-1] = buf[len(buf)-1], buf[0]
			s.bufA = buf
			if s.tryIntra(st, v, lo, hi, buf, lb, soft) {
				return true
			}
		}
	}
	return false
}

// insertWarp is a lower bound of the time warp of route r with a string
// from first to last (order locations) inserted before position q: that
// of the parts kept, or of the kept parts around the pair the string
// forms with the order before or after it (time warp only adds up when
// sequences join).
func (s *solver) insertWarp(r *route, q, first, last int) int {
	tw := r.pre[q].tw + r.tail[q].tw
	if q > 0 {
		tw = max(tw, r.pre[q-1].tw+s.pairWarp(r.seq[q-1]+1, first)+r.tail[q].tw)
	}
	if q < len(r.seq) {
		tw = max(tw, r.pre[q].tw+s.pairWarp(last, r.seq[q]+1)+r.tail[q+1].tw)
	}
	return tw
}

// pairWarp is the time warp of order location x followed by order
// location y: merge of their single segments, in O(1) from their windows.
func (s *solver) pairWarp(x, y int) int {
	sx := &s.single[x-1]
	return max(sx.e+sx.dur+s.travel(x, y)-s.single[y-1].l, 0)
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
	copy(r.seq[lo:hi+1], mid)
	s.rebuild(st, v)
	return true
}

// moveToEmpty moves u alone to an empty vehicle when that is cheaper (a
// vehicle of another type, or splitting a long detour off).
func (s *solver) moveToEmpty(st *state, u int) bool {
	a, i := st.routeOf[u], st.posOf[u]
	ra := s.fresh(st, a)
	newA := s.merge(&ra.pre[i], &ra.tail[i+1])
	if !s.admits(a, &newA) {
		return false
	}
	costA := s.pcost(a, &newA)
	nt := len(s.types)
	for t, c := range s.alone[u*nt : u*nt+nt] {
		if t == s.typeOf[a] && len(ra.seq) == 1 || math.IsInf(c, 1) || costA+c >= ra.cost-improveEps {
			continue
		}
		v := s.firstEmpty(st, t)
		if v < 0 {
			continue
		}
		bufA := append(append(s.bufA[:0], ra.seq[:i]...), ra.seq[i+1:]...)
		s.bufA = bufA
		s.setSeq(st, a, bufA)
		s.setSeq(st, v, []int{u})
		return true
	}
	return false
}

// splitToEmpty is 2-opt* with an empty vehicle: the orders after u leave
// its route for an empty vehicle (HGS tries its node moves with an empty
// route too). Only in soft mode and only when u's route is penalised: with
// the triangle inequality, splitting a feasible route cannot shorten it,
// while splitting one that breaks its windows is how the genetic search
// gets back routes it merged (rc206 sat at 5 routes, 1.05 % above the BKS,
// where the BKS has 7). The head's exact cost plus the tail's edges bound
// the move before the tail is priced (in O(1) from its cached segment when
// the empty vehicle has the route's shift).
func (s *solver) splitToEmpty(st *state, u int) bool {
	if !s.soft {
		return false
	}
	a, i := st.routeOf[u], st.posOf[u]
	ra := s.fresh(st, a)
	k := len(ra.seq)
	if i >= k-1 || s.penalty(a, &ra.full) == 0 {
		return false
	}
	limit := ra.cost - improveEps
	newA := s.merge(&ra.pre[i+1], &ra.tail[k])
	costA := s.pcost(a, &newA)
	rest := &ra.tail[i+1]
	edges := s.arc(0, rest.first) + s.edges(rest)
	for t := range s.types {
		v := s.firstEmpty(st, t)
		if v < 0 || costA+s.bound(v, k-i-1, edges, rest.svc)+s.softBound(v, 0, rest.load) >= limit {
			continue
		}
		newV := s.mergeTail(&s.depot[v], st, a, i+1, v)
		if costA+s.pcost(v, &newV) >= limit {
			continue
		}
		tail := append(s.bufB[:0], ra.seq[i+1:]...)
		s.bufB = tail
		s.setSeq(st, v, tail)
		s.setSeq(st, a, ra.seq[:i+1])
		return true
	}
	return false
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
