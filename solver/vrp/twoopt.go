package vrp

// twoOpt reverses seq[lo+1 : hi+1] of c's route so that seq[lo] is
// followed by seq[hi].
func (s *solver) twoOpt(st *state, c *withinRoute, lo, hi int) bool {
	if hi-lo < 2 {
		return false // nothing to reverse
	}
	de := s.arc(c.loc(lo), c.loc(hi)) + s.arc(c.loc(lo+1), c.loc(hi+1)) - s.arc(c.loc(lo), c.loc(lo+1)) - s.arc(c.loc(hi), c.loc(hi+1))
	if !s.symmetric {
		for x := lo + 1; x < hi; x++ {
			de += s.arc(c.loc(x+1), c.loc(x)) - s.arc(c.loc(x), c.loc(x+1))
		}
	}
	if lb := s.boundWithin(c, de); lb+c.soft < c.limit {
		buf := append(s.bufA[:0], c.r.seq[lo+1:hi+1]...)
		reverse(buf)
		s.bufA = buf
		return s.tryIntra(st, c.v, lo+1, hi, buf, lb, c.soft)
	}
	return false
}
