package vrp

// Baseline keeps file order: orders go to the first vehicle, in order, until
// its capacity or shift would be exceeded, then to the next vehicle; time
// windows are not enforced (stops may be late; Late reports it, the vehicle
// still waits for a window to open). Orders that fit no vehicle at all get
// the same reasons as in Solve (too_large; window_unreachable when no
// vehicle can serve them within its shift even alone); orders left when the
// fleet is exhausted get no_capacity or no_time.
func Baseline(p *Problem) (*Solution, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pre := precheck(p, false)
	m := len(p.Vehicles)
	seqs := make([][]int, m)
	loads := make([]float64, m)
	planned := make([]bool, len(p.Orders))
	fits := func(v, u int) bool {
		if !fitsCapacity(loads[v]+p.Orders[u].Demand, p.Vehicles[v].Capacity) {
			return false
		}
		r := Schedule(p, v, append(seqs[v], u))
		return r.Return <= p.Vehicles[v].ShiftEnd
	}
	k := 0
	for u := range p.Orders {
		if pre[u] != nil {
			continue
		}
		for k < m && !fits(k, u) {
			k++
		}
		if k == m {
			continue
		}
		seqs[k] = append(seqs[k], u)
		loads[k] += p.Orders[u].Demand
		planned[u] = true
	}
	sol := &Solution{Routes: []Route{}}
	for v, seq := range seqs {
		if len(seq) == 0 {
			continue
		}
		r := Schedule(p, v, seq)
		sol.Cost += routeCost(p, &r)
		sol.Routes = append(sol.Routes, r)
	}
	sol.Unassigned = unassignedList(p, planned, pre, loads, false)
	return sol, nil
}
