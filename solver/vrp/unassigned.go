package vrp

import (
	"fmt"
	"strconv"
	"strings"
)

// aloneReturn simulates depot -> u -> depot for vehicle v leaving at its
// shift start and returns the service start and the return time.
func aloneReturn(p *Problem, v, u int) (start, ret int) {
	veh, o := &p.Vehicles[v], &p.Orders[u]
	start = max(veh.ShiftStart+p.Duration[0][u+1], o.WindowStart)
	return start, start + o.ServiceS + p.Duration[u+1][0]
}

// aloneTimeOK reports whether vehicle v can serve u alone within its shift
// (and, when windows are enforced, within u's window). Leaving at the shift
// start is the best case: a later departure never arrives earlier.
func aloneTimeOK(p *Problem, v, u int, enforceWindows bool) bool {
	start, ret := aloneReturn(p, v, u)
	if enforceWindows && start > p.Orders[u].WindowEnd {
		return false
	}
	return ret <= p.Vehicles[v].ShiftEnd
}

// precheck finds the orders that no vehicle can serve even alone:
// too_large (demand above every capacity) and window_unreachable (no vehicle
// that can carry it can serve it within its window and shift). The result
// has one entry per order, nil for orders that can be served alone. With
// enforceWindows false (the baseline) only the shift counts.
func precheck(p *Problem, enforceWindows bool) []*Unassigned {
	if !plainFleet(p) {
		return precheckFleet(p, enforceWindows)
	}
	out := make([]*Unassigned, len(p.Orders))
	maxCap := 0.0
	for _, veh := range p.Vehicles {
		maxCap = max(maxCap, veh.Capacity)
	}
	for u, o := range p.Orders {
		if !fitsCapacity(o.Demand, maxCap) {
			out[u] = &Unassigned{Order: u, Reason: ReasonTooLarge,
				Message: fmt.Sprintf("demand %s exceeds the largest vehicle capacity %s", num(o.Demand), num(maxCap))}
			continue
		}
		// The vehicle that misses by the least, for the message.
		bestV, bestMiss, lateMiss := -1, 0, false
		for v, veh := range p.Vehicles {
			if !fitsCapacity(o.Demand, veh.Capacity) {
				continue
			}
			if aloneTimeOK(p, v, u, enforceWindows) {
				bestV = -2
				break
			}
			start, ret := aloneReturn(p, v, u)
			miss, late := ret-veh.ShiftEnd, false
			if enforceWindows && start > o.WindowEnd {
				miss, late = start-o.WindowEnd, true
			}
			if bestV == -1 || miss < bestMiss {
				bestV, bestMiss, lateMiss = v, miss, late
			}
		}
		if bestV == -2 {
			continue
		}
		veh := p.Vehicles[bestV]
		start, ret := aloneReturn(p, bestV, u)
		lead := "no vehicle that can carry it can serve it alone within its shift"
		if enforceWindows {
			lead = "no vehicle that can carry it can serve it alone within " + windowPhrase(o) + " and its shift"
		}
		var msg string
		if lateMiss {
			msg = fmt.Sprintf("%s: the closest, %s leaving the depot at its shift start %s (%d min drive), arrives at %s, after the window end %s",
				lead, p.vehicleName(bestV), clock(veh.ShiftStart), p.Duration[0][u+1]/60, clock(veh.ShiftStart+p.Duration[0][u+1]), clock(o.WindowEnd))
		} else {
			msg = fmt.Sprintf("%s: the closest, %s leaving the depot at %s and starting service at %s, is back at %s, after its shift end %s",
				lead, p.vehicleName(bestV), clock(veh.ShiftStart), clock(start), clock(ret), clock(veh.ShiftEnd))
		}
		out[u] = &Unassigned{Order: u, Reason: ReasonWindowUnreachable, Message: msg}
	}
	return out
}

// leftover explains why order u, which some vehicle could serve alone, is
// not planned, given the final routes seqs: no_capacity when every vehicle
// that could serve it in time lacks the room for its demand, no_time
// otherwise, with the times that did not fit on the vehicles with room.
func leftover(p *Problem, u int, seqs [][]int, loads []float64, enforceWindows bool) Unassigned {
	o := p.Orders[u]
	fitting := 0
	bestRemaining, total := 0.0, 0.0
	var roomy []int
	for v, veh := range p.Vehicles {
		if !aloneTimeOK(p, v, u, enforceWindows) {
			continue
		}
		fitting++
		remaining := max(0, veh.Capacity-loads[v])
		total += remaining
		if remaining > bestRemaining || fitting == 1 {
			bestRemaining = remaining
		}
		if fitsCapacity(loads[v]+o.Demand, veh.Capacity) {
			roomy = append(roomy, v)
		}
	}
	if len(roomy) == 0 {
		return Unassigned{Order: u, Reason: ReasonNoCapacity, Message: fmt.Sprintf(
			"demand %s exceeds the remaining capacity of every vehicle that could serve it in time (largest remaining %s; %d such vehicles, %s remaining in total)",
			num(o.Demand), num(bestRemaining), fitting, num(total))}
	}
	msg := noTimeInsert(p, u, seqs, roomy)
	if !enforceWindows {
		msg = noTimeAppend(p, u, seqs, roomy)
	}
	return Unassigned{Order: u, Reason: ReasonNoTime, Message: msg}
}

// noTimeAppend says, for the baseline, when each vehicle with room would be
// back at the depot with u appended to its route.
func noTimeAppend(p *Problem, u int, seqs [][]int, roomy []int) string {
	var parts []string
	for _, v := range roomy {
		r := Schedule(p, v, append(append([]int(nil), seqs[v]...), u))
		if r.Return <= p.Vehicles[v].ShiftEnd {
			// Only without the triangle inequality: it fits now but
			// did not when its turn came.
			return fmt.Sprintf("did not fit the route of %s within its shift when its turn in file order came", p.vehicleName(v))
		}
		parts = append(parts, fmt.Sprintf("%s would be back at %s, after its shift end %s", p.vehicleName(v), clock(r.Return), clock(p.Vehicles[v].ShiftEnd)))
	}
	return "appended to the route of each vehicle with room for its demand, it brings the vehicle back after its shift end: " + listShort(parts)
}

// noTimeInsert says, for the optimized plan, which times fail wherever u
// could be inserted into the routes of the vehicles with room.
func noTimeInsert(p *Problem, u int, seqs [][]int, roomy []int) string {
	o := p.Orders[u]
	minStart, minStartV := NoWindowEnd*4, -1
	// The on-time insertion that misses by the least.
	bestMiss, bestV, bestPos, bestKind, bestAt, bestLimit := -1, -1, 0, "", 0, 0
	seq := make([]int, 0, 16)
	for _, v := range roomy {
		veh := p.Vehicles[v]
		for i := 0; i <= len(seqs[v]); i++ {
			seq = append(append(append(seq[:0], seqs[v][:i]...), u), seqs[v][i:]...)
			r := Schedule(p, v, seq)
			st := r.Stops[i]
			if st.Start < minStart {
				minStart, minStartV = st.Start, v
			}
			if st.Late > 0 {
				continue
			}
			miss, kind, at, limit := r.Return-veh.ShiftEnd, "return", r.Return, veh.ShiftEnd
			for j, s := range r.Stops {
				if j != i && s.Late > miss {
					miss, kind, at, limit = s.Late, "stop", s.Start, p.Orders[s.Order].WindowEnd
				}
			}
			if miss <= 0 {
				return fmt.Sprintf("was left out by the search although it fits %s's route as stop %d", p.vehicleName(v), i+1)
			}
			if bestV < 0 || miss < bestMiss {
				bestMiss, bestV, bestPos, bestKind, bestAt, bestLimit = miss, v, i+1, kind, at, limit
			}
		}
	}
	who := vehicleList(p, roomy)
	if bestV < 0 {
		return fmt.Sprintf("on the vehicles with room for its demand (%s) the earliest service start is %s, on %s, after the end of %s",
			who, clock(minStart), p.vehicleName(minStartV), windowPhrase(o))
	}
	what := fmt.Sprintf("%s would be back at %s, after its shift end %s", p.vehicleName(bestV), clock(bestAt), clock(bestLimit))
	if bestKind == "stop" {
		what = fmt.Sprintf("a later stop of %s would start at %s, after its window end %s", p.vehicleName(bestV), clock(bestAt), clock(bestLimit))
	}
	where := "wherever it could start within " + windowPhrase(o)
	if o.WindowStart <= 0 && o.WindowEnd >= NoWindowEnd {
		where = "wherever it could be inserted"
	}
	return fmt.Sprintf("on the vehicles with room for its demand (%s), %s, another stop would be late or the vehicle back after its shift end; the closest, as stop %d: %s",
		who, where, bestPos, what)
}

// vehicleList names vehicles for a message, at most three and a count.
func vehicleList(p *Problem, vs []int) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = p.vehicleName(v)
	}
	return listShort(names)
}

// listShort joins the first three items and counts the rest.
func listShort(items []string) string {
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:3], ", ") + " and " + strconv.Itoa(len(items)-3) + " more"
}

// unassignedList builds the ordered Unassigned list for the orders not in
// routes, given the prechecked impossible orders and the final route of
// each vehicle.
func unassignedList(p *Problem, planned []bool, pre []*Unassigned, seqs [][]int, enforceWindows bool) []Unassigned {
	loads := make([]float64, len(p.Vehicles))
	for v, seq := range seqs {
		for _, u := range seq {
			loads[v] += p.Orders[u].Demand
		}
	}
	out := []Unassigned{}
	plain := plainFleet(p)
	t := &timer{p: p}
	for u := range p.Orders {
		switch {
		case planned[u]:
		case pre[u] != nil:
			out = append(out, *pre[u])
		case !plain:
			out = append(out, t.leftoverFleet(u, seqs, enforceWindows))
		default:
			out = append(out, leftover(p, u, seqs, loads, enforceWindows))
		}
	}
	return out
}
