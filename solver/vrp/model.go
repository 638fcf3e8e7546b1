package vrp

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"routeopt.io/routeopt/solver/vrp/internal/ablation"
)

// Objective chooses what the solver minimises after the number of served orders.
type Objective int

const (
	ObjectiveDistance Objective = iota // total metres
	ObjectiveDuration                  // total route time from departure to return, waiting included (seconds)
)

// String returns "distance" or "duration".
func (o Objective) String() string {
	switch o {
	case ObjectiveDistance:
		return "distance"
	case ObjectiveDuration:
		return "duration"
	}
	return "Objective(" + strconv.Itoa(int(o)) + ")"
}

// NoWindowEnd is the WindowEnd of an order without a closing time. It is
// also the largest time of day (and the largest matrix entry or service time)
// that Validate accepts.
const NoWindowEnd = 1 << 30

// Order is one delivery. Location i+1 of the matrices is Orders[i].
type Order struct {
	Demand      float64 // >= 0, same unit as Capacity
	ServiceS    int     // service time at the stop, seconds
	WindowStart int     // seconds since midnight; 0 when none
	WindowEnd   int     // seconds since midnight; NoWindowEnd when none. Service must START within [WindowStart, WindowEnd].

	// Windows, when it has two or more entries, are the windows service
	// may start in (sorted, none overlapping or touching the next); then
	// WindowStart and WindowEnd must be the first start and the last end.
	// Empty (or one entry equal to [WindowStart, WindowEnd]) means the
	// single window [WindowStart, WindowEnd].
	Windows []Window
	// Skills must all be among the serving vehicle's Skills
	// (case-sensitive).
	Skills []string
	// Loads are the order's amounts in Problem.Dimensions, index for
	// index; nil means zero in every dimension.
	Loads []float64
	// Priority (0 to 100) orders what is served when not everything
	// fits: the larger total priority first, then more orders, then the
	// lower cost.
	Priority int
}

// Window is one time window of an order: service starts in [Start, End]
// (seconds since midnight).
type Window struct {
	Start, End int
}

// Break is a rest a used vehicle must take: Duration seconds lying wholly
// in [Start, End] (seconds since midnight). It is taken where the vehicle
// is: at its start location before leaving, at a stop after the service,
// at a stop before the service while waiting for its window (the wait
// counts towards the break), or at the end location after the last leg
// (then Return is the break's end). A vehicle takes its breaks in the
// order listed; a vehicle without stops takes none.
type Break struct {
	Start, End int
	Duration   int // seconds, > 0
}

// Vehicle is one vehicle of the fleet; each vehicle drives at most one route.
type Vehicle struct {
	Capacity   float64 // > 0
	ShiftStart int     // seconds since midnight; the vehicle may leave the depot no earlier
	ShiftEnd   int     // seconds since midnight; the vehicle must be back at the depot no later
	FixedCost  float64 // added to the objective when the vehicle is used (objective units)
	// Name is how unassigned messages refer to the vehicle (the caller's
	// vehicle_ref), so they read without translation; "" means
	// "vehicle N", counted from 1.
	Name string

	// Skills the vehicle has; an order needing one it lacks cannot go on it.
	Skills []string
	// Capacities are the vehicle's capacities in Problem.Dimensions, index
	// for index (> 0); it must have one per dimension.
	Capacities []float64
	// Breaks (at most three) are taken in this order; their windows lie
	// inside the shift, each starting and ending no earlier than the one
	// before.
	Breaks []Break
	// Route limits; 0 means none. MaxDuration (seconds) runs from
	// departure to return, breaks and waiting included; MaxDistance
	// (metres) includes the legs from the start and to the end.
	MaxDuration, MaxDistance, MaxStops int
	// Start and End are the locations the route leaves from and returns to:
	// 0, the depot, or one of the extra locations after the orders
	// (len(Orders)+1 ... len(Orders)+Problem.ExtraLocations). With OpenEnd
	// the route ends at its last stop (End must be 0 and is not used): no
	// leg back, and Return is the end of the last stop's service (or of a
	// break taken after it).
	Start, End int
	OpenEnd    bool
}

// Problem: location 0 is the depot, location i+1 is Orders[i], and the
// ExtraLocations after them are where vehicles start or end elsewhere.
type Problem struct {
	Orders   []Order
	Vehicles []Vehicle
	// Distance is in metres, (1+len(Orders)+ExtraLocations) square; it may
	// be asymmetric.
	Distance  [][]int
	Duration  [][]int // seconds, same shape
	Objective Objective
	// Dimensions names the load dimensions beyond Demand and Capacity
	// (Order.Loads and Vehicle.Capacities follow its order).
	Dimensions     []string
	ExtraLocations int
}

// Options control Solve.
type Options struct {
	TimeLimit time.Duration          // wall-clock budget for Solve; 0 means a small default (1 s)
	Seed      int64                  // deterministic for a given seed
	Progress  func(fraction float64) // optional; called with 0..1 (elapsed/limit) at most ~10 times per second, and 1 at the end

	// MaxIterations optionally caps the number of iterations of the
	// search (children of the genetic search, or ruin-and-recreate steps;
	// 0 = run until the time limit). The search trajectory
	// depends only on the input and the seed, never on the clock, when
	// MaxIterations is set: a run that reaches the cap before the time limit
	// is bit-for-bit reproducible. Without it the annealing schedule follows
	// the clock and the result depends on how far the search got.
	MaxIterations int

	// Threads is the number of parallel searches (0 = GOMAXPROCS, which
	// the Go runtime derives from the container's CPU limit). The searches
	// exchange their best plans every epoch of iterations (counted, not
	// timed), so a run with a fixed seed and MaxIterations is reproducible
	// for any number of threads.
	Threads int

	// Now optionally replaces time.Now as the clock of TimeLimit and
	// Progress. Benchmarks on a shared machine pass a CPU-time clock so
	// that the budget is the CPU the search actually got. With several
	// threads it is called concurrently.
	Now func() time.Time

	// Ablation turns pieces of the solver off, one at a time, for the
	// benchmark's ablation table (routeopt bench --ablate); its type is
	// internal to the solver. The zero value, every piece on, is what the
	// service runs.
	Ablation ablation.Switches

	// genetic replaces the settings of the genetic search; nil runs
	// defaultGeneticParams, as the service does. Tests set it.
	genetic *geneticParams
}

// Reason says why an order is not planned.
type Reason string

const (
	ReasonTooLarge          Reason = "too_large"          // demand above every vehicle's capacity
	ReasonWindowUnreachable Reason = "window_unreachable" // no vehicle can serve it inside its window and shift even alone (depot -> order -> depot)
	ReasonNoCapacity        Reason = "no_capacity"        // could be served alone, but the fleet's capacity is used up
	ReasonNoTime            Reason = "no_time"            // could be served alone, but no route can fit it within shifts/windows
	ReasonSkillsMissing     Reason = "skills_missing"     // no vehicle has every skill the order needs
	ReasonRouteLimit        Reason = "route_limit"        // fits alone, but every vehicle that could serve it is at a route limit
)

// Stop is one visit of a route.
//
// Between the previous stop's Depart (the route's Depart for the first
// stop) and this stop's Start lie the leg of LegTravel seconds, ending at
// Arrival, and the breaks planned with AfterStop equal to this stop's
// index: each either before the leg (at the previous place) or between
// Arrival and Start (at this stop, while waiting).
type Stop struct {
	Order       int // index into Problem.Orders
	Arrival     int // seconds since midnight
	Start       int // service start: the earliest moment from Arrival (and the breaks taken here) inside a window
	Depart      int // Start + ServiceS
	Wait        int // Start - Arrival, breaks taken here included
	Late        int // max(0, Start - end of the window served); 0 when on time (only the baseline can be late)
	LegDistance int // metres of the leg from the previous location (start or stop) to this stop
	LegTravel   int // seconds of that leg
	// Window is the index into the order's Windows of the window served
	// in (0 for an order with a single window).
	Window int
}

// PlannedBreak is one of the vehicle's breaks on its route.
type PlannedBreak struct {
	Break      int // index into Vehicle.Breaks
	Start, End int // seconds since midnight; End - Start is the break's Duration
	// AfterStop is the number of stops served before the break: 0 before
	// the first, len(Stops) after the last (at the last stop, before the
	// leg to the end location, or at the end location after it).
	AfterStop int
}

// Route is the plan of one vehicle.
type Route struct {
	Vehicle  int     // index into Problem.Vehicles
	Stops    []Stop  // in driving order
	Depart   int     // the route's start at the vehicle's start location (a break taken there before leaving included)
	Return   int     // at the end location (the last stop's Depart, or the end of a break after it, when OpenEnd)
	Distance int     // metres, including the leg to the end location
	Load     float64 // sum of demands
	DriveS   int     // sum of leg travel seconds including the leg to the end location
	// Breaks are the vehicle's breaks, all of them, in its order; none
	// when it has none.
	Breaks []PlannedBreak
	// Loads are the sums of the orders' Loads per dimension (nil without
	// dimensions).
	Loads []float64
}

// Unassigned is an order that is not planned, with the reason.
type Unassigned struct {
	Order   int
	Reason  Reason
	Message string // human readable, names the numbers; times written HH:MM
}

// Solution is a plan. Solve prefers, in this order, the larger total
// Priority of the served orders, more served orders, and the lower Cost.
type Solution struct {
	Routes     []Route      // only vehicles that are used (at least one stop), ordered by vehicle index
	Unassigned []Unassigned // ordered by order index
	Cost       float64      // objective value + fixed costs of used vehicles
}

// capacityEps is the relative tolerance of capacity comparisons: it absorbs
// the rounding of a sum of demands (0.1+0.2 fits 0.3) at any scale, so that
// a capacity of 1e-9 still refuses two orders of 1e-9.
const capacityEps = 1e-9

// fitsCapacity reports whether load fits capacity, allowing an excess of
// capacityEps relative to the larger of the two.
func fitsCapacity(load, capacity float64) bool {
	return load-capacity <= capacityEps*max(load, capacity)
}

// Validate checks a Problem's shape (matrix sizes, non-negative values, shift
// start <= end, ...) and returns a descriptive error. All times, service
// times and matrix entries must lie in [0, NoWindowEnd].
func (p *Problem) Validate() error {
	if p == nil {
		return errors.New("vrp: problem is nil")
	}
	if p.Objective != ObjectiveDistance && p.Objective != ObjectiveDuration {
		return fmt.Errorf("vrp: unknown objective %d", int(p.Objective))
	}
	if len(p.Vehicles) == 0 {
		return errors.New("vrp: at least one vehicle is required")
	}
	var errs []error
	add := func(format string, args ...any) {
		if len(errs) < 20 { // keep the message readable
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	for i, o := range p.Orders {
		switch {
		case math.IsNaN(o.Demand) || math.IsInf(o.Demand, 0) || o.Demand < 0:
			add("order %d: demand %v must be a finite number >= 0", i, o.Demand)
		}
		if o.ServiceS < 0 || o.ServiceS > NoWindowEnd {
			add("order %d: service time %d s must be in [0, %d]", i, o.ServiceS, NoWindowEnd)
		}
		if o.WindowStart < 0 || o.WindowStart > NoWindowEnd {
			add("order %d: window start %d must be in [0, %d]", i, o.WindowStart, NoWindowEnd)
		}
		if o.WindowEnd < 0 || o.WindowEnd > NoWindowEnd {
			add("order %d: window end %d must be in [0, %d] (NoWindowEnd for none)", i, o.WindowEnd, NoWindowEnd)
		}
		if o.WindowEnd < o.WindowStart {
			add("order %d: window end %s is before window start %s", i, clock(o.WindowEnd), clock(o.WindowStart))
		}
		if err := o.validateWindows(); err != nil {
			add("order %d: %v", i, err)
		}
		if o.Loads != nil && len(o.Loads) != len(p.Dimensions) {
			add("order %d: %d loads for %d dimensions", i, len(o.Loads), len(p.Dimensions))
		}
		for d, x := range o.Loads {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				add("order %d: load %v in dimension %d must be a finite number >= 0", i, x, d)
			}
		}
		if o.Priority < 0 || o.Priority > MaxPriority {
			add("order %d: priority %d must be in [0, %d]", i, o.Priority, MaxPriority)
		}
	}
	for i, v := range p.Vehicles {
		if math.IsNaN(v.Capacity) || math.IsInf(v.Capacity, 0) || v.Capacity <= 0 {
			add("vehicle %d: capacity %v must be a finite number > 0", i, v.Capacity)
		}
		if v.ShiftStart < 0 || v.ShiftStart > NoWindowEnd {
			add("vehicle %d: shift start %d must be in [0, %d]", i, v.ShiftStart, NoWindowEnd)
		}
		if v.ShiftEnd < 0 || v.ShiftEnd > NoWindowEnd {
			add("vehicle %d: shift end %d must be in [0, %d]", i, v.ShiftEnd, NoWindowEnd)
		}
		if v.ShiftEnd < v.ShiftStart {
			add("vehicle %d: shift end %s is before shift start %s", i, clock(v.ShiftEnd), clock(v.ShiftStart))
		}
		if math.IsNaN(v.FixedCost) || math.IsInf(v.FixedCost, 0) || v.FixedCost < 0 {
			add("vehicle %d: fixed cost %v must be a finite number >= 0", i, v.FixedCost)
		}
		if len(v.Capacities) != len(p.Dimensions) {
			add("vehicle %d: %d capacities for %d dimensions", i, len(v.Capacities), len(p.Dimensions))
		}
		for d, x := range v.Capacities {
			if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
				add("vehicle %d: capacity %v in dimension %d must be a finite number > 0", i, x, d)
			}
		}
		if err := v.validateBreaks(); err != nil {
			add("vehicle %d: %v", i, err)
		}
		if v.MaxDuration < 0 || v.MaxDistance < 0 || v.MaxStops < 0 {
			add("vehicle %d: route limits %d s, %d m, %d stops must be >= 0 (0 for none)", i, v.MaxDuration, v.MaxDistance, v.MaxStops)
		}
		extra := func(loc int) bool { return loc == 0 || loc > len(p.Orders) && loc <= len(p.Orders)+p.ExtraLocations }
		if !extra(v.Start) || !extra(v.End) {
			add("vehicle %d: start %d and end %d must be 0 or an extra location (%d to %d)", i, v.Start, v.End, len(p.Orders)+1, len(p.Orders)+p.ExtraLocations)
		}
		if v.OpenEnd && v.End != 0 {
			add("vehicle %d: an open route has no end location (end %d)", i, v.End)
		}
	}
	if p.ExtraLocations < 0 {
		add("extra locations %d must be >= 0", p.ExtraLocations)
	}
	size := len(p.Orders) + 1 + max(p.ExtraLocations, 0)
	checkMatrix := func(name string, m [][]int) {
		if len(m) != size {
			add("%s matrix has %d rows, want %d (depot + %d orders + %d extra locations)", name, len(m), size, len(p.Orders), p.ExtraLocations)
			return
		}
		for i, row := range m {
			if len(row) != size {
				add("%s matrix row %d has %d columns, want %d", name, i, len(row), size)
				continue
			}
			for j, x := range row {
				if x < 0 || x > NoWindowEnd {
					add("%s[%d][%d] = %d must be in [0, %d]", name, i, j, x, NoWindowEnd)
				}
			}
		}
	}
	checkMatrix("distance", p.Distance)
	checkMatrix("duration", p.Duration)
	if len(errs) > 0 {
		return fmt.Errorf("vrp: invalid problem: %w", errors.Join(errs...))
	}
	return nil
}

// MaxPriority is the largest Order.Priority.
const MaxPriority = 100

// validateWindows checks Windows against WindowStart and WindowEnd.
func (o *Order) validateWindows() error {
	w := o.Windows
	switch {
	case len(w) == 0:
		return nil
	case len(w) == 1:
		if w[0].Start != o.WindowStart || w[0].End != o.WindowEnd {
			return fmt.Errorf("its one window %s-%s differs from window %s-%s", clock(w[0].Start), clock(w[0].End), clock(o.WindowStart), clock(o.WindowEnd))
		}
		return nil
	}
	for k, x := range w {
		if x.Start < 0 || x.End > NoWindowEnd || x.End < x.Start {
			return fmt.Errorf("window %d (%d to %d) must satisfy 0 <= start <= end <= %d", k, x.Start, x.End, NoWindowEnd)
		}
		if k > 0 && x.Start <= w[k-1].End {
			return fmt.Errorf("window %d starts at %s, not after window %d ends at %s", k, clock(x.Start), k-1, clock(w[k-1].End))
		}
	}
	if w[0].Start != o.WindowStart || w[len(w)-1].End != o.WindowEnd {
		return fmt.Errorf("windows span %s-%s, but window start and end are %s-%s", clock(w[0].Start), clock(w[len(w)-1].End), clock(o.WindowStart), clock(o.WindowEnd))
	}
	return nil
}

// validateBreaks checks the vehicle's breaks against its shift and each
// other.
func (v *Vehicle) validateBreaks() error {
	if len(v.Breaks) > maxBreaks {
		return fmt.Errorf("%d breaks, at most %d", len(v.Breaks), maxBreaks)
	}
	for k, b := range v.Breaks {
		if b.Duration <= 0 || b.Start+b.Duration > b.End {
			return fmt.Errorf("break %d of %d s does not fit %s-%s", k, b.Duration, clock(b.Start), clock(b.End))
		}
		if b.Start < v.ShiftStart || b.End > v.ShiftEnd {
			return fmt.Errorf("break %d (%s-%s) is not inside the shift %s-%s", k, clock(b.Start), clock(b.End), clock(v.ShiftStart), clock(v.ShiftEnd))
		}
		if k > 0 && (b.Start < v.Breaks[k-1].Start || b.End < v.Breaks[k-1].End) {
			return fmt.Errorf("break %d (%s-%s) starts or ends before break %d", k, clock(b.Start), clock(b.End), k-1)
		}
	}
	return nil
}

// clock formats seconds since midnight as HH:MM (hours may exceed 23 for
// times after midnight of the next day). NoWindowEnd reads "open".
func clock(s int) string {
	if s >= NoWindowEnd {
		return "open"
	}
	neg := ""
	if s < 0 {
		neg, s = "-", -s
	}
	return fmt.Sprintf("%s%02d:%02d", neg, s/3600, s%3600/60)
}

// num formats a demand or capacity without trailing zeros.
func num(f float64) string { return strconv.FormatFloat(f, 'g', 10, 64) }

// vehicleName is how messages name vehicle v: its Name, else "vehicle N"
// counted from 1.
func (p *Problem) vehicleName(v int) string {
	if n := p.Vehicles[v].Name; n != "" {
		return n
	}
	return "vehicle " + strconv.Itoa(v+1)
}

// windowPhrase names an order's window inside a sentence: "its window
// 09:00-12:00", "its window from 09:00", "its window until 17:00", or "its
// (open) window" when there is none.
func windowPhrase(o Order) string {
	switch {
	case o.WindowEnd >= NoWindowEnd && o.WindowStart <= 0:
		return "its (open) window"
	case o.WindowEnd >= NoWindowEnd:
		return "its window from " + clock(o.WindowStart)
	case o.WindowStart <= 0:
		return "its window until " + clock(o.WindowEnd)
	}
	return "its window " + clock(o.WindowStart) + "-" + clock(o.WindowEnd)
}
