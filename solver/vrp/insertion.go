package vrp

import (
	"math"
	"math/bits"
)

// bestInsertion finds the cheapest feasible position for order u in the
// routes of st (and in one empty vehicle per type). With blink > 0 each
// position is skipped with that probability (SISR's blinks). When
// nearOnly, used routes are limited to those holding one of u's neighbours;
// if none of those admits u, all routes are tried.
func (s *solver) bestInsertion(st *state, u int, blink float64, nearOnly bool) (bv, bq int, bd float64) {
	if s.fleet.exact {
		return s.bestInsertionExact(st, u, blink, nearOnly)
	}
	bv, bq, bd = -1, -1, 0
	// Without blinks and over all routes, the search is exhaustive: it does
	// not rely on the triangle inequality, which real road matrices may
	// break, so an order that fits somewhere is never reported unplanned.
	exact := blink == 0 && !nearOnly
	// In hard mode with the distance objective an insertion reads only
	// route.scan: its cost is its lower bound, and whether it keeps the
	// windows follows from the earliest end before it and the latest
	// start after it.
	fast := !s.soft && s.obj == ObjectiveDistance
	su := s.single[u]
	d := s.demand[u]
	in, out := s.legsIn[(u+1)*s.size:(u+2)*s.size], s.legs[(u+1)*s.size:(u+2)*s.size] // legs into and out of u
	obj := s.objLeg
	try := func(v int) {
		if !s.soft && !fitsCapacity(st.load[v]+d, s.capacity[v]) {
			return
		}
		r := &st.routes[v]
		k := len(r.seq)
		lo, hi := 0, k
		if !s.soft {
			if lo, hi = windowRange(r, &su); lo > hi {
				return
			}
		}
		// bound is affine in the edge sum: lb = edges + c0.
		var c0 float64
		if fast {
			c0 = float64(r.scan[k].edges) + s.fixed[v] - r.cost
		} else {
			c0 = float64(r.scan[k].edges) + s.bound(v, k+1, 0, r.full.svc+su.svc) - r.cost
		}
		// Every matrix entry read below is in a row of u; the edge that
		// an insertion replaces is the difference of two prefix sums.
		edgesBefore, prev := 0, s.startLoc[v]
		if lo > 0 {
			edgesBefore, prev = r.scan[lo-1].edges, r.scan[lo-1].next
		}
		for q := lo; q <= hi; q++ {
			sp := &r.scan[q] // the location after position q and the edges up to it
			next, pv, replaced := sp.next, prev, sp.edges-edgesBefore
			prev, edgesBefore = next, sp.edges
			if blink > 0 && s.blinked(blink) {
				continue
			}
			lb := float64(int(in[pv][obj])+int(out[next][obj])-replaced) + c0
			if bv >= 0 && lb >= bd {
				continue
			}
			if fast {
				at := sp.ee + int(in[pv][legDur])
				if at > su.l {
					if exact {
						continue
					}
					break // u is reached too late; later positions reach it later still (triangle inequality)
				}
				if max(at, su.e)+su.dur+int(out[next][legDur]) > sp.ls {
					continue // the rest of the route would be late
				}
				// The same sum as cost(full) - r.cost, so that ties
				// break as with segments.
				delta := float64(r.scan[k].edges+int(in[pv][obj])+int(out[next][obj])-replaced) + s.fixed[v] - r.cost
				if bv < 0 || delta < bd {
					bv, bq, bd = v, q, delta
				}
				continue
			}
			x := joinLeg(&r.pre[q], &su, in[pv])
			if x.tw > 0 && !s.soft {
				if exact {
					continue
				}
				break // u is reached too late; later positions reach it later still (triangle inequality)
			}
			full := joinLeg(&x, &r.tail[q], out[next])
			if full.tw > 0 && !s.soft {
				continue // capacity was checked for the whole route
			}
			delta := s.pcost(v, &full) - r.cost
			if bv < 0 || delta < bd {
				bv, bq, bd = v, q, delta
			}
		}
	}
	s.usedRoutes(st, u, nearOnly, try, func() bool { return bv >= 0 })
	nt := len(s.types)
	for t, c := range s.alone[u*nt : u*nt+nt] {
		if math.IsInf(c, 1) || bv >= 0 && c >= bd {
			continue
		}
		if v := s.firstEmpty(st, t); v >= 0 {
			bv, bq, bd = v, 0, c
		}
	}
	return bv, bq, bd
}

// usedRoutes calls try with each used route an insertion of order u
// tries: when nearOnly, those holding one of u's neighbours, then, if
// found says none of them admitted u, the others; else all of them.
func (s *solver) usedRoutes(st *state, u int, nearOnly bool, try func(v int), found func() bool) {
	if nearOnly {
		s.stamp++
		for _, w := range s.nb[u] {
			v := st.routeOf[w]
			if v >= 0 && s.mark[v] != s.stamp {
				s.mark[v] = s.stamp
				try(v)
			}
		}
		if found() {
			return
		}
	}
	for i, w := range st.busy {
		for ; w != 0; w &= w - 1 {
			if v := i<<6 | bits.TrailingZeros64(w); !nearOnly || s.mark[v] != s.stamp {
				try(v)
			}
		}
	}
}

// windowRange returns the positions lo..hi of route r where the order
// whose single segment is su may go as far as the windows alone tell:
// inserted after hi, it is reached after its window closes (or the prefix
// before it has time warp); before lo, its earliest end is after the latest
// start of the rest of the route (or that rest has time warp). Both hold
// whatever the travel times, so even a matrix that breaks the triangle
// inequality loses no feasible position. Earliest ends of prefixes and
// latest starts of suffixes (route.scan) only grow along a route, so both
// ends are binary searches: on tight windows most positions are never
// scanned (100,000 ruin-and-recreate iterations on r1_10_1 1.24 times
// faster, on r2_10_1 1.55 times).
func windowRange(r *route, su *seg) (lo, hi int) {
	// Both searches are branch-free: a binary search's comparisons are
	// unpredictable, and their mispredictions cost more than its reads. The
	// sign of a difference (x>>63 is -1 when x < 0, else 0) masks the step
	// (the compiler keeps a branch for an if). The sentinels stay far from
	// overflow: |noEnd| is a quarter of the int range.
	sc := r.scan
	base, n := 0, len(sc)
	for n > 1 {
		half := n >> 1
		base += half & ((sc[base+half].ee - su.l - 1) >> 63) // ee <= l
		n -= half
	}
	hi = base
	if sc[base].ee > su.l {
		hi--
	}
	if hi < 0 {
		return 0, -1
	}
	start := su.e + su.dur
	base, n = 0, hi+1
	for n > 1 {
		half := n >> 1
		base += half & ((sc[base+half].ls - start) >> 63) // ls < start
		n -= half
	}
	lo = base
	if sc[base].ls < start {
		lo++
	}
	return lo, hi
}

// blinked reports whether to skip the current position, with probability
// p per position. It draws the geometric gap to the next blink instead of
// one random number per position, which saves about 5 % of the
// ruin-and-recreate time.
func (s *solver) blinked(p float64) bool {
	if s.blinkGap > 0 {
		s.blinkGap--
		return false
	}
	s.blinkGap = int(math.Log(1-s.rng.Float64()) / math.Log1p(-p))
	return true
}
