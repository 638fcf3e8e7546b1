package vrp

import "math"

// construct builds a first plan with regret-2 insertion: repeatedly insert
// the order whose best and second-best options (over routes in use and over
// empty vehicles of each type) differ most, at its best position. Orders
// with a single option come first; ties go to the order whose best option
// is the most expensive (typically the farthest), which seeds new routes
// with outlying orders.
//
// The best insertion of every order into every used route is cached and only
// recomputed for the route that changed, so a step costs
// O(orders x (routes + types)) plus O(orders x route length) segment merges.
// It runs to completion even when the context is cancelled or the time
// limit has passed (about 0.1 s for 500 orders), so that Solve always has a
// real first plan to return.
func (s *solver) construct(st *state) {
	var pending []int
	for _, u := range s.assignableOrders {
		if st.routeOf[u] < 0 {
			pending = append(pending, u)
		}
	}
	if len(pending) == 0 {
		return
	}
	m, nt := s.m, len(s.types)
	inf := math.Inf(1)
	insCost := make([]float64, s.n*m) // best delta of inserting u into used route v
	insPos := make([]int32, s.n*m)
	// Where the problem needs exact evaluation, the cache holds the
	// segments' bounds (exactIns false) until an order is chosen by them:
	// then its option is timed exactly, and the choice made again.
	var exactIns []bool
	if s.fleet.exact {
		exactIns = make([]bool, s.n*m)
	}
	emptyLeft := make([]int, nt)
	var used []int
	for v := range st.routes {
		if len(st.routes[v].seq) > 0 {
			used = append(used, v)
		} else {
			emptyLeft[s.typeOf[v]]++
		}
	}
	emptyCost := s.alone // cost of u alone on an empty vehicle of type t
	for _, u := range pending {
		for _, v := range used {
			s.cacheInsertion(st, u, v, insCost, insPos)
		}
	}

	for len(pending) > 0 {
		bestIdx, bestV, bestPos, bestPr := -1, -1, 0, 0
		bestRegret, bestC1 := 0.0, 0.0
		for idx, u := range pending {
			c1, c2 := inf, inf
			v1, p1 := -1, 0
			offer := func(c float64, v, pos int) {
				if c < c1 {
					c2, c1, v1, p1 = c1, c, v, pos
				} else if c < c2 {
					c2 = c
				}
			}
			row := u * m
			for _, v := range used {
				if c := insCost[row+v]; c < inf {
					offer(c, v, int(insPos[row+v]))
				}
			}
			for t := range nt {
				c := emptyCost[u*nt+t]
				if emptyLeft[t] == 0 || c == inf {
					continue
				}
				offer(c, -1-t, 0)
				if emptyLeft[t] > 1 {
					offer(c, -1-t, 0)
				}
			}
			if c1 == inf {
				continue
			}
			regret := c2 - c1            // +Inf with a single option
			pr := s.p.Orders[u].Priority // the higher priority first, when the fleet may fall short
			if bestIdx < 0 || pr > bestPr || pr == bestPr && (regret > bestRegret || (regret == bestRegret && c1 > bestC1)) {
				bestIdx, bestV, bestPos, bestRegret, bestC1, bestPr = idx, v1, p1, regret, c1, pr
			}
		}
		if bestIdx < 0 {
			return // the rest fits nowhere
		}
		if u := pending[bestIdx]; exactIns != nil && bestV >= 0 && !exactIns[u*m+bestV] {
			i := u*m + bestV
			insCost[i], exactIns[i] = inf, true
			if q, d := s.bestInRoute(st, u, bestV, 0, inf); q >= 0 {
				insCost[i], insPos[i] = d, int32(q)
			}
			continue
		}
		u := pending[bestIdx]
		pending[bestIdx] = pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		v, opened := bestV, bestV < 0
		if opened {
			t := -1 - v
			v = s.firstEmpty(st, t)
			emptyLeft[t]--
			used = append(used, v)
			bestPos = 0
		}
		s.insert(st, u, v, bestPos)
		for _, x := range pending {
			// An insertion that did not fit stays impossible once the
			// route holds one more order (loads and arrival times only
			// grow, given the triangle inequality), so only the routes
			// where x fitted, and a new one, are evaluated again.
			if opened || insCost[x*m+v] < inf {
				s.cacheInsertion(st, x, v, insCost, insPos)
				if exactIns != nil {
					exactIns[x*m+v] = false
				}
			}
		}
	}
}

// cacheInsertion stores the best insertion of u into used route v.
func (s *solver) cacheInsertion(st *state, u, v int, insCost []float64, insPos []int32) {
	r := s.fresh(st, v)
	i := u*s.m + v
	insCost[i] = math.Inf(1)
	if !fitsCapacity(st.load[v]+s.demand[u], s.capacity[v]) || s.fleet.exact && !s.mayInsert(r, u, v) {
		return
	}
	su := s.single[u]
	k, e, svc := len(r.seq), s.edges(&r.full), r.full.svc+su.svc
	c0 := s.bound(v, k+1, 0, svc) - r.cost // bound is affine in the edge sum
	lo, hi := windowRange(r, &su)
	if lo > hi {
		return
	}
	prev := s.startLoc[v]
	if lo > 0 {
		prev = r.seq[lo-1] + 1
	}
	for q := lo; q <= hi; q++ {
		next := s.endLoc[v]
		if q < k {
			next = r.seq[q] + 1
		}
		pv := prev
		prev = next
		if float64(e+s.arc(pv, u+1)+s.arc(u+1, next)-s.arc(pv, next))+c0 >= insCost[i] {
			continue
		}
		x := s.merge(&r.pre[q], &su)
		if x.tw > 0 {
			break // u is reached too late; later positions reach it later still (triangle inequality)
		}
		full := s.merge(&x, &r.tail[q])
		if full.tw > 0 || s.fleet.exact && !s.limitsAllow(v, &full) {
			continue
		}
		if d := s.cost(v, &full) - r.cost; d < insCost[i] {
			insCost[i], insPos[i] = d, int32(q)
		}
	}
}
