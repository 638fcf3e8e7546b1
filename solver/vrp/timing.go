package vrp

// The exact timing of a route of a real fleet: several windows per order,
// breaks taken where the vehicle is, start and end locations, open routes.
// The segment algebra (segment.go) prices a route with each order's
// windows merged into one and without breaks, a bound that never exceeds
// what this file computes; where the problem has either, a route is timed
// here before the search keeps it (fleet.go).

// maxBreaks bounds Vehicle.Breaks for the timing's fixed-size tables.
const maxBreaks = 3

// timingState is the best way found to have served a route's first stops
// with a number of breaks taken: least time warp, then earliest departure
// from the last place.
type timingState struct {
	tw, t int
	ok    bool
	// how it was reached: breaks taken before the preceding stop, and
	// before the leg to it (the rest were taken at it, before service)
	prevJ, beforeLeg int8
}

func (a *timingState) worse(tw, t int) bool {
	return !a.ok || tw < a.tw || tw == a.tw && t < a.t
}

// timingPlan is a route's timing decisions: where each break is taken and
// which window each stop is served in. Gap k is the leg to stop k and the
// wait there (k = len(seq): the leg to the end location).
type timingPlan struct {
	// leg[k] breaks are taken before the leg of gap k, at[k] after it:
	// at stop k before its service, or at the end location
	leg, at []int8
	win     []int8 // per stop: index of the window served
}

// timer times routes; it holds scratch space, so each solver (and each
// call of Schedule) has its own.
type timer struct {
	p    *Problem
	dp   []timingState // (len(seq)+1) x (maxBreaks+1)
	plan timingPlan
	wait int // the waiting of the last replay
}

// takeBreaks takes breaks from..to-1 of veh one after the other from time
// t; a break that cannot start by its latest start warps back to it.
func takeBreaks(veh *Vehicle, from, to, t, tw int) (int, int) {
	for b := from; b < to; b++ {
		br := &veh.Breaks[b]
		bs := max(t, br.Start)
		if late := bs - (br.End - br.Duration); late > 0 {
			tw += late
			bs -= late
		}
		t = bs + br.Duration
	}
	return t, tw
}

// window is the bounds of o's window k (its only window when it has one).
func window(o *Order, k int) (lo, hi int) {
	if len(o.Windows) < 2 {
		return o.WindowStart, o.WindowEnd
	}
	return o.Windows[k].Start, o.Windows[k].End
}

// firstOpen is the index of o's first window that has not closed by t, or
// of its last one when all have.
func firstOpen(o *Order, t int) int {
	if len(o.Windows) < 2 {
		return 0
	}
	for k := range o.Windows {
		if t <= o.Windows[k].End {
			return k
		}
	}
	return len(o.Windows) - 1
}

// startIn is when service starts in the window [lo, hi] for a vehicle
// ready at t, and by how much it is late; with warp a late start warps
// back to hi (the lateness is then the time warp).
func startIn(lo, hi, t int, warp bool) (start, late int) {
	start = max(t, lo)
	late = max(0, start-hi)
	if warp && late > 0 {
		start = hi
	}
	return start, late
}

// serveAt returns when service of o starts for a vehicle ready at t, in
// which window (the first not closed by t, see firstOpen) and how late
// (see startIn).
func serveAt(o *Order, t int, warp bool) (start, win, late int) {
	win = firstOpen(o, t)
	lo, hi := window(o, win)
	start, late = startIn(lo, hi, t, warp)
	return start, win, late
}

// endLocation is where vehicle v's route ends, -1 for an open route.
func (p *Problem) endLocation(v int) int {
	if p.Vehicles[v].OpenEnd {
		return -1
	}
	return p.Vehicles[v].End
}

// best finds the timing of vehicle v's route through seq with the least
// time warp (and, among those, the earliest return) when it leaves at its
// shift start, leaving the decisions in t.plan. It returns the time warp
// and the return.
func (t *timer) best(v int, seq []int) (tw, ret int) {
	return t.bestFrom(v, seq, t.p.Vehicles[v].ShiftStart)
}

// bestFrom is best for a vehicle that leaves no earlier than depart.
func (t *timer) bestFrom(v int, seq []int, depart int) (tw, ret int) {
	p := t.p
	veh := &p.Vehicles[v]
	nb := len(veh.Breaks)
	if len(seq) == 0 {
		nb = 0 // an unused vehicle takes no breaks
	}
	const w = maxBreaks + 1
	n := len(seq)
	if cap(t.dp) < (n+2)*w {
		t.dp = make([]timingState, (n+2)*w)
	}
	dp := t.dp[:(n+2)*w]
	for i := range dp {
		dp[i] = timingState{}
	}
	dp[0] = timingState{t: depart, ok: true}
	end := p.endLocation(v)
	from := veh.Start
	bestTW, bestRet, bestJ, bestLeg := 0, 0, -1, 0
	for k := 0; k <= n; k++ {
		cur := dp[k*w : k*w+w]
		for j := 0; j <= nb; j++ {
			c := cur[j]
			if !c.ok {
				continue
			}
			for j1 := j; j1 <= nb; j1++ {
				t1, tw1 := takeBreaks(veh, j, j1, c.t, c.tw)
				if k == n {
					// The breaks left are taken at the end location,
					// after the leg (an open route has none: it ends
					// at its last stop).
					if end < 0 && j1 != nb {
						continue
					}
					r, tw2 := t1, tw1
					if end >= 0 {
						r, tw2 = takeBreaks(veh, j1, nb, r+p.Duration[from][end], tw2)
					}
					if r > veh.ShiftEnd {
						tw2 += r - veh.ShiftEnd
						r = veh.ShiftEnd
					}
					if bestJ < 0 || tw2 < bestTW || tw2 == bestTW && r < bestRet {
						bestTW, bestRet, bestJ, bestLeg = tw2, r, j, j1-j
					}
					continue
				}
				o := &p.Orders[seq[k]]
				a := t1 + p.Duration[from][seq[k]+1]
				next := dp[(k+1)*w : (k+1)*w+w]
				for j2 := j1; j2 <= nb; j2++ {
					t2, tw2 := takeBreaks(veh, j1, j2, a, tw1)
					start, _, tw3 := serveAt(o, t2, true)
					dep, tw3 := start+o.ServiceS, tw3+tw2
					if next[j2].worse(tw3, dep) {
						next[j2] = timingState{tw: tw3, t: dep, ok: true, prevJ: int8(j), beforeLeg: int8(j1 - j)}
					}
				}
			}
		}
		if k < n {
			from = seq[k] + 1
		}
	}
	// Walk the decisions back: the state after stop k came through gap
	// k-1.
	pl := &t.plan
	pl.leg = resizeKeep(pl.leg, n+1)
	pl.at = resizeKeep(pl.at, n+1)
	pl.win = resizeKeep(pl.win, n)
	pl.leg[n], pl.at[n] = int8(bestLeg), int8(nb-bestJ-bestLeg)
	j := bestJ
	for k := n; k > 0; k-- {
		st := &dp[k*w+j]
		pl.leg[k-1] = st.beforeLeg
		pl.at[k-1] = int8(j - int(st.prevJ) - int(st.beforeLeg))
		j = int(st.prevJ)
	}
	return bestTW, bestRet
}

// replay times vehicle v's route through seq by the decisions in t.plan,
// leaving at depart. With warp, a stop or break that cannot start in time
// warps back (the search's time warp); without, it starts late (the
// baseline, which does not enforce windows). With fixedWin each stop is
// served in the window t.plan.win names, else in the first one not closed
// on arrival (recorded in t.plan.win). It returns the time warp (lateness
// without warp), the return, and the departure's slack: how much later
// the route could leave and still return at the same time, without making
// a stop or break late that is on time. When r is not nil it fills r's
// stops, breaks and totals.
func (t *timer) replay(v int, seq []int, depart int, warp, fixedWin bool, r *Route) (tw, ret, slack int) {
	p := t.p
	veh := &p.Vehicles[v]
	pl := &t.plan
	n := len(seq)
	cumWait, slack := 0, NoWindowEnd*4
	b := 0
	// rest takes the breaks of the plan from b on, count of them, at time x.
	rest := func(count, x, after int) int {
		for range count {
			br := &veh.Breaks[b]
			bs := max(x, br.Start)
			latest := br.End - br.Duration
			cumWait += bs - x
			if bs > latest {
				tw += bs - latest
				if warp {
					bs = latest
				}
			}
			slack = min(slack, cumWait+max(0, latest-bs))
			if r != nil {
				r.Breaks = append(r.Breaks, PlannedBreak{Break: b, Start: bs, End: bs + br.Duration, AfterStop: after})
			}
			x = bs + br.Duration
			b++
		}
		return x
	}
	if r != nil {
		*r = Route{Vehicle: v, Depart: depart, Stops: make([]Stop, n), Breaks: r.Breaks[:0]}
		if len(p.Dimensions) > 0 {
			r.Loads = make([]float64, len(p.Dimensions))
		}
	}
	x, from := depart, veh.Start
	for k := 0; k < n; k++ {
		x = rest(int(pl.leg[k]), x, k)
		u := seq[k]
		o := &p.Orders[u]
		leg := p.Duration[from][u+1]
		arr := x + leg
		x = rest(int(pl.at[k]), arr, k)
		win := int(pl.win[k])
		if !fixedWin {
			win = firstOpen(o, x)
			pl.win[k] = int8(win)
		}
		lo, hi := window(o, win)
		start, late := startIn(lo, hi, x, warp)
		tw += late
		cumWait += max(0, start-x)
		slack = min(slack, cumWait+max(0, hi-start))
		if r != nil {
			st := &r.Stops[k]
			*st = Stop{Order: u, Arrival: arr, Start: start, Depart: start + o.ServiceS, Wait: start - arr,
				LegDistance: p.Distance[from][u+1], LegTravel: leg, Window: win}
			if !warp {
				st.Late = late
			}
			r.Distance += st.LegDistance
			r.DriveS += leg
			r.Load += o.Demand
			for d, l := range o.Loads {
				r.Loads[d] += l
			}
		}
		x = start + o.ServiceS
		from = u + 1
	}
	x = rest(int(pl.leg[n]), x, n)
	ret = x
	if end := p.endLocation(v); end >= 0 {
		ret = rest(int(pl.at[n]), ret+p.Duration[from][end], n)
		if r != nil {
			r.Distance += p.Distance[from][end]
			r.DriveS += p.Duration[from][end]
		}
	}
	if ret > veh.ShiftEnd {
		tw += ret - veh.ShiftEnd
		if warp {
			ret = veh.ShiftEnd
		}
	}
	if r != nil {
		r.Return = ret
	}
	t.wait = cumWait
	return tw, ret, min(slack, cumWait)
}

// schedule times vehicle v's route through seq as the search prices it:
// the decisions with the least time warp, leaving as late as that allows
// without returning later. It returns the time warp and the departure and
// return; with r it fills r (with warp false, late stops start late
// instead of warping back: Schedule's times).
func (t *timer) schedule(v int, seq []int, r *Route, warp bool) (tw, depart, ret int) {
	veh := &t.p.Vehicles[v]
	d := veh.ShiftStart
	if tw, _ = t.bestFrom(v, seq, d); tw > 0 || len(seq) == 0 {
		return t.leaveLate(v, seq, r, warp)
	}
	// ret(d), the earliest return of a departure at d, does not fall as d
	// grows: it stays flat while the route waits somewhere (the duration
	// ret(d) - d falls), rises with d once it waits nowhere, and jumps
	// when a stop or a break can no longer start in time and moves to a
	// later window or place. Each pass finds the end of the flat stretch
	// that begins at d (replay's slack) and starts the next one a second
	// later; the shortest route is at the end of one of them. A stretch
	// ending without waiting left is as short as the route can be.
	bestStart, bestD, bestDur := d, d, -1
	for range 4 * (len(seq) + 2) * (len(veh.Breaks) + 2) {
		_, ret, slack := t.replay(v, seq, d, true, false, nil)
		if dur := ret - d - slack; bestDur < 0 || dur < bestDur {
			bestStart, bestD, bestDur = d, d+slack, dur
		}
		if slack == t.wait {
			break
		}
		d += slack + 1
		if tw, _ = t.bestFrom(v, seq, d); tw > 0 {
			break
		}
	}
	t.bestFrom(v, seq, bestStart)
	t.replay(v, seq, bestStart, warp, false, nil)
	tw, ret, _ = t.replay(v, seq, bestD, warp, true, r)
	return tw, bestD, ret
}

// leaveLate times the route by the decisions in t.plan, leaving as late
// as returns at the same time (see replay's slack).
func (t *timer) leaveLate(v int, seq []int, r *Route, warp bool) (tw, depart, ret int) {
	start := t.p.Vehicles[v].ShiftStart
	_, _, delay := t.replay(v, seq, start, warp, false, nil)
	tw, ret, _ = t.replay(v, seq, start+delay, warp, true, r)
	return tw, start + delay, ret
}

// withinLimit reports whether vehicle v's route through seq is on time
// and no longer than its MaxDuration when it leaves as late as returns at
// the earliest: one timing, where the shortest departure (schedule) may
// take several.
func (t *timer) withinLimit(v int, seq []int) bool {
	if tw, _ := t.best(v, seq); tw > 0 {
		return false
	}
	tw, depart, ret := t.leaveLate(v, seq, nil, true)
	return tw == 0 && ret-depart <= t.p.Vehicles[v].MaxDuration
}

// baselinePlan fills t.plan the way a dispatcher takes breaks: at the
// first place (the start location or a stop, after its service) where the
// break may start, or earlier, waiting for it there, when the next leg
// would end after its latest start; after the last stop, the breaks that
// may start by the return are taken at the end location (for an open
// route, at the last stop).
func (t *timer) baselinePlan(v int, seq []int) {
	p := t.p
	veh := &p.Vehicles[v]
	n := len(seq)
	pl := &t.plan
	pl.leg = resizeKeep(pl.leg, n+1)
	pl.at = resizeKeep(pl.at, n+1)
	pl.win = resizeKeep(pl.win, n)
	nb := len(veh.Breaks)
	if n == 0 {
		nb = 0
	}
	x, from, b := veh.ShiftStart, veh.Start, 0
	end := p.endLocation(v)
	for k := 0; k <= n; k++ {
		pl.leg[k], pl.at[k] = 0, 0
		next := end
		if k < n {
			next = seq[k] + 1
		}
		for b < nb {
			br := &veh.Breaks[b]
			if next >= 0 && x < br.Start && x+p.Duration[from][next] <= br.End-br.Duration {
				break
			}
			x = max(x, br.Start) + br.Duration
			pl.leg[k]++
			b++
		}
		if k == n {
			pl.at[n] = int8(nb - b)
			break
		}
		o := &p.Orders[seq[k]]
		start, _, _ := serveAt(o, x+p.Duration[from][seq[k]+1], false)
		x = start + o.ServiceS
		from = seq[k] + 1
	}
}
