package solver

import (
	"fmt"
	"slices"
	"strconv"
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
	v.unique("order", len(spec.Orders), func(i int) string { return spec.Orders[i].ID })

	switch hasVehicles, hasFleet := spec.Vehicles != nil, spec.Fleet != nil; {
	case hasVehicles && hasFleet:
		v.add("give either vehicles or fleet, not both")
	case !hasVehicles && !hasFleet:
		v.add("either vehicles or fleet is required")
	case hasVehicles && len(spec.Vehicles) == 0:
		v.add("vehicles is empty")
	}
	dims := plan.Dimensions(spec)
	for i := range spec.Vehicles {
		veh := &spec.Vehicles[i]
		name := v.item("vehicle", i, veh.ID)
		start, end := veh.Shift()
		shiftOK := v.window(name, "shift", &start, &end)
		v.constraints(name, shiftOK, start, end, &veh.VehicleConstraints, dims)
	}
	v.unique("vehicle", len(spec.Vehicles), func(i int) string { return spec.Vehicles[i].ID })
	if f := spec.Fleet; f != nil {
		start, end := f.Shift()
		shiftOK := v.window("the fleet", "shift", &start, &end)
		if f.Count < 1 {
			v.add(fmt.Sprintf("the fleet: count %d is not at least 1", f.Count))
		}
		v.constraints("the fleet", shiftOK, start, end, &f.VehicleConstraints, dims)
	}
	return v.failure()
}

// timeWindows checks an order's timeWindows: each HH:MM and in order, each
// starting after the previous one ends, and not together with
// timeWindowStart and timeWindowEnd.
func (v *validation) timeWindows(name string, o *v1alpha1.Order) {
	if len(o.TimeWindows) == 0 {
		return
	}
	if o.TimeWindowStart != nil || o.TimeWindowEnd != nil {
		v.add(name + ": give either timeWindows or timeWindowStart and timeWindowEnd, not both")
	}
	prevEnd := ""
	for k, w := range o.TimeWindows {
		if !v.window(name, fmt.Sprintf("time window %d", k+1), &w.Start, &w.End) {
			prevEnd = ""
			continue
		}
		if prevEnd != "" && w.Start <= prevEnd {
			v.add(fmt.Sprintf("%s: time window %d %s–%s does not start after the previous one ends at %s", name, k+1, w.Start, w.End, prevEnd))
		}
		prevEnd = w.End
	}
}

// constraints checks what a vehicle or the fleet (name) may do beyond its
// shift: its breaks fit their windows, lie inside the shift (when the shift
// is valid) and come in order; end does not go with openEnd; its start and
// end can be placed; it has a capacity in every dimension of dims.
func (v *validation) constraints(name string, shiftOK bool, shiftStart, shiftEnd string, c *v1alpha1.VehicleConstraints, dims []string) {
	var prev *v1alpha1.Break
	for k := range c.Breaks {
		b := &c.Breaks[k]
		if !v.window(name, fmt.Sprintf("break %d", k+1), &b.Start, &b.End) {
			prev = nil
			continue
		}
		start, _ := plan.ParseClock(b.Start)
		end, _ := plan.ParseClock(b.End)
		if b.Minutes < 1 || start+int(b.Minutes)*60 > end {
			v.add(fmt.Sprintf("%s: break %d of %d minutes does not fit between %s and %s", name, k+1, b.Minutes, b.Start, b.End))
		}
		if shiftOK && (b.Start < shiftStart || b.End > shiftEnd) {
			v.add(fmt.Sprintf("%s: break %d %s–%s is not inside the shift %s–%s", name, k+1, b.Start, b.End, shiftStart, shiftEnd))
		}
		if prev != nil && (b.Start < prev.Start || b.End < prev.End) {
			v.add(fmt.Sprintf("%s: break %d %s–%s starts or ends before break %d; breaks are taken in the listed order", name, k+1, b.Start, b.End, k))
		}
		prev = b
	}
	if c.End != nil && c.OpenEnd != nil && *c.OpenEnd {
		v.add(name + ": give either end or openEnd, not both")
	}
	for _, e := range []struct {
		which string
		loc   *v1alpha1.Location
	}{{"start", c.Start}, {"end", c.End}} {
		if e.loc == nil {
			continue
		}
		switch v1alpha1.CheckLocation(e.loc.Address, e.loc.Latitude, e.loc.Longitude) {
		case v1alpha1.LocationUnpaired:
			v.add(fmt.Sprintf("%s: %s: latitude and longitude must be given together", name, e.which))
		case v1alpha1.LocationMissing:
			v.add(fmt.Sprintf("%s: %s needs an address or both latitude and longitude", name, e.which))
		}
	}
	var missing []string
	for _, d := range dims {
		if !slices.ContainsFunc(c.Capacities, func(x v1alpha1.DimensionCapacity) bool { return x.Name == d }) {
			missing = append(missing, strconv.Quote(d))
		}
	}
	if len(missing) > 0 {
		v.add(fmt.Sprintf("%s: capacities must give every dimension the orders' loads name; missing: %s", name, strings.Join(missing, ", ")))
	}
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
// what is "time window", "shift" or such. It reports whether they are.
func (v *validation) window(name, what string, start, end *string) bool {
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
		ok = false
	}
	return ok
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
