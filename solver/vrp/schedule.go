package vrp

// Schedule computes the stop times of a route for vehicle v visiting orders
// in the given sequence. It is THE one function both strategies use to
// produce Route values.
//
// The route departs as late as possible (never before ShiftStart) without
// returning later than a departure at ShiftStart would and without making a
// stop late that is on time with a departure at ShiftStart: the avoidable
// waiting is removed (Savelsbergh's forward time slack). Stops that would be
// late anyway (baseline only) are not made later. Schedule does not check the
// shift end, windows or capacity: Late, Return and Load tell.
//
// For an empty sequence it returns a Route without stops and
// Depart = Return = ShiftStart.
func Schedule(p *Problem, v int, orders []int) Route {
	if !p.plainRoute(v, orders) {
		t := timer{p: p}
		var r Route
		t.schedule(v, orders, &r, false)
		return r
	}
	veh := p.Vehicles[v]
	r := Route{Vehicle: v, Depart: veh.ShiftStart, Return: veh.ShiftStart}
	if len(orders) == 0 {
		return r
	}

	// Forward pass from ShiftStart: total waiting and the forward time slack
	// of the departure. Delaying the departure by d delays the start of stop
	// i by max(0, d - wait_1 - ... - wait_i), so stop i stays on time while
	// d <= cumWait_i + (WindowEnd_i - Start_i), and the return is unchanged
	// while d <= total waiting.
	t, prev := veh.ShiftStart, 0
	cumWait, slack := 0, NoWindowEnd*4
	for _, o := range orders {
		loc := o + 1
		ord := &p.Orders[o]
		arr := t + p.Duration[prev][loc]
		start := max(arr, ord.WindowStart)
		cumWait += start - arr
		slack = min(slack, cumWait+max(0, ord.WindowEnd-start))
		t = start + ord.ServiceS
		prev = loc
	}
	delay := min(cumWait, slack)

	r.Depart = veh.ShiftStart + delay
	r.Stops = make([]Stop, len(orders))
	t, prev = r.Depart, 0
	for i, o := range orders {
		loc := o + 1
		ord := &p.Orders[o]
		s := &r.Stops[i]
		s.Order = o
		s.LegDistance = p.Distance[prev][loc]
		s.LegTravel = p.Duration[prev][loc]
		s.Arrival = t + s.LegTravel
		s.Start = max(s.Arrival, ord.WindowStart)
		s.Wait = s.Start - s.Arrival
		s.Depart = s.Start + ord.ServiceS
		s.Late = max(0, s.Start-ord.WindowEnd)
		r.Distance += s.LegDistance
		r.DriveS += s.LegTravel
		r.Load += ord.Demand
		t = s.Depart
		prev = loc
	}
	r.Return = t + p.Duration[prev][0]
	r.Distance += p.Distance[prev][0]
	r.DriveS += p.Duration[prev][0]
	return r
}

// routeObjective is the objective value of a scheduled route, without the
// vehicle's fixed cost: metres, or seconds from departure to return.
func routeObjective(p *Problem, r *Route) float64 {
	if len(r.Stops) == 0 {
		return 0
	}
	if p.Objective == ObjectiveDuration {
		return float64(r.Return - r.Depart)
	}
	return float64(r.Distance)
}

// routeCost is routeObjective plus the fixed cost of the vehicle when the
// route has stops.
func routeCost(p *Problem, r *Route) float64 {
	if len(r.Stops) == 0 {
		return 0
	}
	return routeObjective(p, r) + p.Vehicles[r.Vehicle].FixedCost
}

// routeFeasible reports whether a scheduled route keeps every window, the
// shift, the capacity in every dimension, the skills, the breaks' windows
// and the route limits.
func routeFeasible(p *Problem, r *Route) bool {
	veh := &p.Vehicles[r.Vehicle]
	if r.Depart < veh.ShiftStart || r.Return > veh.ShiftEnd || !fitsCapacity(r.Load, veh.Capacity) {
		return false
	}
	for _, s := range r.Stops {
		if s.Late > 0 || !hasSkills(veh, &p.Orders[s.Order]) {
			return false
		}
	}
	for d, l := range r.Loads {
		if !fitsCapacity(l, veh.Capacities[d]) {
			return false
		}
	}
	for _, b := range r.Breaks {
		if br := &veh.Breaks[b.Break]; b.Start < br.Start || b.End > br.End {
			return false
		}
	}
	return withinLimits(veh, r)
}

// withinLimits reports whether r keeps vehicle veh's route limits.
func withinLimits(veh *Vehicle, r *Route) bool {
	return (veh.MaxDuration == 0 || r.Return-r.Depart <= veh.MaxDuration) &&
		(veh.MaxDistance == 0 || r.Distance <= veh.MaxDistance) &&
		(veh.MaxStops == 0 || len(r.Stops) <= veh.MaxStops)
}

// plainRoute reports whether vehicle v's route through orders needs
// nothing beyond one window per order and the depot, which Schedule's
// forward pass times.
func (p *Problem) plainRoute(v int, orders []int) bool {
	veh := &p.Vehicles[v]
	if len(veh.Breaks) > 0 || veh.Start != 0 || veh.End != 0 || veh.OpenEnd || len(p.Dimensions) > 0 {
		return false
	}
	for _, o := range orders {
		if len(p.Orders[o].Windows) >= 2 {
			return false
		}
	}
	return true
}
