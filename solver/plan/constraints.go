package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

// The fleet constraints between spec and model: several windows, skills,
// named loads and priorities of orders; skills, capacities, breaks, route
// limits and start and end of vehicles. A spec without them translates to
// the model it gave before they existed: every field they add stays at its
// zero value.

// Dimensions are the load dimensions of spec: the names its orders' loads
// use, sorted. A vehicle's capacity in a dimension no order uses is not
// one of them: it cannot bind.
func Dimensions(spec *v1alpha1.OptimizationSpec) []string {
	var names []string
	for i := range spec.Orders {
		for _, l := range spec.Orders[i].Loads {
			if !slices.Contains(names, l.Name) {
				names = append(names, l.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// constrainOrder adds order o's windows, skills, loads in dims and
// priority to vo.
func constrainOrder(vo *vrp.Order, o *v1alpha1.Order, dims []string) error {
	if n := len(o.TimeWindows); n > 0 {
		windows := make([]vrp.Window, n)
		for k, w := range o.TimeWindows {
			start, err := ParseClock(w.Start)
			if err != nil {
				return err
			}
			end, err := ParseClock(w.End)
			if err != nil {
				return err
			}
			windows[k] = vrp.Window{Start: start, End: end}
		}
		vo.WindowStart, vo.WindowEnd = windows[0].Start, windows[n-1].End
		if n > 1 {
			vo.Windows = windows
		}
	}
	vo.Skills = slices.Clone(o.Skills)
	if len(o.Loads) > 0 {
		vo.Loads = make([]float64, len(dims))
		for _, l := range o.Loads {
			vo.Loads[slices.Index(dims, l.Name)] = l.Value
		}
	}
	if o.Priority != nil {
		vo.Priority = int(*o.Priority)
	}
	return nil
}

// constrainVehicle adds c's skills, capacities in dims, breaks, route
// limits and open end to v.
func constrainVehicle(v *vrp.Vehicle, c *v1alpha1.VehicleConstraints, dims []string) error {
	v.Skills = slices.Clone(c.Skills)
	if len(dims) > 0 {
		v.Capacities = make([]float64, len(dims))
		for d, name := range dims {
			k := slices.IndexFunc(c.Capacities, func(x v1alpha1.DimensionCapacity) bool { return x.Name == name })
			if k < 0 {
				return fmt.Errorf("no capacity in %q, a dimension the orders' loads name", name)
			}
			v.Capacities[d] = c.Capacities[k].Value
		}
	}
	for _, b := range c.Breaks {
		start, err := ParseClock(b.Start)
		if err != nil {
			return err
		}
		end, err := ParseClock(b.End)
		if err != nil {
			return err
		}
		v.Breaks = append(v.Breaks, vrp.Break{Start: start, End: end, Duration: int(b.Minutes) * 60})
	}
	v.MaxDuration = int(c.MaxDurationMinutes) * 60
	v.MaxDistance = int(math.Round(c.MaxDistanceKm * 1000))
	v.MaxStops = int(c.MaxStops)
	v.OpenEnd = c.OpenEnd != nil && *c.OpenEnd
	return nil
}

// FleetConstraints are the constraints of each vehicle Fleet expands, in
// its order: a fleet's vehicles share the fleet's.
func FleetConstraints(spec *v1alpha1.OptimizationSpec) []*v1alpha1.VehicleConstraints {
	if f := spec.Fleet; f != nil {
		out := make([]*v1alpha1.VehicleConstraints, max(int(f.Count), 0))
		for i := range out {
			out[i] = &f.VehicleConstraints
		}
		return out
	}
	out := make([]*v1alpha1.VehicleConstraints, len(spec.Vehicles))
	for i := range spec.Vehicles {
		out[i] = &spec.Vehicles[i].VehicleConstraints
	}
	return out
}

// UsesEnds reports whether c gives a start, an end or an open end: then
// every route of the result says where it starts and ends.
func UsesEnds(c *v1alpha1.VehicleConstraints) bool {
	return c.Start != nil || c.End != nil || c.OpenEnd != nil && *c.OpenEnd
}

// RouteEnds is where one vehicle's route starts and ends.
type RouteEnds struct {
	Start Terminal
	// End is not used when Open: the route ends at its last stop.
	End  Terminal
	Open bool
}

// Terminal is a place a route starts or ends at.
type Terminal struct {
	// Point indexes Located.Points and the travel matrix: 0 for the depot,
	// else one of the extra locations after the orders.
	Point int
	Place v1alpha1.Place
}

// PlaceEnds sets in.Ends, where every vehicle of spec starts and ends, once
// every order is placed: at gives the position of a location (its
// coordinates, or where its address was geocoded). A location at the
// depot's position is the depot; every other distinct position becomes one
// extra point after the orders, shared by the locations there. A spec in
// which no vehicle has a start, an end or open_end leaves in as it is.
func (in *Located) PlaceEnds(spec *v1alpha1.OptimizationSpec, at func(*v1alpha1.Location) matrix.Point) {
	constraints := FleetConstraints(spec)
	if !slices.ContainsFunc(constraints, UsesEnds) {
		return
	}
	index := map[matrix.Point]int{in.Depot: 0}
	depot := Terminal{Place: v1alpha1.Place{Latitude: in.Depot.Lat, Longitude: in.Depot.Lon, Address: trimmed(spec.Depot.Address)}}
	terminal := func(loc *v1alpha1.Location) Terminal {
		if loc == nil {
			return depot
		}
		p := at(loc)
		i, ok := index[p]
		if !ok {
			i = len(in.Points)
			index[p] = i
			in.Points = append(in.Points, p)
		}
		return Terminal{Point: i, Place: v1alpha1.Place{Latitude: p.Lat, Longitude: p.Lon, Address: trimmed(loc.Address)}}
	}
	in.Ends = make([]RouteEnds, len(constraints))
	for i, c := range constraints {
		e := &in.Ends[i]
		e.Start = terminal(c.Start)
		e.Open = c.OpenEnd != nil && *c.OpenEnd
		if !e.Open {
			e.End = terminal(c.End)
		}
	}
}

// trimmed is an optional text without surrounding white space, "" when
// absent.
func trimmed(s *string) string { return strings.TrimSpace(deref(s)) }
