package vrp

import (
	"cmp"
	"math"
	"slices"
)

// Ruin-and-recreate parameters (SISR, Christiaens & Vanden Berghe 2020).
const (
	ruinAvgRemoved  = 10.0 // average number of orders removed per string ruin (c-bar)
	ruinMaxString   = 10.0 // longest string removed from one route (L-max)
	ruinRandomShare = 0.15 // share of iterations that remove random orders instead of strings
	recreateBlink   = 0.01 // probability of skipping a position when reinserting
	// Annealing temperatures, in average edge costs of the first plan; the
	// temperature falls geometrically from start to end over the run (over
	// the elapsed share of the time limit, or of MaxIterations when set).
	tempStartPerEdge = 3.0
	tempEndPerEdge   = 0.1
)

// improve runs ruin-and-recreate with simulated annealing from st until the
// time limit or the iteration cap, and returns the best state found. Acceptance is lexicographic: fewer missing orders always wins;
// with as many, a worse cost is accepted with the annealing criterion.
// Whenever a new best appears, the local search polishes it.
func (s *solver) improve(st *state) *state {
	best := s.newState()
	best.copyFrom(st)
	if s.nAssignable == 0 || s.stop() {
		return best
	}
	cur := st
	work := s.newState()
	work.copyFrom(cur)
	t0, tf := s.temperatures(cur)
	for iter := 0; ; iter++ {
		if s.opt.MaxIterations > 0 && iter >= s.opt.MaxIterations {
			break
		}
		if s.stop() {
			break
		}
		var frac float64
		if s.opt.MaxIterations > 0 {
			frac = float64(iter) / float64(s.opt.MaxIterations)
		} else {
			frac = min(1, float64(s.now.Sub(s.start))/float64(s.limit))
		}
		temp := t0 * math.Pow(tf/t0, frac)
		s.iterations++

		s.touchStamp++
		s.touched = s.touched[:0]
		s.ruin(work)
		s.recreate(work)

		if debugVerify {
			s.verify(work, "ruin and recreate")
		}
		accept := work.missing < cur.missing
		if work.missing == cur.missing {
			accept = work.cost < cur.cost-temp*math.Log(1-s.rng.Float64())
		}
		if accept {
			cur, work = work, cur
			if better(cur, best) {
				// Polish the changed routes; their changes join
				// s.touched, so work is brought back below.
				s.routesBuf = append(s.routesBuf[:0], s.touched...)
				s.localSearchRoutes(cur, s.routesBuf)
				best.copyFrom(cur)
			}
		}
		// Bring work back to cur: only the touched routes differ.
		for _, v := range s.touched {
			work.routes[v].copyFrom(&cur.routes[v])
		}
		copy(work.routeOf, cur.routeOf)
		copy(work.posOf, cur.posOf)
		work.cost, work.missing = cur.cost, cur.missing
		if debugVerify {
			s.verify(work, "resync")
		}
	}
	return best
}

// temperatures derives the annealing range from the average edge cost of st.
func (s *solver) temperatures(st *state) (t0, tf float64) {
	obj, edges := st.cost, 0
	for v := range st.routes {
		if k := len(st.routes[v].seq); k > 0 {
			obj -= s.fixed[v]
			edges += k + 1
		}
	}
	avg := 1.0
	if edges > 0 && obj > 0 {
		avg = obj / float64(edges)
	}
	return tempStartPerEdge * avg, tempEndPerEdge * avg
}

// ruin removes orders from st: usually SISR strings (a few strings of
// consecutive orders from routes near a random seed order), sometimes random
// orders.
func (s *solver) ruin(st *state) {
	served := s.nAssignable - st.missing
	if served == 0 {
		return
	}
	// A random served order.
	seed := -1
	for k, start := 0, s.rng.IntN(s.n); k < s.n; k++ {
		if u := (start + k) % s.n; st.routeOf[u] >= 0 {
			seed = u
			break
		}
	}
	s.stamp++
	ruined := s.ruined[:0]
	removed := 0
	take := func(u int) {
		if v := st.routeOf[u]; s.mark[v] != s.stamp {
			s.mark[v] = s.stamp
			ruined = append(ruined, v)
		}
		st.routeOf[u] = -1
		removed++
	}

	if s.rng.Float64() < ruinRandomShare {
		q := 1 + s.rng.IntN(min(int(2*ruinAvgRemoved), served))
		for removed < q {
			u := s.rng.IntN(s.n)
			if st.routeOf[u] >= 0 {
				take(u)
			}
		}
	} else {
		used := 0
		for v := range st.routes {
			if len(st.routes[v].seq) > 0 {
				used++
			}
		}
		lsMax := min(ruinMaxString, float64(served)/float64(used))
		ksMax := 4*ruinAvgRemoved/(1+lsMax) - 1
		ks := int(s.rng.Float64()*ksMax) + 1
		for c := -1; c < len(s.nb[seed]) && len(ruined) < ks; c++ {
			u := seed
			if c >= 0 {
				u = s.nb[seed][c]
			}
			v := st.routeOf[u]
			if v < 0 || s.mark[v] == s.stamp {
				continue
			}
			r := &st.routes[v]
			k := len(r.seq)
			l := min(int(s.rng.Float64()*min(float64(k), lsMax))+1, k)
			pos := st.posOf[u]
			lo, hi := max(0, pos-l+1), min(pos, k-l)
			b := lo + s.rng.IntN(hi-lo+1)
			for _, x := range r.seq[b : b+l] {
				take(x)
			}
		}
	}

	for _, v := range ruined {
		r := &st.routes[v]
		oldLen, first, last := len(r.seq), -1, -1
		kept := r.seq[:0]
		for i, u := range r.seq {
			if st.routeOf[u] == v {
				kept = append(kept, u)
			} else {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		r.seq = kept
		s.refresh(st, v, first, oldLen-1-last, oldLen)
	}
	s.ruined = ruined
	st.missing += removed
}

// recreate reinserts every missing order, one at a time at its cheapest
// position (with blinks), in an order chosen at random among SISR's: random,
// largest demand first, farthest first, closest first, and (for time
// windows) tightest window first.
func (s *solver) recreate(st *state) {
	list := s.list[:0]
	for u := range s.n {
		if s.assignable[u] && st.routeOf[u] < 0 {
			list = append(list, u)
		}
	}
	s.rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	switch x := s.rng.IntN(13); {
	case x < 4: // random
	case x < 8:
		slices.SortStableFunc(list, func(a, b int) int { return cmp.Compare(s.demand[b], s.demand[a]) })
	case x < 10:
		slices.SortStableFunc(list, func(a, b int) int { return cmp.Compare(s.depotCost[b], s.depotCost[a]) })
	case x < 11:
		slices.SortStableFunc(list, func(a, b int) int { return cmp.Compare(s.depotCost[a], s.depotCost[b]) })
	default:
		slices.SortStableFunc(list, func(a, b int) int { return cmp.Compare(s.width[a], s.width[b]) })
	}
	for _, u := range list {
		if v, q, _ := s.bestInsertion(st, u, recreateBlink, true); v >= 0 {
			s.insert(st, u, v, q)
		}
	}
	s.list = list
}
