package vrp

// Baseline is the plan of the baseline strategy, the one a dispatcher
// would make by hand (docs/API.md, "OptionsIn"): orders in file order, each
// appended to the first vehicle, in vehicle order, whose skills, capacity
// in every dimension, shift, breaks and route limits it still fits. Breaks
// are taken at the first stop after they may start (see baselinePlan);
// with several windows the vehicle waits for the first one not yet
// closed. Every vehicle stays open to later orders, so an order that
// fits none (a late-evening one, say) does not retire the vehicles before
// it. Time windows are not enforced (stops may be late; Late reports
// it, the vehicle still waits for a window to open). Orders that fit no
// vehicle at all get the same reasons as in Solve (too_large;
// window_unreachable when no vehicle can serve them within its shift even
// alone); the others get no_capacity or no_time against the final routes.
func Baseline(p *Problem) (*Solution, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pre := precheck(p, false)
	m := len(p.Vehicles)
	seqs := make([][]int, m)
	loads := make([]float64, m)
	planned := make([]bool, len(p.Orders))
	plain := plainFleet(p)
	t := &timer{p: p}
	fits := func(v, u int) bool {
		if !fitsCapacity(loads[v]+p.Orders[u].Demand, p.Vehicles[v].Capacity) {
			return false
		}
		if !plain {
			if !hasSkills(&p.Vehicles[v], &p.Orders[u]) || p.roomFor(v, u, seqs[v]) != "" {
				return false
			}
			x := t.try(v, append(seqs[v], u), false)
			return x.onTime() && x.limit == ""
		}
		r := Schedule(p, v, append(seqs[v], u))
		return r.Return <= p.Vehicles[v].ShiftEnd
	}
	for u := range p.Orders {
		if pre[u] != nil {
			continue
		}
		for v := range m {
			if fits(v, u) {
				seqs[v] = append(seqs[v], u)
				loads[v] += p.Orders[u].Demand
				planned[u] = true
				break
			}
		}
	}
	sol := &Solution{Routes: []Route{}}
	for v, seq := range seqs {
		if len(seq) == 0 {
			continue
		}
		var r Route
		if plain {
			r = Schedule(p, v, seq)
		} else {
			r = t.try(v, seq, false).r
		}
		sol.Cost += routeCost(p, &r)
		sol.Routes = append(sol.Routes, r)
	}
	sol.Unassigned = unassignedList(p, planned, pre, seqs, false)
	return sol, nil
}
