package vrp

import "math"

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
		if s.applyKept(st, a, bufA, v, []int{u}, ra.cost-improveEps) {
			return true
		}
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
	if i >= k-1 || s.routePenalty(a, ra) == 0 {
		return false
	}
	limit := ra.cost - improveEps
	newA := s.merge(&ra.pre[i+1], &ra.tail[k])
	costA := s.pcost(a, &newA)
	rest := &ra.tail[i+1]
	for t := range s.types {
		v := s.firstEmpty(st, t)
		if v < 0 || costA+s.bound(v, k-i-1, s.arc(s.startLoc[v], rest.first)+s.retailEdges(ra, i+1, v), rest.svc)+s.softBound(v, 0, rest.load) >= limit {
			continue
		}
		newV := s.mergeTail(&s.depot[v], st, a, i+1, v)
		if costA+s.pcost(v, &newV) >= limit {
			continue
		}
		tail := append(s.bufB[:0], ra.seq[i+1:]...)
		s.bufB = tail
		if s.applyKept(st, v, tail, a, ra.seq[:i+1], limit) {
			return true
		}
	}
	return false
}
