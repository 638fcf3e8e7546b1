package vrp

// twoOptStar exchanges the tails of routes a and b when that costs less
// than base (both routes' cost less improveEps): a keeps seq[:i+1] and
// takes b's tail from cut; b keeps seq[:cut] and takes a's tail after u.
// cut = j+1 puts u before w's successor, cut = j puts u right before w.
func (s *solver) twoOptStar(st *state, a, i, b, j int, base float64) bool {
	ra, rb := &st.routes[a], &st.routes[b]
	ka, kb := len(ra.seq), len(rb.seq)
	for _, cut := range [2]int{j + 1, j} {
		if i+1 == ka && cut == kb {
			continue // nothing changes
		}
		// The tails come with their own route's end depot; the other
		// route's depot is only merged in when the shifts differ.
		preA, tailA, preB, tailB := &ra.pre[i+1], &ra.tail[i+1], &rb.pre[cut], &rb.tail[cut]
		eA, eB := s.closeEdges(preA, tailB), s.closeEdges(preB, tailA)
		if s.endLoc[a] != s.endLoc[b] {
			eA = s.edges(preA) + s.arc(preA.last, s.firstOf(rb, cut, a)) + s.retailEdges(rb, cut, a)
			eB = s.edges(preB) + s.arc(preB.last, s.firstOf(ra, i+1, b)) + s.retailEdges(ra, i+1, b)
		}
		lbA := s.bound(a, preA.n+tailB.n, eA, preA.svc+tailB.svc)
		lbB := s.bound(b, preB.n+tailA.n, eB, preB.svc+tailA.svc)
		var softA, softB float64
		if lbA+lbB < base || debugVerify {
			// A tail keeps its time warp only where both vehicles
			// end at the same depot window (see retail).
			twA, twB := preA.tw, preB.tw
			if s.depotEnd[a] == s.depotEnd[b] {
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
		if s.applyKept(st, a, bufA, b, bufB, base) {
			return true
		}
	}
	return false
}

// closeEdges is edges of pre followed by tail (orders, possibly none, then
// the end depot).
func (s *solver) closeEdges(pre, tail *seg) int {
	return s.edges(pre) + s.arc(pre.last, tail.first) + s.edges(tail)
}

// firstOf is the location after position i-1 of route r when the rest of
// it ends at vehicle w's end: seq[i]'s, or w's end location.
func (s *solver) firstOf(r *route, i, w int) int {
	if i == len(r.seq) {
		return s.endLoc[w]
	}
	return r.seq[i] + 1
}

// retailEdges is edges of route r's tail from position i, with its orders
// (at least one) ending at vehicle w's end location instead of its own.
// With no order it is 0.
func (s *solver) retailEdges(r *route, i, w int) int {
	k := len(r.seq)
	if i == k {
		return 0
	}
	t := &r.tail[i]
	last := r.seq[k-1] + 1
	return s.edges(t) - s.arc(last, t.last) + s.arc(last, s.endLoc[w])
}

// retail is the tail of route v from position i followed by the end depot
// of vehicle w: the cached tail when both vehicles have the same shift,
// else built order by order.
func (s *solver) retail(st *state, v, i, w int) seg {
	r := &st.routes[v]
	if s.depotEnd[v] == s.depotEnd[w] {
		return r.tail[i]
	}
	return s.evalTail(w, r.seq[i:])
}

// mergeTail is pre followed by retail(st, v, i, w), without copying the
// cached tail when both vehicles have the same shift.
func (s *solver) mergeTail(pre *seg, st *state, v, i, w int) seg {
	if s.depotEnd[v] == s.depotEnd[w] {
		return s.merge(pre, &st.routes[v].tail[i])
	}
	t := s.evalTail(w, st.routes[v].seq[i:])
	return s.merge(pre, &t)
}
