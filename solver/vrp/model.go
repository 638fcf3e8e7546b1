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
}

// Problem: location 0 is the depot, location i+1 is Orders[i].
type Problem struct {
	Orders    []Order
	Vehicles  []Vehicle
	Distance  [][]int // metres, (len(Orders)+1) square; may be asymmetric
	Duration  [][]int // seconds, same shape
	Objective Objective
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
)

// Stop is one visit of a route.
type Stop struct {
	Order       int // index into Problem.Orders
	Arrival     int // seconds since midnight
	Start       int // service start = max(Arrival, WindowStart)
	Depart      int // Start + ServiceS
	Wait        int // Start - Arrival
	Late        int // max(0, Start - WindowEnd); 0 when on time (only the baseline can be late)
	LegDistance int // metres of the leg from the previous location (depot or stop) to this stop
	LegTravel   int // seconds of that leg
}

// Route is the plan of one vehicle.
type Route struct {
	Vehicle  int     // index into Problem.Vehicles
	Stops    []Stop  // in driving order
	Depart   int     // leaves the depot (seconds since midnight)
	Return   int     // back at the depot
	Distance int     // metres, including the leg back to the depot
	Load     float64 // sum of demands
	DriveS   int     // sum of leg travel seconds including the return leg
}

// Unassigned is an order that is not planned, with the reason.
type Unassigned struct {
	Order   int
	Reason  Reason
	Message string // human readable, names the numbers; times written HH:MM
}

// Solution is a plan.
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
	}
	size := len(p.Orders) + 1
	checkMatrix := func(name string, m [][]int) {
		if len(m) != size {
			add("%s matrix has %d rows, want %d (depot + %d orders)", name, len(m), size, len(p.Orders))
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
