package vrp

// swapBetween exchanges u (position i of route a) and w (position j of
// route b) when that costs less than base (both routes' cost less
// improveEps).
func (s *solver) swapBetween(st *state, a, i, b, j int, base float64) bool {
	ra, rb := &st.routes[a], &st.routes[b]
	ka, kb := len(ra.seq), len(rb.seq)
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
			if s.admits(b, &newB) && s.pcost(a, &newA)+s.pcost(b, &newB) < base && s.keepsSwap(st, a, i, b, j, base) {
				ra.seq[i], rb.seq[j] = w, u
				s.rebuild(st, a)
				s.rebuild(st, b)
				return true
			}
		}
	}
	return false
}

// swapWithin exchanges the orders at positions lo and hi of c's route.
func (s *solver) swapWithin(st *state, c *withinRoute, lo, hi int) bool {
	if hi <= lo {
		return false // u and w are the same order
	}
	a, x, y, b := c.loc(lo-1), c.loc(lo), c.loc(hi), c.loc(hi+1)
	var de int
	if hi == lo+1 {
		de = s.arc(a, y) + s.arc(y, x) + s.arc(x, b) - s.arc(a, x) - s.arc(x, y) - s.arc(y, b)
	} else {
		x2, y2 := c.loc(lo+1), c.loc(hi-1)
		de = s.arc(a, y) + s.arc(y, x2) + s.arc(y2, x) + s.arc(x, b) - s.arc(a, x) - s.arc(x, x2) - s.arc(y2, y) - s.arc(y, b)
	}
	if lb := s.boundWithin(c, de); lb+c.soft < c.limit {
		buf := append(s.bufA[:0], c.r.seq[lo:hi+1]...)
		buf[0], buf[len(buf)-1] = buf[len(buf)-1], buf[0]
		s.bufA = buf
		return s.tryIntra(st, c.v, lo, hi, buf, lb, c.soft)
	}
	return false
}
