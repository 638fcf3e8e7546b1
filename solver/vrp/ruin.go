package vrp

import (
	"cmp"
	"math"
	"slices"
)

// splitStrings enables SISR's split-string removal for half of the strings.
var splitStrings = true

// Ruin-and-recreate parameters (SISR, Christiaens & Vanden Berghe 2020);
// docs/PERFORMANCE.md has the measurements behind the defaults that
// differ from the paper's.
const (
	ruinAvgRemoved  = 10.0 // average number of orders removed per string ruin (c-bar)
	ruinMaxString   = 10.0 // longest string removed from one route (L-max)
	ruinRandomShare = 0.15 // share of iterations that remove random orders instead of strings
	recreateBlink   = 0.01 // probability of skipping a position when reinserting
	ruinSplitDepth  = 0.01 // split strings: chance per order of ending the kept part (beta)
	// chainAvgRemoved is c-bar of the ruin-and-recreate chains, which run
	// when the time limit is short for the problem's size (see
	// geneticParams.levelLimit) or the first plan misses orders: larger
	// ruins measured better on the 500-order city problem and level on
	// 1,000-order ones. The genetic search's ruin mutation keeps
	// ruinAvgRemoved.
	chainAvgRemoved = 15.0
	// Annealing temperatures, in average edge costs of the first plan; the
	// temperature falls geometrically from start to end over the run (over
	// the elapsed share of the time limit, or of MaxIterations when set).
	// An end at 0.03 measured better than colder or warmer ends on the
	// large problems where the chains run, and level on the city problem.
	tempStartPerEdge = 3.0
	tempEndPerEdge   = 0.03
	// tempStartPerFixed adds this many average fixed costs of the first
	// plan's vehicles to the start temperature: emptying a vehicle takes
	// steps through worse plans, whose size is the fixed cost, not an
	// edge. It measured better on the city problem, where a hotter start
	// without fixed costs made the 1,000-order problems worse.
	tempStartPerFixed = 8.0
)

// chain is one ruin-and-recreate run with simulated annealing. Acceptance
// is lexicographic: fewer missing orders always wins; with as many, a worse
// cost is accepted with the annealing criterion. Whenever a new best
// appears, the local search polishes it.
type chain struct {
	s               *solver
	cur, work, best *state
	t0, tf          float64
	iter            int
}

// newChain starts a chain from st, which becomes its current state.
func (s *solver) newChain(st *state) *chain {
	c := &chain{s: s, cur: st, work: s.newState(), best: s.newState()}
	c.work.copyFrom(st)
	c.best.copyFrom(st)
	c.t0, c.tf = s.temperatures(st)
	return c
}

// epoch is how many iterations parallel chains run between exchanges.
func (c *chain) epoch() int { return epochIterations }

// result is the best plan the chain found.
func (c *chain) result() *state { return c.best }

// adopt moves the chain to o (a better plan found by another chain),
// keeping its temperature schedule.
func (c *chain) adopt(o *state) {
	c.cur.copyFrom(o)
	c.work.copyFrom(o)
	c.best.copyFrom(o)
}

// run iterates until c.iter reaches until; it reports false when the search
// is over (time limit, cancellation or MaxIterations).
func (c *chain) run(until int) bool {
	s := c.s
	if len(s.assignableOrders) == 0 {
		return false
	}
	for ; c.iter < until; c.iter++ {
		if s.opt.MaxIterations > 0 && c.iter >= s.opt.MaxIterations {
			return false
		}
		if s.stop() {
			return false
		}
		var frac float64
		if s.opt.MaxIterations > 0 {
			frac = float64(c.iter) / float64(s.opt.MaxIterations)
		} else {
			frac = min(1, float64(s.now.Sub(s.start))/float64(s.limit))
		}
		temp := c.t0 * math.Pow(c.tf/c.t0, frac)
		s.iterations++

		// The annealing draw comes first: a worse plan is accepted if it
		// costs less than limit. When cur serves every order, so that only
		// the cost can decide, the recreate stops as soon as the plan
		// reaches limit (see recreate).
		limit := c.cur.cost - temp*math.Log(1-s.rng.Float64())
		stopAt := math.Inf(1)
		if c.cur.missing == 0 {
			stopAt = limit
		}

		s.touchStamp++
		s.touched = s.touched[:0]
		s.lazy = s.obj == ObjectiveDistance && !s.fleet.exact
		s.ruin(c.work, chainAvgRemoved)
		done := s.recreate(c.work, stopAt)
		s.lazy = false

		if debugVerify {
			s.verify(c.work, "ruin and recreate")
		}
		accept := done && c.work.lost < c.cur.lost
		if done && c.work.lost == c.cur.lost {
			accept = c.work.cost < limit
		}
		if accept {
			c.cur, c.work = c.work, c.cur
			if better(c.cur, c.best) {
				// Polish the changed routes; their changes join
				// s.touched, so work is brought back below.
				s.routesBuf = append(s.routesBuf[:0], s.touched...)
				s.localSearchRoutes(c.cur, s.routesBuf)
				c.best.copyFrom(c.cur)
			}
		}
		// Bring work back to cur: only the touched routes differ.
		for _, v := range s.touched {
			c.work.routes[v].copyFrom(&c.cur.routes[v])
			c.work.load[v] = c.cur.load[v]
		}
		copy(c.work.busy, c.cur.busy)
		copy(c.work.routeOf, c.cur.routeOf)
		copy(c.work.posOf, c.cur.posOf)
		c.work.cost, c.work.missing, c.work.lost = c.cur.cost, c.cur.missing, c.cur.lost
		if debugVerify {
			s.verify(c.work, "resync")
		}
	}
	return true
}

// epochIterations is how many iterations parallel chains run between two
// exchanges of their best plans. Counting iterations rather than time keeps
// a run with MaxIterations reproducible whatever the number of threads.
const epochIterations = 2000

// temperatures derives the annealing range from the average edge cost of
// st; the start also counts the average fixed cost of its vehicles.
func (s *solver) temperatures(st *state) (t0, tf float64) {
	obj, edges, fixed, used := st.cost, 0, 0.0, 0
	for v := range st.routes {
		if k := len(st.routes[v].seq); k > 0 {
			obj -= s.fixed[v]
			fixed += s.fixed[v]
			edges += k + 1
			used++
		}
	}
	avg := 1.0
	if edges > 0 && obj > 0 {
		avg = obj / float64(edges)
	}
	if used > 0 {
		fixed /= float64(used)
	}
	return tempStartPerEdge*avg + tempStartPerFixed*fixed, tempEndPerEdge * avg
}

// ruin removes orders from st: usually SISR strings (a few strings of
// consecutive orders from routes near a random seed order; avgRemoved
// orders on average), sometimes random orders.
func (s *solver) ruin(st *state, avgRemoved float64) {
	s.list = s.list[:0] // the removed orders, for recreate
	served := len(s.assignableOrders) - st.missing
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
	take := func(u int) {
		if v := st.routeOf[u]; s.mark[v] != s.stamp {
			s.mark[v] = s.stamp
			ruined = append(ruined, v)
		}
		st.routeOf[u] = -1
		s.list = append(s.list, u)
	}

	if s.rng.Float64() < ruinRandomShare {
		q := 1 + s.rng.IntN(min(int(2*ruinAvgRemoved), served))
		for len(s.list) < q {
			u := s.rng.IntN(s.n)
			if st.routeOf[u] >= 0 {
				take(u)
			}
		}
	} else {
		used := st.usedRoutes()
		lsMax := min(ruinMaxString, float64(served)/float64(used))
		ksMax := 4*avgRemoved/(1+lsMax) - 1
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
			if !splitStrings || l == k || s.rng.IntN(2) == 0 {
				lo, hi := max(0, pos-l+1), min(pos, k-l)
				b := lo + s.rng.IntN(hi-lo+1)
				for _, x := range r.seq[b : b+l] {
					take(x)
				}
				continue
			}
			// Split string: l orders removed from a string of l+m
			// around u, keeping m consecutive ones in the middle.
			m := 1
			for l+m < k && s.rng.Float64() >= ruinSplitDepth {
				m++
			}
			total := l + m
			lo, hi := max(0, pos-total+1), min(pos, k-total)
			b := lo + s.rng.IntN(hi-lo+1)
			keep := b + s.rng.IntN(l+1)
			for i, x := range r.seq[b : b+total] {
				if i := b + i; i < keep || i >= keep+m {
					take(x)
				}
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
	st.missing += len(s.list)
	for _, u := range s.list {
		st.lost += s.fleet.weight[u]
	}
}

// recreate reinserts every missing order, one at a time at its cheapest
// position (with blinks), in an order chosen at random among SISR's: random,
// largest demand first, farthest first, closest first, and (for time
// windows) tightest window first.
//
// It gives up, reporting false, once the plan costs stopAt or more: an
// insertion never lowers the cost when the matrix keeps the triangle
// inequality and fixed costs are not negative, so the finished plan would
// cost at least as much, and the annealing would reject it. (Over a
// matrix that breaks the inequality, a later insertion could have brought
// the cost back under stopAt; the plan is rejected all the same.) On
// r1_10_1, a fifth of the insertions came after that point.
func (s *solver) recreate(st *state, stopAt float64) bool {
	// The missing orders in index order: those the ruin just removed
	// (s.list), unless orders were missing before it.
	list := s.list
	if len(list) == st.missing {
		slices.Sort(list)
	} else {
		list = list[:0]
		for _, u := range s.assignableOrders {
			if st.routeOf[u] < 0 {
				list = append(list, u)
			}
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
	// With priorities, half the recreates take the higher priorities
	// first; the others keep SISR's order, so that two orders of lower
	// priority that together outweigh one that blocks them can come in.
	if s.fleet.priorities && s.rng.IntN(2) == 0 {
		slices.SortStableFunc(list, func(a, b int) int { return cmp.Compare(s.p.Orders[b].Priority, s.p.Orders[a].Priority) })
	}
	s.list = list
	for _, u := range list {
		if v, q, _ := s.bestInsertion(st, u, recreateBlink, true); v >= 0 {
			s.insert(st, u, v, q)
		}
		if st.cost >= stopAt {
			return false
		}
	}
	return true
}
