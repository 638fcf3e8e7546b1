package vrp

// maxString is the longest string of orders the local search moves. Between
// routes a string keeps its order (reversed strings, which HGS and PyVRP
// leave out too, made the search slower and the plans no better); within a
// route it may be reversed. In soft mode, the genetic search's local search
// of every child, strings are at most 2 long (HGS's limit within a route):
// strings of 3 made each child slower and the plans no better, between
// routes and within them. In hard mode, which polishes the new best plans
// of ruin-and-recreate, strings of 3 stay: without them between routes the
// 500-order city problem came out dearer. docs/PERFORMANCE.md has the
// measurements.
func (s *solver) maxString() int {
	if s.soft {
		return 2
	}
	return 3
}

// maxStringWithin is the longest string moved within a route: maxString,
// except that strings of 3 stay in soft mode where the genetic search uses
// EAX (useEAX). They were measured together: EAX alone and strings of 3
// alone each left Solomon's worst instances level; both, on short routes
// only, made them better (see geneticParams.eaxShare).
func (s *solver) maxStringWithin() int {
	if s.edgeAssembly {
		return 3
	}
	return s.maxString()
}

// relocateBetween moves a string of orders starting at u (position i of
// route a), in its order, before position j or j+1 of route b (next to w),
// when that costs less than base (both routes' cost less improveEps).
// What does not depend on b (the string and route a without it) is the
// same for every neighbour of u (see outStrings). The legs into the string
// are read from its first order's row of legsIn (arcIn).
func (s *solver) relocateBetween(st *state, a, i, b, j int, base float64) bool {
	ra, rb := &st.routes[a], &st.routes[b]
	kb := len(rb.seq)
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
			if s.applyKept(st, a, bufA, b, bufB, base) {
				return true
			}
		}
	}
	return false
}

// outStrings describes the strings of up to maxString orders that start at
// the order improveOrder is testing (at position i of route a), and route a
// without each of them. None of it depends on the neighbour tried, so
// relocateBetween computes it once per improveOrder call (valid) instead
// of once per neighbour; the segments, dearer, only when a move needs
// them.
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

// relocateWithin moves a string of orders starting at u (position i),
// forward or reversed, before position j or j+1 of the same route (next
// to w); strings of 1 to maxStringWithin orders.
func (s *solver) relocateWithin(st *state, c *withinRoute, i, j int) bool {
	r, k, v := c.r, c.k, c.v
	for L, maxL := 1, s.maxStringWithin(); L <= maxL && i+L <= k; L++ {
		if j >= i && j < i+L {
			break // w inside the string
		}
		a, s1, sl, b := c.loc(i-1), c.loc(i), c.loc(i+L-1), c.loc(i+L)
		for _, rev := range [2]bool{false, true} {
			if rev && L == 1 {
				break
			}
			first, last, inner := s1, sl, 0
			if rev {
				first, last = sl, s1
				for x := i; x < i+L-1; x++ {
					inner += s.arc(c.loc(x+1), c.loc(x)) - s.arc(c.loc(x), c.loc(x+1))
				}
			}
			for _, q := range [2]int{j, j + 1} {
				if q >= i && q <= i+L {
					continue // no move
				}
				p, n := c.loc(q-1), c.loc(q)
				lb := s.boundWithin(c, s.arc(a, b)+s.arc(p, first)+s.arc(last, n)-s.arc(a, s1)-s.arc(sl, b)-s.arc(p, n)+inner)
				if lb+c.soft >= c.limit {
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
				if pair > 0 && (!s.soft || lb+c.soft+s.softBound(v, r.pre[lo].tw+r.tail[hi+1].tw+pair, 0) >= c.limit) {
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
				if s.tryIntra(st, v, lo, hi, buf, lb, c.soft) {
					return true
				}
			}
		}
	}
	return false
}

// pairWarp is the time warp of order location x followed by order
// location y: merge of their single segments, in O(1) from their windows.
func (s *solver) pairWarp(x, y int) int {
	sx := &s.single[x-1]
	return max(sx.e+sx.dur+s.travel(x, y)-s.single[y-1].l, 0)
}
