package bench

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"routeopt.io/routeopt/solver/vrp"
)

// CheckOptions loosen CheckSolution for plans that are allowed to break a
// rule on purpose.
type CheckOptions struct {
	// AllowLate accepts a service that starts after the end of its window
	// (the baseline's plans), when Stop.Late says by how much. Everything
	// else is checked as for the solver's plans.
	AllowLate bool
}

// Report is what CheckSolution recomputes from a plan it accepts.
type Report struct {
	Routes   int
	Served   int     // orders on a route
	Priority int     // total Priority of the served orders
	Distance int     // metres, every leg including those to the end locations
	Duration int     // seconds, the sum of Return - Depart over the routes
	Cost     float64 // objective value plus the fixed costs of the used vehicles
	Late     int     // stops whose service starts after their window (AllowLate only)
}

// maxViolations caps the list CheckSolution returns: past it the first
// fault has usually explained the others.
const maxViolations = 20

// reasons are the Unassigned reasons a plan may give.
var reasons = []vrp.Reason{
	vrp.ReasonTooLarge, vrp.ReasonWindowUnreachable, vrp.ReasonNoCapacity,
	vrp.ReasonNoTime, vrp.ReasonSkillsMissing, vrp.ReasonRouteLimit,
}

// CheckSolution verifies a plan against its problem with code of its own:
// it shares nothing with the solver but the types, so a bug in the
// solver's evaluation cannot hide itself. From the problem and the times
// the plan reports it re-derives every rule of the model: each order
// served at most once and every other one listed once as unassigned; legs
// equal to the matrices from the vehicle's start to its end (none back for
// an open route); arrivals, waits, service starts inside the window served
// and departures; breaks planned in full, in order, inside their windows,
// each at a place where the vehicle stands (before a leg or while waiting
// at a stop) and overlapping nothing; shifts; skills; capacity and every
// load dimension; the route limits; and the route totals and the cost. It
// returns every violation it finds (up to a cap), each naming the route
// and stop, joined in one error; the Report holds the recomputed figures.
func CheckSolution(p *vrp.Problem, sol *vrp.Solution, opt CheckOptions) (Report, error) {
	var rep Report
	if p == nil || sol == nil {
		return rep, errors.New("no problem or no plan to check")
	}
	if err := checkShape(p); err != nil {
		return rep, err
	}
	c := &checker{p: p, opt: opt, rep: &rep}
	served := make([]bool, len(p.Orders))
	lastVehicle := -1
	for ri := range sol.Routes {
		r := &sol.Routes[ri]
		if r.Vehicle < 0 || r.Vehicle >= len(p.Vehicles) {
			c.addf("route %d: vehicle %d does not exist", ri, r.Vehicle)
			continue
		}
		if r.Vehicle <= lastVehicle {
			c.addf("route %d: vehicle %d comes after vehicle %d: routes go by vehicle index, one per vehicle", ri, r.Vehicle, lastVehicle)
		}
		lastVehicle = max(lastVehicle, r.Vehicle)
		c.route(ri, r, served)
	}
	c.unassigned(sol.Unassigned, served)
	for o, ok := range served {
		if ok {
			rep.Served++
			rep.Priority += p.Orders[o].Priority
		}
	}
	if !approxEqual(rep.Cost, sol.Cost, 1e-6) {
		c.addf("the plan's cost %v differs from the recomputed %v", sol.Cost, rep.Cost)
	}
	return rep, c.err()
}

// checker collects the violations of one plan.
type checker struct {
	p    *vrp.Problem
	opt  CheckOptions
	rep  *Report
	errs []error
	more int
}

func (c *checker) addf(format string, args ...any) {
	if len(c.errs) == maxViolations {
		c.more++
		return
	}
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	if c.more > 0 {
		c.errs = append(c.errs, fmt.Errorf("and %d more", c.more))
	}
	return errors.Join(c.errs...)
}

// checkShape refuses a problem whose indices the checker would follow out
// of range; the rest of Validate's rules are the solver's business.
func checkShape(p *vrp.Problem) error {
	size := len(p.Orders) + 1 + p.ExtraLocations
	if p.ExtraLocations < 0 || len(p.Distance) != size || len(p.Duration) != size {
		return fmt.Errorf("the matrices are not %d square (depot, %d orders, %d extra locations)", size, len(p.Orders), p.ExtraLocations)
	}
	for i := range size {
		if len(p.Distance[i]) != size || len(p.Duration[i]) != size {
			return fmt.Errorf("matrix row %d is not %d long", i, size)
		}
	}
	for v, veh := range p.Vehicles {
		if veh.Start < 0 || veh.Start >= size || veh.End < 0 || veh.End >= size || len(veh.Capacities) != len(p.Dimensions) {
			return fmt.Errorf("vehicle %d: start %d, end %d or %d capacities do not fit the problem", v, veh.Start, veh.End, len(veh.Capacities))
		}
	}
	for o, ord := range p.Orders {
		if ord.Loads != nil && len(ord.Loads) != len(p.Dimensions) {
			return fmt.Errorf("order %d: %d loads for %d dimensions", o, len(ord.Loads), len(p.Dimensions))
		}
	}
	return nil
}

// windows are the windows an order's service may start in.
func windows(o vrp.Order) []vrp.Window {
	if len(o.Windows) >= 2 {
		return o.Windows
	}
	return []vrp.Window{{Start: o.WindowStart, End: o.WindowEnd}}
}

// gap is where a vehicle stands between two services: at place from
// (the start location or the previous stop) from free on, then driving
// the leg that ends at arrive, then waiting at the stop until start.
type gap struct {
	free, leaveBy, arrive, start int
}

// holds reports whether a break [s, e] lies where the vehicle stands in
// the gap: before the leg at the place it leaves, or at the stop before
// the service.
func (g gap) holds(s, e int) bool {
	return (s >= g.free && e <= g.leaveBy) || (s >= g.arrive && e <= g.start)
}

// legFits reports whether the leg of travel seconds to the end location
// fits in the gap after the last stop (free from last): after the breaks
// taken at the last stop and before those taken at the end location and
// Return, for some split of the route's trailing breaks (in time order)
// between the two places.
func legFits(r *vrp.Route, last, travel int) bool {
	var trail []vrp.PlannedBreak
	for _, b := range r.Breaks {
		if b.AfterStop == len(r.Stops) {
			trail = append(trail, b)
		}
	}
	for i := 0; i <= len(trail); i++ {
		leave := last
		if i > 0 {
			leave = max(leave, trail[i-1].End)
		}
		by := r.Return
		if i < len(trail) {
			by = trail[i].Start
		}
		if leave+travel <= by {
			return true
		}
	}
	return false
}

// route checks one route and adds its figures to the report.
func (c *checker) route(ri int, r *vrp.Route, served []bool) {
	p, rep := c.p, c.rep
	veh := p.Vehicles[r.Vehicle]
	name := fmt.Sprintf("route %d (vehicle %d)", ri, r.Vehicle)
	if len(r.Stops) == 0 {
		c.addf("%s has no stops: an unused vehicle has no route", name)
		return
	}
	if veh.MaxStops > 0 && len(r.Stops) > veh.MaxStops {
		c.addf("%s: %d stops, above its limit of %d", name, len(r.Stops), veh.MaxStops)
	}
	if r.Depart < veh.ShiftStart {
		c.addf("%s departs at %d, before its shift starts at %d", name, r.Depart, veh.ShiftStart)
	}
	gaps := make([]gap, 0, len(r.Stops)+1)
	prevLoc, free := veh.Start, r.Depart
	dist, drive := 0, 0
	load := 0.0
	loads := make([]float64, len(p.Dimensions))
	for si, st := range r.Stops {
		at := fmt.Sprintf("%s stop %d", name, si)
		if st.Order < 0 || st.Order >= len(p.Orders) {
			c.addf("%s: order %d does not exist", at, st.Order)
			return
		}
		at = fmt.Sprintf("%s (order %d)", at, st.Order)
		if served[st.Order] {
			c.addf("%s: the order is served twice", at)
		}
		served[st.Order] = true
		ord := p.Orders[st.Order]
		loc := st.Order + 1
		if st.LegTravel != p.Duration[prevLoc][loc] || st.LegDistance != p.Distance[prevLoc][loc] {
			c.addf("%s: leg of %d s and %d m, but the matrices say %d s and %d m from location %d", at, st.LegTravel, st.LegDistance, p.Duration[prevLoc][loc], p.Distance[prevLoc][loc], prevLoc)
		}
		travel := p.Duration[prevLoc][loc]
		if st.Arrival < free+travel {
			c.addf("%s: arrives at %d, before %d (leaving at %d and driving %d s)", at, st.Arrival, free+travel, free, travel)
		}
		if st.Start < st.Arrival {
			c.addf("%s: service starts at %d, before the arrival at %d", at, st.Start, st.Arrival)
		}
		c.window(at, ord, st)
		if st.Depart != st.Start+ord.ServiceS {
			c.addf("%s: departs at %d, want start %d + service %d s", at, st.Depart, st.Start, ord.ServiceS)
		}
		if st.Wait != st.Start-st.Arrival {
			c.addf("%s: wait %d s, want start %d - arrival %d", at, st.Wait, st.Start, st.Arrival)
		}
		for _, s := range ord.Skills {
			if !slices.Contains(veh.Skills, s) {
				c.addf("%s: the order needs skill %q, which the vehicle lacks", at, s)
			}
		}
		gaps = append(gaps, gap{free: free, leaveBy: st.Arrival - travel, arrive: st.Arrival, start: st.Start})
		dist += p.Distance[prevLoc][loc]
		drive += travel
		load += ord.Demand
		for d := range loads {
			if ord.Loads != nil {
				loads[d] += ord.Loads[d]
			}
		}
		prevLoc, free = loc, st.Depart
	}
	last := free
	endTravel, endDist := 0, 0
	if !veh.OpenEnd {
		endTravel, endDist = p.Duration[prevLoc][veh.End], p.Distance[prevLoc][veh.End]
	}
	// After the last stop the vehicle stands there until it leaves for the
	// end location (or until Return, on an open route), then at the end
	// location until Return. The arrival there is not reported: a break
	// may lie before the leg if it ends in time to drive back by Return,
	// or after it if it starts no earlier than the earliest arrival; that
	// the leg fits between the two kinds is checked below.
	gaps = append(gaps, gap{free: last, leaveBy: r.Return - endTravel, arrive: last + endTravel, start: r.Return})
	if veh.OpenEnd {
		gaps[len(gaps)-1].arrive = r.Return
	}
	dist += endDist
	drive += endTravel
	trailing := c.breaks(name, veh, r, gaps)
	if veh.OpenEnd {
		if want := max(last, trailing); r.Return != want {
			c.addf("%s is open: returns at %d, want the end of its last service or trailing break, %d", name, r.Return, want)
		}
	} else if !legFits(r, last, endTravel) {
		c.addf("%s returns at %d: leaving the last stop at %d, the %d s leg to location %d does not fit between its breaks there and at the end", name, r.Return, last, endTravel, veh.End)
	}
	if r.Return > veh.ShiftEnd {
		c.addf("%s returns at %d, after its shift ends at %d", name, r.Return, veh.ShiftEnd)
	}
	duration := r.Return - r.Depart
	if veh.MaxDuration > 0 && duration > veh.MaxDuration {
		c.addf("%s lasts %d s, above its limit of %d s", name, duration, veh.MaxDuration)
	}
	if veh.MaxDistance > 0 && dist > veh.MaxDistance {
		c.addf("%s drives %d m, above its limit of %d m", name, dist, veh.MaxDistance)
	}
	if r.Distance != dist || r.DriveS != drive {
		c.addf("%s reports %d m and %d s of driving, the legs add up to %d m and %d s", name, r.Distance, r.DriveS, dist, drive)
	}
	if !approxEqual(r.Load, load, 1e-9) {
		c.addf("%s reports a load of %v, the demands add up to %v", name, r.Load, load)
	}
	if !fits(load, veh.Capacity) {
		c.addf("%s carries %v, above its capacity %v", name, load, veh.Capacity)
	}
	if len(r.Loads) != len(loads) {
		c.addf("%s reports %d loads for %d dimensions", name, len(r.Loads), len(loads))
	}
	for d, x := range loads {
		if d < len(r.Loads) && !approxEqual(r.Loads[d], x, 1e-9) {
			c.addf("%s reports %v of %s, the orders add up to %v", name, r.Loads[d], p.Dimensions[d], x)
		}
		if !fits(x, veh.Capacities[d]) {
			c.addf("%s carries %v of %s, above its capacity %v", name, x, p.Dimensions[d], veh.Capacities[d])
		}
	}
	obj := float64(dist)
	if p.Objective == vrp.ObjectiveDuration {
		obj = float64(duration)
	}
	rep.Routes++
	rep.Distance += dist
	rep.Duration += duration
	rep.Cost += obj + veh.FixedCost
}

// window checks a stop's service start against the window it names.
func (c *checker) window(at string, ord vrp.Order, st vrp.Stop) {
	ws := windows(ord)
	if st.Window < 0 || st.Window >= len(ws) {
		c.addf("%s: window %d does not exist (the order has %d)", at, st.Window, len(ws))
		return
	}
	w := ws[st.Window]
	if st.Start < w.Start {
		c.addf("%s: service starts at %d, before its window %d opens at %d", at, st.Start, st.Window, w.Start)
	}
	late := max(0, st.Start-w.End)
	if late > 0 {
		c.rep.Late++
	}
	switch {
	case late > 0 && !c.opt.AllowLate:
		c.addf("%s: service starts at %d, after its window %d closes at %d", at, st.Start, st.Window, w.End)
	case st.Late != late:
		c.addf("%s: late %d s, want %d", at, st.Late, late)
	}
}

// breaks checks the planned breaks of a route against the vehicle's and
// the gaps the route leaves, and returns the end of the last break taken
// after the last stop (0 when none).
func (c *checker) breaks(name string, veh vrp.Vehicle, r *vrp.Route, gaps []gap) int {
	if len(r.Breaks) != len(veh.Breaks) {
		c.addf("%s plans %d breaks, the vehicle must take %d", name, len(r.Breaks), len(veh.Breaks))
	}
	trailing, prevEnd := 0, math.MinInt
	for i, pb := range r.Breaks {
		at := fmt.Sprintf("%s break %d", name, i)
		if pb.Break != i || i >= len(veh.Breaks) {
			c.addf("%s is the vehicle's break %d: breaks are planned in the vehicle's order, each once", at, pb.Break)
			continue
		}
		b := veh.Breaks[i]
		if pb.End-pb.Start != b.Duration {
			c.addf("%s lasts %d s (%d to %d), want %d s", at, pb.End-pb.Start, pb.Start, pb.End, b.Duration)
		}
		if pb.Start < b.Start || pb.End > b.End {
			c.addf("%s (%d to %d) is outside its window %d to %d", at, pb.Start, pb.End, b.Start, b.End)
		}
		if pb.Start < prevEnd {
			c.addf("%s starts at %d, before the previous break ends at %d", at, pb.Start, prevEnd)
		}
		prevEnd = pb.End
		if pb.AfterStop < 0 || pb.AfterStop >= len(gaps) {
			c.addf("%s is after stop %d of %d", at, pb.AfterStop, len(gaps)-1)
			continue
		}
		if i > 0 && pb.AfterStop < r.Breaks[i-1].AfterStop {
			c.addf("%s is after %d stops, the previous break after %d", at, pb.AfterStop, r.Breaks[i-1].AfterStop)
		}
		if !gaps[pb.AfterStop].holds(pb.Start, pb.End) {
			c.addf("%s (%d to %d, after %d stops) is not where the vehicle stands: it overlaps a drive or a service", at, pb.Start, pb.End, pb.AfterStop)
		}
		if pb.AfterStop == len(gaps)-1 {
			trailing = max(trailing, pb.End)
		}
	}
	return trailing
}

// unassigned checks that every order not served is listed once, in order,
// with a known reason, and that no served order is.
func (c *checker) unassigned(us []vrp.Unassigned, served []bool) {
	listed := make([]bool, len(served))
	prev := -1
	for i, u := range us {
		if u.Order < 0 || u.Order >= len(served) {
			c.addf("unassigned %d: order %d does not exist", i, u.Order)
			continue
		}
		switch {
		case listed[u.Order]:
			c.addf("unassigned %d: order %d is listed twice", i, u.Order)
		case served[u.Order]:
			c.addf("unassigned %d: order %d is served and listed as unassigned", i, u.Order)
		}
		if u.Order < prev {
			c.addf("unassigned %d: order %d after order %d, want order index order", i, u.Order, prev)
		}
		if !slices.Contains(reasons, u.Reason) || u.Message == "" {
			c.addf("unassigned %d: order %d has reason %q and message %q, want a known reason and a message", i, u.Order, u.Reason, u.Message)
		}
		listed[u.Order] = true
		prev = u.Order
	}
	for o := range served {
		if !served[o] && !listed[o] {
			c.addf("order %d is neither served nor unassigned", o)
		}
	}
}

// fits is the solver's capacity rule, restated: a load may exceed the
// capacity by 1e-9 of the larger of the two, the rounding of a sum.
func fits(load, capacity float64) bool {
	return load-capacity <= 1e-9*max(load, capacity)
}

// approxEqual reports whether a and b agree within rel of the larger.
func approxEqual(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b))
}
