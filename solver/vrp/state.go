package vrp

import (
	"fmt"
	"math"
	"math/bits"
)

// route is the solver's view of one vehicle's route with cached prefix and
// suffix segments, so that a move touching positions i..j is evaluated by
// merging pre[i], the changed middle and tail[j+1].
type route struct {
	seq  []int // orders in driving order
	pre  []seg // pre[i]: start depot followed by seq[:i]; len(seq)+1 entries
	tail []seg // tail[i]: seq[i:] followed by the end depot
	full seg   // the whole route, depot to depot
	cost float64
	// scan[i] is what an insertion scan reads at position i (see scanPos).
	// Kept apart from pre and tail, whose 88-byte entries put every
	// position on its own cache line, so the scan over a route reads one
	// dense array. It is always up to date.
	scan []scanPos
	// x is the route's exact evaluation where the problem needs one
	// (fleetInfo.exact)
	x exactRoute
	// stale marks pre, tail and full as out of date: ruin-and-recreate
	// with the distance objective keeps only scan and cost while it
	// ruins and recreates (see solver.lazy), and fresh rebuilds the
	// segments when a move needs them.
	stale bool
}

// scanPos is a route position's entry of route.scan. ee and ls describe
// pre[i] and tail[i] when they have no time warp, which is all an
// insertion needs in hard mode: the order inserted at i starts at
// max(ee+travel, its window start) and the rest of the route stays on time
// if the order is done by ls minus the travel to seq[i].
type scanPos struct {
	next  int // location of seq[i] (order + 1), 0 (end depot) at i = len(seq)
	edges int // edges (see solver.edges) of pre[i+1], of the full route at i = len(seq)
	ee    int // earliest end of pre[i] (its first start plus its duration); noEnd when it has time warp
	ls    int // latest start of tail[i]; noStart when it has time warp
}

// Sentinels of scanPos: a prefix or tail with time warp admits no
// insertion, and both searches of windowRange skip it.
const (
	noEnd   = math.MaxInt / 4
	noStart = -noEnd
)

// earliestEnd is scanPos.ee of a prefix segment.
func earliestEnd(pre *seg) int {
	if pre.tw > 0 {
		return noEnd
	}
	return pre.e + pre.dur
}

// latestStart is scanPos.ls of a tail segment.
func latestStart(tail *seg) int {
	if tail.tw > 0 {
		return noStart
	}
	return tail.l
}

func (r *route) copyFrom(o *route) {
	r.seq = append(r.seq[:0], o.seq...)
	r.scan = append(r.scan[:0], o.scan...)
	r.stale = o.stale
	if !o.stale {
		r.pre = append(r.pre[:0], o.pre...)
		r.tail = append(r.tail[:0], o.tail...)
		r.full = o.full
	}
	r.cost = o.cost
	r.x = o.x
}

// state is a complete (partial-service) solution: one route per vehicle.
type state struct {
	routes []route // indexed by vehicle
	// load is each route's total demand, and busy has bit v set when
	// vehicle v's route has orders. Both are dense, apart from the route
	// headers: an insertion that tries every used route (bestInsertion's
	// fallback) walks the bits in vehicle order and reads 8 bytes per used
	// route instead of every vehicle's header (the benchmarks give one
	// vehicle per order; on gh1000 about 100 of 1,000 are used).
	load    []float64
	busy    []uint64
	routeOf []int   // order -> vehicle, -1 when not planned
	posOf   []int   // order -> index in its route's seq
	cost    float64 // sum of route costs
	missing int     // assignable orders that are not planned
	// lost is the sum of the weights (fleetInfo.weight) of those orders:
	// the total priority left out, then their count
	lost int
}

// setLoad records vehicle v's order count (only whether it is zero) and
// load in busy and load.
func (st *state) setLoad(v, orders int, load float64) {
	st.load[v] = load
	if bit := uint64(1) << (v & 63); orders > 0 {
		st.busy[v>>6] |= bit
	} else {
		st.busy[v>>6] &^= bit
	}
}

// used reports whether vehicle v's route has orders.
func (st *state) used(v int) bool { return st.busy[v>>6]>>(v&63)&1 == 1 }

// usedRoutes is the number of vehicles whose routes have orders.
func (st *state) usedRoutes() int {
	n := 0
	for _, w := range st.busy {
		n += bits.OnesCount64(w)
	}
	return n
}

func (s *solver) newState() *state {
	st := &state{
		routes:  make([]route, s.m),
		load:    make([]float64, s.m),
		busy:    make([]uint64, (s.m+63)/64),
		routeOf: make([]int, s.n),
		posOf:   make([]int, s.n),
	}
	for u := range st.routeOf {
		st.routeOf[u] = -1
	}
	st.missing, st.lost = len(s.assignableOrders), s.totalWeight
	for v := range st.routes {
		s.rebuild(st, v)
	}
	return st
}

func (st *state) copyFrom(o *state) {
	if len(st.routes) != len(o.routes) {
		st.routes = make([]route, len(o.routes))
	}
	for v := range o.routes {
		st.routes[v].copyFrom(&o.routes[v])
	}
	st.load = append(st.load[:0], o.load...)
	st.busy = append(st.busy[:0], o.busy...)
	st.routeOf = append(st.routeOf[:0], o.routeOf...)
	st.posOf = append(st.posOf[:0], o.posOf...)
	st.cost = o.cost
	st.missing = o.missing
	st.lost = o.lost
}

// better reports whether a is lexicographically better than b: less
// priority left out, fewer missing orders, then a lower cost.
func better(a, b *state) bool {
	if a.lost != b.lost {
		return a.lost < b.lost
	}
	return a.cost < b.cost-improveEps
}

// resizeKeep returns x with length n, keeping its current contents.
func resizeKeep[T any](x []T, n int) []T {
	if cap(x) < n {
		y := make([]T, n, n+n/2+4)
		copy(y, x)
		return y
	}
	return x[:n]
}

// shiftTail returns x with length k+1, its last keepTail+1 entries when it
// had oldLen+1 moved to the end.
func shiftTail[T any](x []T, k, oldLen, keepTail int) []T {
	if keepTail == 0 {
		return resizeKeep(x, k+1)
	}
	x = resizeKeep(x, max(k, oldLen)+1)
	copy(x[k-keepTail:k+1], x[oldLen-keepTail:oldLen+1])
	return x[:k+1]
}

// rebuild recomputes the caches of vehicle v's route after its seq changed,
// the positions of its orders and the state's cost.
func (s *solver) rebuild(st *state, v int) {
	s.refresh(st, v, 0, 0, 0)
}

// refresh is rebuild when only part of the route changed: the first keep
// orders and the last keepTail orders are the same as before, when the
// route had oldLen orders. Their cached entries are reused (the tail ones
// shifted to their new positions). Under s.lazy it updates scan, cost and
// ld only and marks the segments stale.
func (s *solver) refresh(st *state, v, keep, keepTail, oldLen int) {
	if s.touchMark[v] != s.touchStamp {
		s.touchMark[v] = s.touchStamp
		s.touched = append(s.touched, v)
	}
	if s.trackChanged {
		s.changed = append(s.changed, v)
	}
	s.moves++
	s.modified[v] = s.moves
	r := &st.routes[v]
	k := len(r.seq)
	if keep < 0 || keepTail < 0 || keep+keepTail > k || keep+keepTail > oldLen || len(r.scan) != oldLen+1 || r.stale && !s.lazy {
		keep, keepTail = 0, 0 // inconsistent hints or no segments to reuse: rebuild everything
	}
	dep := &s.depot[v]
	ee := dep.e // earliest end of pre[keep], read before shiftTail may overwrite it
	if keep > 0 {
		ee = r.scan[keep].ee
	}
	r.scan = shiftTail(r.scan, k, oldLen, keepTail)
	r.scan[keep].ee = ee
	old := r.cost
	if s.lazy {
		s.refreshScan(st, v, keep, keepTail)
	} else {
		s.refreshSegments(st, v, keep, keepTail, oldLen)
	}
	st.cost += r.cost - old
}

// refreshSegments is refresh that rebuilds the segments and derives
// route.scan from them.
func (s *solver) refreshSegments(st *state, v, keep, keepTail, oldLen int) {
	r := &st.routes[v]
	k := len(r.seq)
	r.pre = resizeKeep(r.pre, k+1)
	r.tail = shiftTail(r.tail, k, oldLen, keepTail)
	if keep == 0 {
		r.pre[0] = s.depot[v]
	}
	for i := keep; i < k; i++ {
		u := r.seq[i]
		p := &r.pre[i+1]
		*p = s.merge(&r.pre[i], &s.single[u])
		r.scan[i].next, r.scan[i].edges = u+1, s.edges(p)
		r.scan[i+1].ee = earliestEnd(p)
		st.routeOf[u] = v
		st.posOf[u] = i
	}
	if keepTail == 0 {
		r.tail[k] = s.depotEnd[v]
		r.scan[k].ls = s.depotEnd[v].l
	}
	for i := k - keepTail - 1; i >= 0; i-- {
		r.tail[i] = s.merge(&s.single[r.seq[i]], &r.tail[i+1])
		r.scan[i].ls = latestStart(&r.tail[i])
	}
	r.full = s.merge(&r.pre[k], &s.depotEnd[v])
	r.scan[k].next, r.scan[k].edges = s.endLoc[v], s.edges(&r.full)
	st.setLoad(v, k, r.pre[k].load)
	if s.fleet.exact {
		r.x = s.evalExact(v, r.seq)
	}
	r.cost = s.searchCost(v, r)
	r.stale = false
}

// refreshScan is refresh under s.lazy: route.scan from the recurrences of
// earliest ends and latest starts that merge computes for segments without
// time warp, the cost from the edge sum (the distance objective in hard
// mode), and the segments marked stale.
func (s *solver) refreshScan(st *state, v, keep, keepTail int) {
	r := &st.routes[v]
	k := len(r.seq)
	ee, edges, prev := r.scan[keep].ee, 0, s.startLoc[v]
	if keep > 0 {
		edges, prev = r.scan[keep-1].edges, r.seq[keep-1]+1
	}
	for i := keep; i < k; i++ {
		u := r.seq[i]
		su := &s.single[u]
		lg := s.legs[prev*s.size+u+1]
		if ee != noEnd {
			if start := max(ee+int(lg[legDur]), su.e); start <= su.l {
				ee = start + su.dur
			} else {
				ee = noEnd
			}
		}
		edges += int(lg[s.objLeg])
		r.scan[i].next, r.scan[i].edges = u+1, edges
		r.scan[i+1].ee = ee
		st.routeOf[u] = v
		st.posOf[u] = i
		prev = u + 1
	}
	edges += int(s.legs[prev*s.size+s.endLoc[v]][s.objLeg])
	r.scan[k].next, r.scan[k].edges = s.endLoc[v], edges
	if keepTail == 0 {
		r.scan[k].ls = s.depotEnd[v].l
	}
	for i := k - keepTail - 1; i >= 0; i-- {
		u := r.seq[i]
		su := &s.single[u]
		ls := r.scan[i+1].ls
		if ls != noStart {
			ls = min(su.l, ls-int(s.legs[(u+1)*s.size+r.scan[i+1].next][legDur])-su.dur)
			if ls < su.e {
				ls = noStart
			}
		}
		r.scan[i].ls = ls
	}
	ld := 0.0
	for _, u := range r.seq {
		ld += s.demand[u]
	}
	st.setLoad(v, k, ld)
	r.cost = 0
	if k > 0 {
		r.cost = float64(edges) + s.fixed[v]
	}
	r.stale = true
}

// fresh returns vehicle v's route with its segments up to date. A stale
// route's seq, scan and cost are current, so rebuilding its segments
// rewrites them with the same values (refreshScan's cost is the cost of
// the full segment in hard mode with the distance objective, the only
// mode that leaves routes stale) and leaves the state's cost as it is.
func (s *solver) fresh(st *state, v int) *route {
	r := &st.routes[v]
	if r.stale {
		s.refreshSegments(st, v, 0, 0, len(r.seq))
	}
	return r
}

// setSeq replaces vehicle v's sequence by seq (copied) and rebuilds it.
func (s *solver) setSeq(st *state, v int, seq []int) {
	r := &st.routes[v]
	r.seq = append(r.seq[:0], seq...)
	s.rebuild(st, v)
}

// insert puts order u at position q of vehicle v's route.
func (s *solver) insert(st *state, u, v, q int) {
	r := &st.routes[v]
	r.seq = append(r.seq, 0)
	copy(r.seq[q+1:], r.seq[q:])
	r.seq[q] = u
	st.missing--
	st.lost -= s.fleet.weight[u]
	s.refresh(st, v, q, len(r.seq)-1-q, len(r.seq)-1)
}

// firstEmpty returns the lowest-index vehicle of type t without orders, or -1.
func (s *solver) firstEmpty(st *state, t int) int {
	for _, v := range s.types[t] {
		if !st.used(v) {
			return v
		}
	}
	return -1
}

// scanOf computes route.scan of vehicle v's route seq from scratch, from
// the segments of its prefixes and tails (verify's reference for the
// recurrences of refresh).
func (s *solver) scanOf(v int, seq []int) []scanPos {
	k := len(seq)
	sc := make([]scanPos, k+1)
	for i := range sc {
		pre := s.chain(&s.depot[v], seq[:i])
		tail := s.evalTail(v, seq[i:])
		if i < k {
			sc[i].next = seq[i] + 1
			x := s.merge(&pre, &s.single[seq[i]])
			sc[i].edges = s.edges(&x)
		} else {
			full := s.merge(&pre, &s.depotEnd[v])
			sc[i].next, sc[i].edges = s.endLoc[v], s.edges(&full)
		}
		sc[i].ee, sc[i].ls = earliestEnd(&pre), latestStart(&tail)
	}
	return sc
}

// debugVerify makes the solver check its caches after every change of a
// state (tests only; it is slow).
var debugVerify = false

// verify recomputes everything cached in st from the sequences and panics on
// a difference.
func (s *solver) verify(st *state, where string) {
	missing, lost, total := 0, 0, 0.0
	seen := make([]bool, s.n)
	for v := range st.routes {
		r := &st.routes[v]
		k := len(r.seq)
		if len(r.scan) != k+1 || !r.stale && (len(r.pre) != k+1 || len(r.tail) != k+1) {
			panic(fmt.Sprintf("%s: vehicle %d: cache lengths %d/%d/%d for %d orders", where, v, len(r.pre), len(r.tail), len(r.scan), k))
		}
		for i, want := range s.scanOf(v, r.seq) {
			if got := r.scan[i]; got != want {
				panic(fmt.Sprintf("%s: vehicle %d scan[%d] %+v, want %+v", where, v, i, got, want))
			}
		}
		ld := 0.0
		for i, u := range r.seq {
			if seen[u] || st.routeOf[u] != v || st.posOf[u] != i {
				panic(fmt.Sprintf("%s: order %d at vehicle %d position %d: routeOf %d posOf %d seen %v", where, u, v, i, st.routeOf[u], st.posOf[u], seen[u]))
			}
			seen[u] = true
			ld += s.demand[u]
			if r.stale {
				continue
			}
			if got, want := r.pre[i+1], s.chain(&s.depot[v], r.seq[:i+1]); got != want {
				panic(fmt.Sprintf("%s: vehicle %d pre[%d] %+v, want %+v", where, v, i+1, got, want))
			}
			if got, want := r.tail[i], s.evalTail(v, r.seq[i:]); got != want {
				panic(fmt.Sprintf("%s: vehicle %d tail[%d] %+v, want %+v", where, v, i, got, want))
			}
		}
		if ld != st.load[v] || st.used(v) != (k > 0) {
			panic(fmt.Sprintf("%s: vehicle %d load %v used %v, want %v and %d orders", where, v, st.load[v], st.used(v), ld, k))
		}
		full := s.evalSeq(v, r.seq)
		if !r.stale && full != r.full {
			panic(fmt.Sprintf("%s: vehicle %d full %+v, want %+v", where, v, r.full, full))
		}
		if k > 0 && !s.admits(v, &full) {
			panic(fmt.Sprintf("%s: vehicle %d route %v infeasible: %+v", where, v, r.seq, full))
		}
		c := s.pcost(v, &full)
		if s.fleet.exact {
			x := s.evalExact(v, r.seq)
			if k > 0 && !s.admitsExact(&x) {
				panic(fmt.Sprintf("%s: vehicle %d route %v infeasible: %+v", where, v, r.seq, x))
			}
			c = s.exactCost(&x)
		}
		if c != r.cost {
			panic(fmt.Sprintf("%s: vehicle %d cost %v, want %v", where, v, r.cost, c))
		}
		total += r.cost
	}
	for u := range s.n {
		if !seen[u] {
			if st.routeOf[u] != -1 {
				panic(fmt.Sprintf("%s: order %d not in a route but routeOf %d", where, u, st.routeOf[u]))
			}
			if s.assignable[u] {
				missing++
				lost += s.fleet.weight[u]
			}
		}
	}
	if missing != st.missing || lost != st.lost || math.Abs(total-st.cost) > 1e-6*math.Max(1, total) {
		panic(fmt.Sprintf("%s: missing %d lost %d cost %v, want %d %d %v", where, st.missing, st.lost, st.cost, missing, lost, total))
	}
}
