package solver

import (
	"fmt"
	"slices"
	"strings"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
)

// ValidateSpec checks the cross-field rules of a spec that the CRD's schema
// does not: the per-order and per-vehicle ones were CEL rules, dropped because
// evaluating them for every list item dominated kube-apiserver's CPU per
// create. The REST API refuses such requests with 422 before they are stored;
// this catches an Optimization made another way (kubectl, a Go client) before
// any geocoding or solving is spent on it. It returns nil or a Failure with
// code invalid_input naming each offending order or vehicle by its id.
//
// It assumes the schema's bounds held (lengths, ranges, HH:MM patterns) but
// does not rely on them: a time that is not HH:MM is reported, not a panic.
func ValidateSpec(spec *v1alpha1.OptimizationSpec) *record.Failure {
	var v validation

	d := &spec.Depot
	switch v1alpha1.CheckLocation(d.Address, d.Latitude, d.Longitude) {
	case v1alpha1.LocationUnpaired:
		v.add("the depot: latitude and longitude must be given together")
	case v1alpha1.LocationMissing:
		v.add("the depot needs an address or both latitude and longitude")
	}

	if len(spec.Orders) == 0 {
		v.add("there are no orders")
	}
	for i := range spec.Orders {
		o := &spec.Orders[i]
		name := v.item("order", i, o.ID)
		switch v1alpha1.CheckLocation(o.Address, o.Latitude, o.Longitude) {
		case v1alpha1.LocationUnpaired:
			v.add(name + ": latitude and longitude must be given together")
		case v1alpha1.LocationMissing:
			v.add(name + ": needs an address or both latitude and longitude")
		}
		v.window(name, "time window", o.TimeWindowStart, o.TimeWindowEnd)
		v.timeWindows(name, o)
	}
	dims := orderDimensions(spec.Orders)
	v.unique("order", len(spec.Orders), func(i int) string { return spec.Orders[i].ID })

	switch hasVehicles, hasFleet := spec.Vehicles != nil, spec.Fleet != nil; {
	case hasVehicles && hasFleet:
		v.add("give either vehicles or fleet, not both")
	case !hasVehicles && !hasFleet:
		v.add("either vehicles or fleet is required")
	case hasVehicles && len(spec.Vehicles) == 0:
		v.add("vehicles is empty")
	}
	for i := range spec.Vehicles {
		veh := &spec.Vehicles[i]
		name := v.item("vehicle", i, veh.ID)
		start, end := veh.Shift()
		v.window(name, "shift", &start, &end)
		v.constraints(name, &veh.VehicleConstraints, start, end, dims)
	}
	v.unique("vehicle", len(spec.Vehicles), func(i int) string { return spec.Vehicles[i].ID })
	if f := spec.Fleet; f != nil {
		start, end := f.Shift()
		v.window("the fleet", "shift", &start, &end)
		if f.Count < 1 {
			v.add(fmt.Sprintf("the fleet: count %d is not at least 1", f.Count))
		}
		v.constraints("the fleet", &f.VehicleConstraints, start, end, dims)
	}
	return v.failure()
}

// timeWindows checks an order's timeWindows: HH:MM, each in order, each
// after the previous one, and not beside timeWindowStart/End.
func (v *validation) timeWindows(name string, o *v1alpha1.Order) {
	if len(o.TimeWindows) == 0 {
		return
	}
	if o.TimeWindowStart != nil || o.TimeWindowEnd != nil {
		v.add(name + ": give timeWindows or timeWindowStart/timeWindowEnd, not both")
	}
	prevEnd := ""
	for k, w := range o.TimeWindows {
		what := fmt.Sprintf("time window %d", k+1)
		before := len(v.problems)
		v.window(name, what, &w.Start, &w.End)
		if len(v.problems) == before && prevEnd != "" && w.Start <= prevEnd {
			v.add(fmt.Sprintf("%s: %s starts at %s, not after the previous window ends at %s", name, what, w.Start, prevEnd))
		}
		prevEnd = w.End
	}
}

// constraints checks a vehicle's (or the fleet's) breaks against each other
// and its shift, its start and end, and that it has a capacity in every
// dimension the orders' loads name.
func (v *validation) constraints(name string, c *v1alpha1.VehicleConstraints, shiftStart, shiftEnd string, dims []string) {
	var prev *v1alpha1.Break
	for k := range c.Breaks {
		b := &c.Breaks[k]
		what := fmt.Sprintf("break %d", k+1)
		before := len(v.problems)
		v.window(name, what, &b.Start, &b.End)
		if len(v.problems) > before {
			continue
		}
		s, _ := plan.ParseClock(b.Start)
		e, _ := plan.ParseClock(b.End)
		if s+int(b.Minutes)*60 > e {
			v.add(fmt.Sprintf("%s: %s of %d minutes does not fit %s–%s", name, what, b.Minutes, b.Start, b.End))
		}
		if b.Start < shiftStart || b.End > shiftEnd {
			v.add(fmt.Sprintf("%s: %s %s–%s is not inside the shift %s–%s", name, what, b.Start, b.End, shiftStart, shiftEnd))
		}
		if prev != nil && (b.Start < prev.Start || b.End < prev.End) {
			v.add(fmt.Sprintf("%s: %s starts or ends before the break before it", name, what))
		}
		prev = b
	}
	for _, l := range []struct {
		what string
		at   *v1alpha1.Location
	}{{"start", c.Start}, {"end", c.End}} {
		if l.at == nil {
			continue
		}
		switch v1alpha1.CheckLocation(l.at.Address, l.at.Latitude, l.at.Longitude) {
		case v1alpha1.LocationUnpaired:
			v.add(fmt.Sprintf("%s: %s latitude and longitude must be given together", name, l.what))
		case v1alpha1.LocationMissing:
			v.add(fmt.Sprintf("%s: %s needs an address or both latitude and longitude", name, l.what))
		}
	}
	if c.End != nil && c.OpenEnd != nil && *c.OpenEnd {
		v.add(name + ": give end or openEnd, not both")
	}
	for _, d := range dims {
		found := false
		for _, cap := range c.Capacities {
			found = found || cap.Name == d
		}
		if !found {
			v.add(fmt.Sprintf("%s: no capacity in %q, which orders' loads name", name, d))
		}
	}
}

// orderDimensions is the sorted set of dimension names the orders' loads
// use.
func orderDimensions(orders []v1alpha1.Order) []string {
	var out []string
	for i := range orders {
		for _, l := range orders[i].Loads {
			if !slices.Contains(out, l.Name) {
				out = append(out, l.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// validation collects problems in spec order.
type validation struct {
	problems []string
	total    int
}

func (v *validation) add(problem string) {
	v.total++
	if len(v.problems) < record.MaxListedProblems {
		v.problems = append(v.problems, problem)
	}
}

// item names a list item by its id, or by its position when it has none.
func (v *validation) item(kind string, index int, id string) string {
	if id == "" {
		v.add(fmt.Sprintf("%s %d of the list has no id", kind, index+1))
		return fmt.Sprintf("%s %d of the list", kind, index+1)
	}
	return fmt.Sprintf("%s %q", kind, id)
}

// window checks that start and end, when both given, are HH:MM and in order;
// what is "time window" or "shift".
func (v *validation) window(name, what string, start, end *string) {
	ok := true
	for _, t := range []struct {
		end   string
		value *string
	}{{"start", start}, {"end", end}} {
		if t.value == nil {
			continue
		}
		if _, err := plan.ParseClock(*t.value); err != nil {
			v.add(fmt.Sprintf("%s: %s %s %q is not HH:MM", name, what, t.end, *t.value))
			ok = false
		}
	}
	if ok && start != nil && end != nil && *start > *end {
		v.add(fmt.Sprintf("%s: %s %s–%s ends before it starts", name, what, *start, *end))
	}
}

// unique reports each id that occurs more than once, once, in first-seen order.
func (v *validation) unique(kind string, n int, id func(int) string) {
	counts := make(map[string]int, n)
	for i := range n {
		counts[id(i)]++
	}
	for i := range n {
		key := id(i)
		if c := counts[key]; c > 1 && key != "" {
			v.add(fmt.Sprintf("%s %q appears %d times; %s ids must be unique", kind, key, c, kind))
			counts[key] = 0 // reported
		}
	}
}

func (v *validation) failure() *record.Failure {
	if v.total == 0 {
		return nil
	}
	msg := strings.Join(v.problems, "; ")
	if more := v.total - len(v.problems); more > 0 {
		msg += fmt.Sprintf(" (and %d more problem(s))", more)
	}
	return &record.Failure{Code: v1alpha1.ErrorInvalidInput, Message: msg}
}
