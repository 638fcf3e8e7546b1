package vrp

// seg summarises a sequence of consecutive nodes (depot or orders) so that
// sequences can be concatenated in O(1) (Vidal et al. 2013, "time-window
// segments"). For the sequence, with the best choice of start time:
//
//	dur   minimum duration from the start at the first node to the end of the
//	      last node (travel + service + unavoidable waiting)
//	tw    time warp: the total amount by which windows/shifts would have to be
//	      stretched; 0 means the sequence is feasible
//	e, l  earliest and latest start at the first node achieving dur and tw
//
// The depot at the start of a route is a node with window [ShiftStart,
// ShiftEnd] and no service; so is the depot at the end. The dur of a full
// route (depot ... depot) with tw == 0 equals Return - Depart of Schedule:
// both are the duration of the latest feasible departure.
type seg struct {
	first, last int // locations of the first and last node; first < 0 marks the empty sequence
	n           int // number of orders in the sequence
	dur, tw     int
	e, l        int
	// sums of the legs inside the sequence by leg field: seconds of
	// travel (legDur) and metres (legDist); edges reads the objective's
	// without a branch
	sums [2]int
	svc  int // service seconds of the orders
	load float64
}

// Segments go to functions by pointer and are read in place: copying an
// 88-byte seg out of a route's cache to read one of its fields, or to pass
// it by value, made the local search 1.3 to 1.7 times slower, and up to 3.5
// times in a binary whose heap and stacks happened to land where the
// copies stall (docs/PERFORMANCE.md).

// emptySeg is the neutral element of merge.
var emptySeg = seg{first: -1, last: -1}

// merge concatenates a and b, driving from a's last node to b's first.
func (s *solver) merge(a, b *seg) seg {
	if a.first < 0 {
		return *b
	}
	if b.first < 0 {
		return *a
	}
	lg := s.legs[a.last*s.size+b.first]
	t := int(lg[legDur])
	at := a.dur - a.tw + t
	dw := max(b.e-at-a.l, 0)
	dtw := max(a.e+at-b.l, 0)
	return seg{
		first: a.first,
		last:  b.last,
		n:     a.n + b.n,
		dur:   a.dur + b.dur + t + dw,
		tw:    a.tw + b.tw + dtw,
		e:     max(b.e-at, a.e) - dw,
		l:     min(b.l-at, a.l) + dtw,
		sums:  [2]int{legDur: a.sums[legDur] + b.sums[legDur] + t, legDist: a.sums[legDist] + b.sums[legDist] + int(lg[legDist])},
		svc:   a.svc + b.svc,
		load:  a.load + b.load,
	}
}

// joinLeg is merge of two non-empty sequences with the leg between them
// given, for bestInsertion, which reads legs from the rows of the order it
// inserts. merge keeps its own copy of the arithmetic: routed through
// joinLeg it is a second call, and the local search took 10 to 20 % longer.
func joinLeg(a, b *seg, lg leg) seg {
	t := int(lg[legDur])
	at := a.dur - a.tw + t
	dw := max(b.e-at-a.l, 0)
	dtw := max(a.e+at-b.l, 0)
	return seg{
		first: a.first,
		last:  b.last,
		n:     a.n + b.n,
		dur:   a.dur + b.dur + t + dw,
		tw:    a.tw + b.tw + dtw,
		e:     max(b.e-at, a.e) - dw,
		l:     min(b.l-at, a.l) + dtw,
		sums:  [2]int{legDur: a.sums[legDur] + b.sums[legDur] + t, legDist: a.sums[legDist] + b.sums[legDist] + int(lg[legDist])},
		svc:   a.svc + b.svc,
		load:  a.load + b.load,
	}
}

// merge3 is merge of three sequences.
func (s *solver) merge3(a, b, c *seg) seg {
	ab := s.merge(a, b)
	return s.merge(&ab, c)
}

// chain appends the orders of seq to a.
func (s *solver) chain(a *seg, seq []int) seg {
	x := *a
	for _, u := range seq {
		x = s.merge(&x, &s.single[u])
	}
	return x
}

// feasible reports whether full, a complete route (depot ... depot) for
// vehicle v, keeps windows, shift and capacity.
func (s *solver) feasible(v int, full *seg) bool {
	return full.tw == 0 && fitsCapacity(full.load, s.capacity[v])
}

// admits reports whether the search may take full as vehicle v's route:
// in soft mode always (penalties price time warp and excess load), else
// only when it is feasible.
func (s *solver) admits(v int, full *seg) bool {
	return s.soft || s.feasible(v, full)
}

// pcost is the cost of full as the search compares it: cost, plus in soft
// mode the time warp and the load above capacity at the current penalties.
// In hard mode every route the search keeps is feasible, so pcost is cost.
func (s *solver) pcost(v int, full *seg) float64 {
	c := s.cost(v, full)
	if s.soft {
		c += s.penalty(v, full)
	}
	return c
}

// penalty prices full's time warp and its load above vehicle v's capacity.
func (s *solver) penalty(v int, full *seg) float64 {
	return s.twPen*float64(full.tw) + s.loadPen*s.excess(v, full.load)
}

// excess is how far load exceeds vehicle v's capacity, 0 within the
// tolerance of fitsCapacity.
func (s *solver) excess(v int, load float64) float64 {
	if fitsCapacity(load, s.capacity[v]) {
		return 0
	}
	return load - s.capacity[v]
}

// cost is the objective plus fixed cost of full, a complete route for
// vehicle v; 0 when it has no orders.
func (s *solver) cost(v int, full *seg) float64 {
	if full.n == 0 {
		return 0
	}
	if s.obj == ObjectiveDuration {
		return float64(full.dur) + s.fixed[v]
	}
	return float64(full.sums[legDist]) + s.fixed[v]
}

// edges is the sum of the objective's matrix over the legs of sg: metres
// for the distance objective, travel seconds for the duration objective.
func (s *solver) edges(sg *seg) int {
	return sg.sums[s.objLeg&1]
}

// bound is a lower bound of the cost of a complete route of vehicle v with n
// orders, whose legs sum to edges (see edges) and whose orders need svc
// seconds of service: exact for distance, and for duration it only leaves
// out waiting.
func (s *solver) bound(v, n, edges, svc int) float64 {
	if n == 0 {
		return 0
	}
	if s.obj == ObjectiveDuration {
		return float64(edges+svc) + s.fixed[v]
	}
	return float64(edges) + s.fixed[v]
}

// evalTail evaluates seq followed by vehicle v's end depot.
func (s *solver) evalTail(v int, seq []int) seg {
	x := s.chain(&emptySeg, seq)
	return s.merge(&x, &s.depotEnd[v])
}

// evalSeq evaluates the complete route of vehicle v through seq.
func (s *solver) evalSeq(v int, seq []int) seg {
	x := s.chain(&s.depot[v], seq)
	return s.merge(&x, &s.depotEnd[v])
}
