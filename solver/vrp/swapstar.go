package vrp

import "math"

// SWAP* and RELOCATE* (Vidal 2022, "Hybrid genetic search for the CVRP:
// open-source implementation and SWAP* neighborhood", in the time-window
// form of the DIMACS 2021 VRPTW winner) run in the genetic search's local
// search once the node moves stop improving (see intensify for when), over
// the pairs of routes (a, b) where an order of one has one of its
// swapStarNeighbours nearest orders in the other:
//
//   - RELOCATE*: the order of a or b whose move to its cheapest position in
//     the other route saves most;
//   - SWAP*: exchange u of a with w of b, each put at its cheapest position
//     in the other route rather than in the other's place.
//
// Per order and route, the three cheapest insertion positions (edges and
// time warp at the current prices, excess load apart) are cached while the
// route is unchanged, so that a pair (u, w) is priced in O(1): both
// removals, the change of excess load, and each order's cheapest cached
// position not next to the one it replaces, or that one's place, evaluated
// exactly. The best candidate of a pair of routes is evaluated exactly
// before it is applied. docs/PERFORMANCE.md has the measurements: short
// routes gain (gh400's r1 and rc1 files); long routes (c2, r2, rc2, even at
// 15 % of the local searches, the reference solver's rule) and short time
// limits lose.

// swapStarNeighbours is how many of each order's nearest orders make its
// route a partner of theirs: 3 against 5 or the local search's 20 to 40,
// which cost more children than they found moves.
const swapStarNeighbours = 3

// intensify reports whether this local search ends with RELOCATE* and
// SWAP*: in the genetic search (soft mode), when routes are short and the
// time limit gives at least widePerOrder (geneticParams) per order. They
// make a child about 1.5 times slower, which pays at 75 ms per order but
// not at 15 or 25 (docs/PERFORMANCE.md).
func (s *solver) intensify() bool {
	return s.soft && s.longBudget && !s.longRoutes && !s.opt.Ablation.NoSwapStar
}

// best3 is an order's three cheapest insertion positions in one route.
type best3 struct {
	calc int // solver.moves when computed; valid while the route is unchanged
	cost [3]float64
	pos  [3]int // insertion before seq[pos]; -1 when none
}

func (b *best3) add(c float64, q int) {
	switch {
	case c < b.cost[0]:
		b.cost[2], b.pos[2] = b.cost[1], b.pos[1]
		b.cost[1], b.pos[1] = b.cost[0], b.pos[0]
		b.cost[0], b.pos[0] = c, q
	case c < b.cost[1]:
		b.cost[2], b.pos[2] = b.cost[1], b.pos[1]
		b.cost[1], b.pos[1] = c, q
	case c < b.cost[2]:
		b.cost[2], b.pos[2] = c, q
	}
}

// swapCache is the scratch space of RELOCATE* and SWAP*, allocated on
// first use (m x n insertion entries; they run only on short routes with a
// long time limit, see intensify).
type swapCache struct {
	start      int       // solver.moves when the current local search began
	ins        []best3   // [vehicle*n + order]
	rem        []float64 // per order: the change of its route's cost without it
	remCalc    []int     // per order: solver.moves when rem was computed
	pairTested []int     // [a*m + b]: solver.moves when the pair was last tried
	routes     []int
	partners   []int
}

// twCost is the cost of full for vehicle v with its time warp priced, but
// not its excess load, which RELOCATE* and SWAP* price apart.
func (s *solver) twCost(v int, full *seg) float64 {
	return s.cost(v, full) + s.twPen*float64(full.tw)
}

// startSwapStar invalidates the cache at the start of a local search
// (the penalties and the plan may have changed since the last one).
func (s *solver) startSwapStar() {
	c := &s.swap
	if c.ins == nil {
		c.ins = make([]best3, s.m*s.n)
		c.rem = make([]float64, s.n)
		c.remCalc = make([]int, s.n)
		c.pairTested = make([]int, s.m*s.m)
	}
	s.moves++
	c.start = s.moves
}

// removal is the change of route a's cost (time warp priced, load not)
// when the order at position i leaves it.
func (s *solver) removal(st *state, a, i int) float64 {
	c := &s.swap
	r := &st.routes[a]
	u := r.seq[i]
	if t := c.remCalc[u]; t >= c.start && t >= s.modified[a] {
		return c.rem[u]
	}
	x := s.merge(&r.pre[i], &r.tail[i+1])
	d := s.twCost(a, &x) - s.twCost(a, &r.full)
	c.rem[u], c.remCalc[u] = d, s.moves
	return d
}

// insertions is u's three cheapest insertion positions in route b.
func (s *solver) insertions(st *state, u, b int) *best3 {
	c := &s.swap
	e := &c.ins[b*s.n+u]
	if e.calc >= c.start && e.calc >= s.modified[b] {
		return e
	}
	r := &st.routes[b]
	base := s.twCost(b, &r.full)
	*e = best3{calc: s.moves, cost: [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, pos: [3]int{-1, -1, -1}}
	// As in bestInsertion: the legs come from u's rows, the replaced edge
	// from the prefix sums of route.scan, and a lower bound affine in the
	// edges (merging only adds time warp) skips most positions.
	su := &s.single[u]
	in, out := s.legsIn[(u+1)*s.size:(u+2)*s.size], s.legs[(u+1)*s.size:(u+2)*s.size]
	obj := s.objLeg
	k := len(r.seq)
	c0 := float64(r.scan[k].edges) + s.bound(b, k+1, 0, r.full.svc+su.svc) - base
	edgesBefore, prev := 0, s.startLoc[b]
	for q := 0; q <= k; q++ {
		sp := &r.scan[q]
		next, pv, replaced := sp.next, prev, sp.edges-edgesBefore
		prev, edgesBefore = next, sp.edges
		if float64(int(in[pv][obj])+int(out[next][obj])-replaced)+c0 >= e.cost[2] {
			continue
		}
		x := joinLeg(&r.pre[q], su, in[pv])
		full := joinLeg(&x, &r.tail[q], out[next])
		e.add(s.twCost(b, &full)-base, q)
	}
	return e
}

// cheapestWithout is the cost of putting u into route b once the order at
// position j has left it (remW being that removal's cost), and the
// position: before seq[q], or q = -1 for j's place.
func (s *solver) cheapestWithout(st *state, ins *best3, u, b, j int, remW float64) (float64, int) {
	r := &st.routes[b]
	best, bq := math.Inf(1), -1
	for k := range 3 {
		if q := ins.pos[k]; q >= 0 && q != j && q != j+1 {
			best, bq = ins.cost[k], q
			break
		}
	}
	pre, tail, su := &r.pre[j], &r.tail[j+1], &s.single[u]
	base := s.twCost(b, &r.full) + remW
	lb := s.bound(b, len(r.seq), s.edges(pre)+s.arcIn(pre.last, u+1)+s.arc(u+1, tail.first)+s.edges(tail), pre.svc+su.svc+tail.svc) +
		s.twPen*float64(pre.tw+tail.tw)*(1-1e-9) - base
	if lb >= best {
		return best, bq
	}
	x := s.merge3(pre, su, tail)
	if c := s.twCost(b, &x) - base; c < best {
		best, bq = c, -1
	}
	return best, bq
}

// swapStarPass tries RELOCATE* and SWAP* on every pair of partner routes,
// skipping pairs unchanged since their last try in this local search; it
// applies every improving move it finds and reports whether there was one.
func (s *solver) swapStarPass(st *state) bool {
	c := &s.swap
	routes := c.routes[:0]
	for v := range st.routes {
		if len(st.routes[v].seq) > 0 {
			routes = append(routes, v)
		}
	}
	s.rng.Shuffle(len(routes), func(i, j int) { routes[i], routes[j] = routes[j], routes[i] })
	c.routes = routes
	improved := false
	for _, a := range routes {
		if s.poll() {
			return improved
		}
		s.stamp++
		partners := c.partners[:0]
		for _, u := range st.routes[a].seq {
			for _, w := range s.nb[u][:min(swapStarNeighbours, len(s.nb[u]))] {
				if b := st.routeOf[w]; b >= 0 && b != a && s.mark[b] != s.stamp {
					s.mark[b] = s.stamp
					partners = append(partners, b)
				}
			}
		}
		c.partners = partners
		for _, b := range partners {
			if len(st.routes[a].seq) == 0 || len(st.routes[b].seq) == 0 {
				continue
			}
			t := c.pairTested[a*s.m+b]
			if t >= c.start && max(s.modified[a], s.modified[b]) <= t {
				continue
			}
			c.pairTested[a*s.m+b], c.pairTested[b*s.m+a] = s.moves, s.moves
			s.fresh(st, a)
			s.fresh(st, b)
			if s.relocateStar(st, a, b) || s.swapStar(st, a, b) {
				improved = true
				if debugVerify {
					s.verify(st, "swap*")
				}
			}
		}
	}
	return improved
}

// swapStar applies the best SWAP* between routes a and b when it improves.
func (s *solver) swapStar(st *state, a, b int) bool {
	ra, rb := &st.routes[a], &st.routes[b]
	la, lb := ra.full.load, rb.full.load
	exAB := s.excess(a, la) + s.excess(b, lb)
	best := -improveEps
	bi, bj, bqU, bqW := -1, -1, -1, -1
	for i, u := range ra.seq {
		remU := s.removal(st, a, i)
		insU := s.insertions(st, u, b)
		for j, w := range rb.seq {
			remW := s.removal(st, b, j)
			d := remU + remW + s.loadPen*(s.excess(a, la-s.demand[u]+s.demand[w])+s.excess(b, lb-s.demand[w]+s.demand[u])-exAB)
			if d >= 0 {
				continue
			}
			cu, qu := s.cheapestWithout(st, insU, u, b, j, remW)
			if d+cu >= best {
				continue
			}
			cw, qw := s.cheapestWithout(st, s.insertions(st, w, a), w, a, i, remU)
			if d+cu+cw < best {
				best, bi, bj, bqU, bqW = d+cu+cw, i, j, qu, qw
			}
		}
	}
	if bi < 0 {
		return false
	}
	u, w := ra.seq[bi], rb.seq[bj]
	s.bufA = swapInto(s.bufA[:0], ra.seq, bi, w, bqW)
	s.bufB = swapInto(s.bufB[:0], rb.seq, bj, u, bqU)
	return s.applyIfBetter(st, a, b)
}

// applyIfBetter makes s.bufA and s.bufB the routes of a and b when they
// cost less than the current ones, evaluated exactly: the estimates that
// chose them leave out how time warp interacts within a route.
func (s *solver) applyIfBetter(st *state, a, b int) bool {
	newA, newB := s.evalSeq(a, s.bufA), s.evalSeq(b, s.bufB)
	base := st.routes[a].cost + st.routes[b].cost - improveEps
	return s.pcost(a, &newA)+s.pcost(b, &newB) < base && s.applyKept(st, a, s.bufA, b, s.bufB, base)
}

// swapInto appends to dst seq without its order at position i and with x
// inserted before seq[q] (q = len(seq) for the end), or in i's place when
// q < 0.
func swapInto(dst, seq []int, i, x, q int) []int {
	for k, y := range seq {
		if k == q {
			dst = append(dst, x)
		}
		if k == i {
			if q < 0 {
				dst = append(dst, x)
			}
			continue
		}
		dst = append(dst, y)
	}
	if q == len(seq) {
		dst = append(dst, x)
	}
	return dst
}

// relocateStar applies the best move of one order of a to route b or of b
// to a, at its cheapest position, when it improves (RELOCATE*: the node
// moves only try positions next to an order's granular neighbours).
func (s *solver) relocateStar(st *state, a, b int) bool {
	best := -improveEps
	bFrom, bTo, bi, bq := -1, -1, -1, -1
	for _, p := range [2][2]int{{a, b}, {b, a}} {
		from, to := p[0], p[1]
		rf, rt := &st.routes[from], &st.routes[to]
		lf, lt := rf.full.load, rt.full.load
		ex := s.excess(from, lf) + s.excess(to, lt)
		for i, u := range rf.seq {
			du := s.demand[u]
			d := s.removal(st, from, i) + s.loadPen*(s.excess(from, lf-du)+s.excess(to, lt+du)-ex)
			if d >= best {
				continue
			}
			if ins := s.insertions(st, u, to); ins.pos[0] >= 0 && d+ins.cost[0] < best {
				best, bFrom, bTo, bi, bq = d+ins.cost[0], from, to, i, ins.pos[0]
			}
		}
	}
	if bFrom < 0 {
		return false
	}
	rf, rt := &st.routes[bFrom], &st.routes[bTo]
	u := rf.seq[bi]
	s.bufA = append(append(s.bufA[:0], rf.seq[:bi]...), rf.seq[bi+1:]...)
	s.bufB = append(append(append(s.bufB[:0], rt.seq[:bq]...), u), rt.seq[bq:]...)
	return s.applyIfBetter(st, bFrom, bTo)
}
