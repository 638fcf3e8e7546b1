// Package plan translates between an Optimization's spec and the routing
// model: spec to vrp.Problem, and vrp.Solution to the Result document. It
// does no I/O and knows nothing of Kubernetes, so every rule of the
// translation (defaults, fleet names, windows, the order of unassigned
// orders, the KPIs) is tested without an API server; the one call that may
// reach a service, a route's road geometry, is passed in.
package plan

import (
	"fmt"
	"math"
	"strings"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

// Located is the problem after geocoding: the depot and the orders that
// have a position, where the vehicles start and end, with the warnings and
// unassigned orders found so far.
type Located struct {
	Depot matrix.Point
	// Orders is the spec index of each located order, in spec order.
	Orders []int
	// Points is the depot first, then the located orders, then the extra
	// locations where vehicles start or end (PlaceEnds): the locations of
	// the travel matrix, index for index.
	Points []matrix.Point
	// Ends are where each vehicle of the fleet (in Fleet's order) starts and
	// ends; nil when no vehicle has a start, an end or open_end, and then
	// every route starts and ends at the depot and the result says nothing
	// of it.
	Ends []RouteEnds
	// Unassigned are the orders dropped before solving; UnassignAt holds
	// the spec index of each, so the result can list them in caller order.
	Unassigned []v1alpha1.Unassigned
	UnassignAt []int
	Warnings   []v1alpha1.Warning
}

// Unassign drops the order at specIndex from the problem, for reason.
func (in *Located) Unassign(specIndex int, ref, reason, msg string) {
	in.Unassigned = append(in.Unassigned, v1alpha1.Unassigned{OrderRef: ref, Reason: reason, Message: msg})
	in.UnassignAt = append(in.UnassignAt, specIndex)
}

// Vehicle is one vehicle of the problem with its display data.
type Vehicle struct {
	Ref    string
	Driver *string
	vrp.Vehicle
}

// Fleet expands the spec's vehicles, or its fleet into Count vehicles
// named "<prefix> 1" .. "<prefix> N", with the default shifts applied and
// their constraints translated. Where they start and end is decided after
// geocoding (Located.PlaceEnds); Problem sets it.
func Fleet(spec *v1alpha1.OptimizationSpec) ([]Vehicle, error) {
	dims := Dimensions(spec)
	var out []Vehicle
	add := func(ref string, driver *string, capacity float64, start, end string, fixed float64, c *v1alpha1.VehicleConstraints) error {
		ss, err := ParseClock(start)
		if err != nil {
			return err
		}
		se, err := ParseClock(end)
		if err != nil {
			return err
		}
		v := Vehicle{Ref: ref, Driver: driver, Vehicle: vrp.Vehicle{Capacity: capacity, ShiftStart: ss, ShiftEnd: se, FixedCost: fixed, Name: ref}}
		if err := constrainVehicle(&v.Vehicle, c, dims); err != nil {
			return fmt.Errorf("vehicle %q: %w", ref, err)
		}
		out = append(out, v)
		return nil
	}
	if f := spec.Fleet; f != nil {
		prefix := f.EffectiveNamePrefix()
		start, end := f.Shift()
		for i := range int(f.Count) {
			if err := add(fmt.Sprintf("%s %d", prefix, i+1), nil, f.Capacity, start, end, f.FixedCost, &f.VehicleConstraints); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	for i := range spec.Vehicles {
		v := &spec.Vehicles[i]
		start, end := v.Shift()
		if err := add(v.ID, v.Driver, v.Capacity, start, end, v.FixedCost, &v.VehicleConstraints); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Problem translates the located orders and the fleet into the solver's
// model over the travel matrix m, which covers in.Points.
func Problem(spec *v1alpha1.OptimizationSpec, in *Located, m *matrix.Matrix, fleet []Vehicle) (*vrp.Problem, error) {
	p := &vrp.Problem{Distance: m.Distance, Duration: m.Duration, Objective: vrp.ObjectiveDistance}
	if spec.EffectiveOptions().Objective == v1alpha1.ObjectiveDuration {
		p.Objective = vrp.ObjectiveDuration
	}
	p.Dimensions = Dimensions(spec)
	// The matrix covers the depot, the orders and then the extra locations.
	p.ExtraLocations = max(len(m.Distance)-1-len(in.Orders), 0)
	if in.Ends != nil && len(in.Ends) != len(fleet) {
		return nil, fmt.Errorf("%d vehicles but the ends of %d", len(fleet), len(in.Ends))
	}
	for i, v := range fleet {
		if in.Ends != nil {
			e := &in.Ends[i]
			v.Start = e.Start.Point
			if !e.Open {
				v.End = e.End.Point
			}
		}
		p.Vehicles = append(p.Vehicles, v.Vehicle)
	}
	for _, idx := range in.Orders {
		o := &spec.Orders[idx]
		vo := vrp.Order{
			Demand:    o.EffectiveDemand(),
			ServiceS:  int(math.Round(o.EffectiveServiceMinutes() * 60)),
			WindowEnd: vrp.NoWindowEnd,
		}
		if o.TimeWindowStart != nil {
			t, err := ParseClock(*o.TimeWindowStart)
			if err != nil {
				return nil, err
			}
			vo.WindowStart = t
		}
		if o.TimeWindowEnd != nil {
			t, err := ParseClock(*o.TimeWindowEnd)
			if err != nil {
				return nil, err
			}
			vo.WindowEnd = t
		}
		if err := constrainOrder(&vo, o, p.Dimensions); err != nil {
			return nil, fmt.Errorf("order %q: %w", o.ID, err)
		}
		p.Orders = append(p.Orders, vo)
	}
	return p, p.Validate()
}

// Solution is the solver's answer with the vehicles it refers to.
type Solution struct {
	*vrp.Solution
	Fleet   []Vehicle
	Problem *vrp.Problem
}

// stopAddress joins an order's address fields as docs/API.md ("Stop") writes
// them, "address, postal_code city, region, country", leaving out the ones
// not given; "" for an order with coordinates only.
func stopAddress(o *v1alpha1.Order) string {
	clean := func(s *string) string { return strings.TrimSpace(deref(s)) }
	var parts []string
	for _, p := range []string{
		clean(o.Address),
		strings.TrimSpace(clean(o.PostalCode) + " " + clean(o.City)),
		clean(o.Region),
		clean(o.Country),
	} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
