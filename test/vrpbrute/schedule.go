package vrpbrute

import (
	"slices"

	"routeopt.io/routeopt/solver/vrp"
)

// route evaluates sequences of orders for one vehicle: the earliest
// schedule from a departure time, and the departure that makes the route
// shortest.
type route struct {
	p       *vrp.Problem
	v       int
	veh     *vrp.Vehicle
	scratch [2][]label
}

// maxBreaks bounds the breaks of a vehicle Solve takes.
const maxBreaks = 8

// label is one way of reaching a stop (or the start): the vehicle is free
// there from t on, having taken its first k breaks. Of two labels the one
// free no later with no fewer breaks taken is at least as good, since the
// other's future is open to it too.
type label struct {
	t, k int
	// How the label was reached, to rebuild the schedule: the label it
	// extends at the previous place, the breaks taken by then before the
	// leg (kb; breaks kb..k-1 are taken at the stop), the arrival, the
	// service start and the window served.
	parent, kb, arrive, start, window int
}

// windows are the windows the order's service may start in.
func windows(o *vrp.Order) []vrp.Window {
	if len(o.Windows) >= 2 {
		return o.Windows
	}
	return []vrp.Window{{Start: o.WindowStart, End: o.WindowEnd}}
}

// takeBreak is the end of break b taken as early as possible from t, or
// false when it no longer fits its window.
func takeBreak(b vrp.Break, t int) (int, bool) {
	s := max(t, b.Start)
	return s + b.Duration, s+b.Duration <= b.End
}

// start is the labels of a route leaving at d.
func (r *route) start(d int) []label { return []label{{t: d, parent: -1}} }

// step extends the labels at location from over the leg to order o: the
// vehicle takes any number of its next breaks before the leg, then any
// number at the stop while waiting, and starts the service at the
// earliest moment inside a window. Breaks are taken as early as they may
// be: later never helps, since the vehicle may wait after them instead.
func (r *route) step(dst, prev []label, from, o int) []label {
	ord := &r.p.Orders[o]
	travel := r.p.Duration[from][o+1]
	ws := windows(ord)
	bs := r.veh.Breaks
	out := dst[:0]
	for pi, l := range prev {
		t1 := l.t
		for kb := l.k; kb <= len(bs); kb++ {
			if kb > l.k {
				var ok bool
				if t1, ok = takeBreak(bs[kb-1], t1); !ok {
					break
				}
			}
			arrive := t1 + travel
			t2 := arrive
			for ka := kb; ka <= len(bs); ka++ {
				if ka > kb {
					var ok bool
					if t2, ok = takeBreak(bs[ka-1], t2); !ok {
						break
					}
				}
				w := 0
				for w < len(ws) && max(t2, ws[w].Start) > ws[w].End {
					w++
				}
				if w == len(ws) {
					break
				}
				s := max(t2, ws[w].Start)
				out = append(out, label{t: s + ord.ServiceS, k: ka, parent: pi, kb: kb, arrive: arrive, start: s, window: w})
			}
		}
	}
	return pareto(out)
}

// pareto keeps the labels no other label is at least as good as: for
// each number of breaks taken, the earliest, and only if every label with
// more breaks is later. They come out by breaks taken, most first.
func pareto(ls []label) []label {
	var first [maxBreaks + 1]int // the earliest label per breaks taken, + 1
	for i, l := range ls {
		if j := first[l.k] - 1; j < 0 || l.t < ls[j].t {
			first[l.k] = i + 1
		}
	}
	var keep [maxBreaks + 1]label
	n, best := 0, vrp.NoWindowEnd*8
	for k := maxBreaks; k >= 0; k-- {
		if j := first[k] - 1; j >= 0 && ls[j].t < best {
			keep[n], best = ls[j], ls[j].t
			n++
		}
	}
	return append(ls[:0], keep[:n]...)
}

// finish closes a route whose last stop is at location last: the vehicle
// takes some of its remaining breaks there, drives to its end location
// and takes the rest there (an open route has no leg and takes them all
// at the last stop). It returns the earliest return within the shift, the
// label it comes from (or -1), and how many breaks in all are taken by
// the time the vehicle leaves the last stop.
func (r *route) finish(ls []label, last int) (ret, from, split int) {
	nb := len(r.veh.Breaks)
	travel := 0
	if !r.veh.OpenEnd {
		travel = r.p.Duration[last][r.veh.End]
	}
	ret, from = 0, -1
	for i, l := range ls {
		for m := l.k; m <= nb; m++ {
			if r.veh.OpenEnd && m < nb {
				continue
			}
			t, ok := l.t, true
			for k := l.k; k < m && ok; k++ {
				t, ok = takeBreak(r.veh.Breaks[k], t)
			}
			t += travel
			for k := m; k < nb && ok; k++ {
				t, ok = takeBreak(r.veh.Breaks[k], t)
			}
			if ok && t <= r.veh.ShiftEnd && (from < 0 || t < ret) {
				ret, from, split = t, i, m
			}
		}
	}
	return ret, from, split
}

// levels runs the earliest schedule of seq from departure d, keeping the
// labels of every stop; nil when a stop cannot be reached in time.
func (r *route) levels(seq []int, d int) [][]label {
	out := [][]label{r.start(d)}
	from := r.veh.Start
	for _, o := range seq {
		next := r.step(nil, out[len(out)-1], from, o)
		if len(next) == 0 {
			return nil
		}
		out = append(out, next)
		from = o + 1
	}
	return out
}

// returnFrom is the earliest return of seq leaving at d, or false. It
// keeps only the labels of the last stop, in r's scratch space.
func (r *route) returnFrom(seq []int, d int) (int, bool) {
	cur := append(r.scratch[0][:0], label{t: d, parent: -1})
	next := r.scratch[1]
	from := r.veh.Start
	for _, o := range seq {
		next = r.step(next, cur, from, o)
		if len(next) == 0 {
			return 0, false
		}
		cur, next = next, cur
		from = o + 1
	}
	r.scratch[0], r.scratch[1] = cur, next
	ret, at, _ := r.finish(cur, r.lastLoc(seq))
	return ret, at >= 0
}

func (r *route) lastLoc(seq []int) int {
	if len(seq) == 0 {
		return r.veh.Start
	}
	return seq[len(seq)-1] + 1
}

// shortest returns the departure that makes seq's route shortest (Return -
// Depart least) and its return, or false when seq has no schedule.
//
// Why the candidates suffice: fix for every stop the window it is served
// in and for every break where it is taken. The earliest return is then a
// maximum of terms d + c and constants, so Return - d never grows with d,
// and the shortest route leaves as late as that choice allows. What stops
// a later departure is a service reaching the end of its window, a break
// the end of its window, or the return the end of the shift, with no wait
// before it: d plus the driving, service and break time up to that point
// equals that end. The breaks before any point are the vehicle's first k,
// so the candidates are every such end minus every such sum. Each
// candidate's earliest return is no later than that choice's, so the best
// candidate is the best of every choice.
func (r *route) shortest(seq []int) (depart, ret int, ok bool) {
	veh := r.veh
	if _, ok := r.returnFrom(seq, veh.ShiftStart); !ok {
		return 0, 0, false
	}
	brk := make([]int, len(veh.Breaks)+1) // brk[k]: the first k breaks' time
	for i, b := range veh.Breaks {
		brk[i+1] = brk[i] + b.Duration
	}
	cands := []int{veh.ShiftStart}
	add := func(end, sum int) {
		if d := end - sum; d > veh.ShiftStart && d <= veh.ShiftEnd {
			cands = append(cands, d)
		}
	}
	// places: the time from departure, without waits or breaks, at which
	// the vehicle can take a break (at the start, at each stop before and
	// after its service)
	places := []int{0}
	t, from := 0, veh.Start
	for _, o := range seq {
		ord := &r.p.Orders[o]
		t += r.p.Duration[from][o+1]
		for _, w := range windows(ord) {
			for _, b := range brk {
				add(w.End, t+b)
			}
		}
		places = append(places, t, t+ord.ServiceS)
		t += ord.ServiceS
		from = o + 1
	}
	for i, b := range veh.Breaks {
		for _, at := range places {
			add(b.End, at+brk[i+1])
		}
	}
	if !veh.OpenEnd {
		t += r.p.Duration[from][veh.End]
	}
	for i, b := range veh.Breaks { // at the end location, after the leg
		add(b.End, t+brk[i+1])
	}
	add(veh.ShiftEnd, t+brk[len(brk)-1])
	slices.Sort(cands)
	cands = slices.Compact(cands)
	least := t + brk[len(brk)-1] // no route of seq is shorter
	best := -1
	for _, d := range cands {
		rt, ok := r.returnFrom(seq, d)
		if ok && (best < 0 || rt-d < ret-depart) {
			best, depart, ret = d, d, rt
			if ret-depart == least {
				break
			}
		}
	}
	return depart, ret, best >= 0
}

// least is the time seq's route takes without a second of waiting: the
// driving (to the end location too), the services and the breaks.
func (r *route) least(seq []int) int {
	t, from := 0, r.veh.Start
	for _, o := range seq {
		t += r.p.Duration[from][o+1] + r.p.Orders[o].ServiceS
		from = o + 1
	}
	if !r.veh.OpenEnd {
		t += r.p.Duration[from][r.veh.End]
	}
	for _, b := range r.veh.Breaks {
		t += b.Duration
	}
	return t
}

// build is the route of seq leaving at d, with every time and break.
func (r *route) build(seq []int, d int) vrp.Route {
	p, veh := r.p, r.veh
	lv := r.levels(seq, d)
	ret, li, split := r.finish(lv[len(lv)-1], r.lastLoc(seq))
	out := vrp.Route{Vehicle: r.v, Depart: d, Return: ret, Stops: make([]vrp.Stop, len(seq))}
	if len(p.Dimensions) > 0 {
		out.Loads = make([]float64, len(p.Dimensions))
	}
	// walk back from the last label, then lay the stops and breaks out in
	// driving order
	path := make([]label, len(seq)+1)
	for j := len(seq); j >= 0; j-- {
		path[j] = lv[j][li]
		li = path[j].parent
	}
	from := veh.Start
	for j, o := range seq {
		ord := &p.Orders[o]
		prev, cur := path[j], path[j+1]
		t := prev.t
		for k := prev.k; k < cur.kb; k++ {
			b := veh.Breaks[k]
			s := max(t, b.Start)
			out.Breaks = append(out.Breaks, vrp.PlannedBreak{Break: k, Start: s, End: s + b.Duration, AfterStop: j})
			t = s + b.Duration
		}
		t = cur.arrive
		for k := cur.kb; k < cur.k; k++ {
			b := veh.Breaks[k]
			s := max(t, b.Start)
			out.Breaks = append(out.Breaks, vrp.PlannedBreak{Break: k, Start: s, End: s + b.Duration, AfterStop: j})
			t = s + b.Duration
		}
		out.Stops[j] = vrp.Stop{
			Order: o, Arrival: cur.arrive, Start: cur.start, Depart: cur.t, Wait: cur.start - cur.arrive,
			LegDistance: p.Distance[from][o+1], LegTravel: p.Duration[from][o+1], Window: cur.window,
		}
		out.Distance += p.Distance[from][o+1]
		out.DriveS += p.Duration[from][o+1]
		out.Load += ord.Demand
		for i, x := range ord.Loads {
			out.Loads[i] += x
		}
		from = o + 1
	}
	t := path[len(seq)].t
	for k := path[len(seq)].k; k < len(veh.Breaks); k++ {
		if k == split && !veh.OpenEnd {
			t += p.Duration[from][veh.End] // the rest at the end location
		}
		b := veh.Breaks[k]
		s := max(t, b.Start)
		out.Breaks = append(out.Breaks, vrp.PlannedBreak{Break: k, Start: s, End: s + b.Duration, AfterStop: len(seq)})
		t = s + b.Duration
	}
	if !veh.OpenEnd {
		out.Distance += p.Distance[from][veh.End]
		out.DriveS += p.Duration[from][veh.End]
	}
	return out
}
