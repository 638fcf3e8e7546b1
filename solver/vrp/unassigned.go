package vrp

import "fmt"

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
		arrival := veh.ShiftStart + p.Duration[0][u+1]
		var msg string
		if lateMiss {
			msg = fmt.Sprintf("window %s cannot be reached: the earliest arrival is %s (vehicle %d leaving the depot at %s, %d min drive)",
				window(o), clock(arrival), bestV, clock(veh.ShiftStart), p.Duration[0][u+1]/60)
		} else {
			msg = fmt.Sprintf("cannot be served within any shift even alone: with service starting at %s (window %s) the earliest return to the depot is %s, after the shift end %s of vehicle %d",
				clock(start), window(o), clock(ret), clock(veh.ShiftEnd), bestV)
		}
		out[u] = &Unassigned{Order: u, Reason: ReasonWindowUnreachable, Message: msg}
	}
	return out
}

// leftover explains why order u, which some vehicle could serve alone, is
// not planned: no_capacity when every vehicle that could serve it in time
// has less remaining capacity (capacity minus planned load) than its demand,
// no_time otherwise.
func leftover(p *Problem, u int, loads []float64, enforceWindows bool) Unassigned {
	o := p.Orders[u]
	fitting, roomy := 0, -1
	bestRemaining, total := 0.0, 0.0
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
		if roomy < 0 && fitsCapacity(o.Demand, remaining) {
			roomy = v
		}
	}
	if roomy < 0 {
		return Unassigned{Order: u, Reason: ReasonNoCapacity, Message: fmt.Sprintf(
			"demand %s exceeds the remaining capacity of every vehicle that could serve it in time (largest remaining %s; %d such vehicles, %s remaining in total)",
			num(o.Demand), num(bestRemaining), fitting, num(total))}
	}
	return Unassigned{Order: u, Reason: ReasonNoTime, Message: fmt.Sprintf(
		"no route can fit it within its window %s (service %d min) and the shifts, although vehicle %d still has capacity %s for its demand %s",
		window(o), o.ServiceS/60, roomy, num(max(0, p.Vehicles[roomy].Capacity-loads[roomy])), num(o.Demand))}
}

// unassignedList builds the ordered Unassigned list for the orders not in
// routes, given the prechecked impossible orders and the planned loads.
func unassignedList(p *Problem, planned []bool, pre []*Unassigned, loads []float64, enforceWindows bool) []Unassigned {
	out := []Unassigned{}
	for u := range p.Orders {
		switch {
		case planned[u]:
		case pre[u] != nil:
			out = append(out, *pre[u])
		default:
			out = append(out, leftover(p, u, loads, enforceWindows))
		}
	}
	return out
}
