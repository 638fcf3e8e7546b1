package vrp

import (
	"fmt"
	"slices"
	"strings"
)

// Reasons for the orders of a real fleet that are not planned: the same
// reasons as for a plain problem (unassigned.go), found with the exact
// timing, plus skills_missing and route_limit.

// plainFleet reports whether p needs none of this file: everything
// problemIsPlain asks, and every route from the depot back to it.
func plainFleet(p *Problem) bool {
	if !problemIsPlain(p) {
		return false
	}
	for i := range p.Vehicles {
		if v := &p.Vehicles[i]; v.Start != 0 || v.End != 0 || v.OpenEnd {
			return false
		}
	}
	return true
}

// trial is vehicle v serving a sequence, timed exactly, with what it
// breaks.
type trial struct {
	r Route
	// late: seconds the stops start after their windows (counted only
	// when windows are enforced) and the breaks after their latest start;
	// over: seconds back after the shift end
	late, over int
	limit      string // the first route limit broken, "" for none
}

func (x *trial) onTime() bool { return x.late == 0 && x.over == 0 }

// try times vehicle v through seq: as the search would (the best breaks,
// the first window open) when enforceWindows, else as the baseline does.
func (t *timer) try(v int, seq []int, enforceWindows bool) trial {
	p := t.p
	var x trial
	if enforceWindows {
		t.schedule(v, seq, &x.r, false)
	} else {
		t.baselinePlan(v, seq)
		t.leaveLate(v, seq, &x.r, false)
	}
	veh := &p.Vehicles[v]
	if enforceWindows {
		for _, s := range x.r.Stops {
			x.late += s.Late
		}
	}
	for _, b := range x.r.Breaks {
		br := &veh.Breaks[b.Break]
		x.late += max(0, b.Start-(br.End-br.Duration))
	}
	x.over = max(0, x.r.Return-veh.ShiftEnd)
	switch {
	case veh.MaxStops > 0 && len(seq) > veh.MaxStops:
		x.limit = fmt.Sprintf("its limit of %d stops", veh.MaxStops)
	case veh.MaxDuration > 0 && x.r.Return-x.r.Depart > veh.MaxDuration:
		x.limit = fmt.Sprintf("its limit of %s on the road (%s needed)", hours(veh.MaxDuration), hours(x.r.Return-x.r.Depart))
	case veh.MaxDistance > 0 && x.r.Distance > veh.MaxDistance:
		x.limit = fmt.Sprintf("its limit of %s (%s needed)", km(veh.MaxDistance), km(x.r.Distance))
	}
	return x
}

// hours writes seconds as "8 h 05 min".
func hours(s int) string { return fmt.Sprintf("%d h %02d min", s/3600, s%3600/60) }

// km writes metres as kilometres with one decimal.
func km(m int) string { return fmt.Sprintf("%.1f km", float64(m)/1000) }

// missingSkills lists the skills of o that veh lacks.
func missingSkills(veh *Vehicle, o *Order) []string {
	var out []string
	for _, sk := range o.Skills {
		if !slices.Contains(veh.Skills, sk) {
			out = append(out, sk)
		}
	}
	return out
}

// carries reports whether vehicle v can carry order u alone in every
// dimension, and names the first dimension where it cannot.
func (p *Problem) carries(v, u int) (bool, string) {
	veh, o := &p.Vehicles[v], &p.Orders[u]
	if !fitsCapacity(o.Demand, veh.Capacity) {
		return false, fmt.Sprintf("demand %s above its capacity %s", num(o.Demand), num(veh.Capacity))
	}
	for d, l := range o.Loads {
		if !fitsCapacity(l, veh.Capacities[d]) {
			return false, fmt.Sprintf("%s %s above its capacity %s", p.Dimensions[d], num(l), num(veh.Capacities[d]))
		}
	}
	return true, ""
}

// precheckFleet is precheck for a real fleet.
func precheckFleet(p *Problem, enforceWindows bool) []*Unassigned {
	out := make([]*Unassigned, len(p.Orders))
	t := &timer{p: p}
	for u := range p.Orders {
		out[u] = t.aloneFleet(u, enforceWindows)
	}
	return out
}

// aloneFleet is nil when some vehicle can serve order u alone, else why
// none can: skills_missing, too_large, or window_unreachable.
func (t *timer) aloneFleet(u int, enforceWindows bool) *Unassigned {
	p := t.p
	o := &p.Orders[u]
	var skilled []int
	fewest, fewestV := len(o.Skills)+1, -1
	for v := range p.Vehicles {
		miss := missingSkills(&p.Vehicles[v], o)
		if len(miss) == 0 {
			skilled = append(skilled, v)
		} else if len(miss) < fewest {
			fewest, fewestV = len(miss), v
		}
	}
	if len(skilled) == 0 {
		return &Unassigned{Order: u, Reason: ReasonSkillsMissing, Message: fmt.Sprintf(
			"no vehicle has every skill it needs (%s); the closest, %s, lacks %s",
			strings.Join(o.Skills, ", "), p.vehicleName(fewestV), strings.Join(missingSkills(&p.Vehicles[fewestV], o), ", "))}
	}
	var carriers []int
	why := ""
	for _, v := range skilled {
		if ok, w := p.carries(v, u); ok {
			carriers = append(carriers, v)
		} else if why == "" {
			why = p.vehicleName(v) + ": " + w
		}
	}
	if len(carriers) == 0 {
		return &Unassigned{Order: u, Reason: ReasonTooLarge, Message: fmt.Sprintf(
			"no vehicle with its skills can carry it (%s)", why)}
	}
	best, bestV := trial{}, -1
	for _, v := range carriers {
		x := t.try(v, []int{u}, enforceWindows)
		if x.onTime() && x.limit == "" {
			return nil
		}
		if bestV < 0 || x.late+x.over < best.late+best.over {
			best, bestV = x, v
		}
	}
	what := "within " + windowPhrase(*o) + ", its shift, its breaks and its route limits"
	if !enforceWindows {
		what = "within its shift, its breaks and its route limits"
	}
	veh := &p.Vehicles[bestV]
	var detail string
	switch s := best.r.Stops[0]; {
	case best.late > 0 && s.Late > 0:
		detail = fmt.Sprintf("starts service at %s, after its window closes", clock(s.Start))
	case best.late > 0:
		detail = "cannot take its breaks in their windows"
	case best.over > 0:
		detail = fmt.Sprintf("is back at %s, after its shift end %s", clock(best.r.Return), clock(veh.ShiftEnd))
	default:
		detail = "breaks " + best.limit
	}
	return &Unassigned{Order: u, Reason: ReasonWindowUnreachable, Message: fmt.Sprintf(
		"no vehicle that can carry it can serve it alone %s: the closest, %s, %s", what, p.vehicleName(bestV), detail)}
}

// leftoverFleet is leftover for a real fleet: no_capacity when no vehicle
// that could serve it alone has room in every dimension; route_limit when
// every one with room is at a route limit; no_time otherwise.
func (t *timer) leftoverFleet(u int, seqs [][]int, enforceWindows bool) Unassigned {
	p := t.p
	o := &p.Orders[u]
	var roomy []int
	tight := ""
	for v := range p.Vehicles {
		if !hasSkills(&p.Vehicles[v], o) {
			continue
		}
		if ok, _ := p.carries(v, u); !ok {
			continue
		}
		if x := t.try(v, []int{u}, enforceWindows); !x.onTime() || x.limit != "" {
			continue
		}
		if dim := p.roomFor(v, u, seqs[v]); dim != "" {
			if tight == "" {
				tight = dim
			}
			continue
		}
		roomy = append(roomy, v)
	}
	if len(roomy) == 0 {
		return Unassigned{Order: u, Reason: ReasonNoCapacity, Message: fmt.Sprintf(
			"every vehicle that could serve it in time lacks the room for it (%s)", tight)}
	}
	var limits []string
	for _, v := range roomy {
		lim := t.atLimit(v, u, seqs[v], enforceWindows)
		if lim == "" {
			if enforceWindows {
				return Unassigned{Order: u, Reason: ReasonNoTime, Message: noTimeInsert(p, u, seqs, roomy)}
			}
			return Unassigned{Order: u, Reason: ReasonNoTime, Message: noTimeAppend(p, u, seqs, roomy)}
		}
		limits = append(limits, p.vehicleName(v)+" at "+lim)
	}
	return Unassigned{Order: u, Reason: ReasonRouteLimit, Message: "every vehicle with room for it is at a route limit: " + listShort(limits)}
}

// roomFor is "" when vehicle v's route through seq has room for order u
// in every dimension, else what lacks room.
func (p *Problem) roomFor(v, u int, seq []int) string {
	veh, o := &p.Vehicles[v], &p.Orders[u]
	load := o.Demand
	for _, w := range seq {
		load += p.Orders[w].Demand
	}
	if !fitsCapacity(load, veh.Capacity) {
		return fmt.Sprintf("%s: demand %s above the remaining capacity %s", p.vehicleName(v), num(o.Demand), num(max(0, veh.Capacity-load+o.Demand)))
	}
	for d := range p.Dimensions {
		l := 0.0
		if o.Loads != nil {
			l = o.Loads[d]
		}
		total := l
		for _, w := range seq {
			if p.Orders[w].Loads != nil {
				total += p.Orders[w].Loads[d]
			}
		}
		if !fitsCapacity(total, veh.Capacities[d]) {
			return fmt.Sprintf("%s: %s %s above the remaining %s", p.vehicleName(v), p.Dimensions[d], num(l), num(max(0, veh.Capacities[d]-total+l)))
		}
	}
	return ""
}

// atLimit is the route limit that keeps order u out of vehicle v's route
// through seq (inserted anywhere, or appended for the baseline) although
// some place keeps the windows, shift and breaks; "" when there is none.
func (t *timer) atLimit(v, u int, seq []int, enforceWindows bool) string {
	veh := &t.p.Vehicles[v]
	if veh.MaxStops > 0 && len(seq) >= veh.MaxStops {
		return fmt.Sprintf("its limit of %d stops", veh.MaxStops)
	}
	lo := 0
	if !enforceWindows {
		lo = len(seq)
	}
	buf := make([]int, 0, len(seq)+1)
	limit := ""
	for q := lo; q <= len(seq); q++ {
		buf = append(append(append(buf[:0], seq[:q]...), u), seq[q:]...)
		x := t.try(v, buf, enforceWindows)
		if !x.onTime() {
			continue
		}
		if x.limit == "" {
			return "" // it fits: not a limit
		}
		limit = x.limit
	}
	return limit
}
