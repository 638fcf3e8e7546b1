package schema

import (
	"slices"
	"strconv"
	"strings"
)

// The fleet constraints of orders and vehicles (docs/API.md, "Fleet
// constraints"): several windows, skills, named load dimensions and
// priorities on orders; skills, capacities, breaks, route limits, start and
// end on vehicles and fleets. All optional: a request without them decodes
// as it did before they existed.

// Bounds of the fleet constraints.
const (
	MaxTimeWindows     = 4
	MaxSkills          = 10
	MaxNameLength      = 40 // a skill or a dimension name
	MaxDimensions      = 4
	MaxBreaks          = 3
	MaxBreakMinutes    = 480
	MaxDurationMinutes = 1440
	MaxDistanceKm      = 10000.0
	MaxStops           = 500
	MaxPriority        = 100
)

var (
	nameRule      = strRule{min: 1, max: MaxNameLength}
	distanceRange = fRange{min: 0, exclMin: true, max: MaxDistanceKm}
)

const msgDictType = "Input should be a valid dictionary"

// orderConstraints reads an order's fleet constraints into o, after its
// other fields, in declaration order.
func (e *errs) orderConstraints(loc []any, f *fields, o *OrderIn) {
	if raw, ok := f.take("time_windows"); ok && raw != nil {
		o.TimeWindows, _ = e.timeWindows(at(loc, "time_windows"), raw)
	}
	if raw, ok := f.take("skills"); ok && raw != nil {
		o.Skills, _ = e.skills(at(loc, "skills"), raw)
	}
	if raw, ok := f.take("loads"); ok && raw != nil {
		o.Loads, _ = e.dimensions(at(loc, "loads"), raw, quantityRange)
	}
	if raw, ok := f.take("priority"); ok {
		o.Priority, _ = e.intField(at(loc, "priority"), raw, 0, MaxPriority)
	}
}

// vehicleConstraints reads the constraints a vehicle and a fleet share into
// c, after their other fields, in declaration order.
func (e *errs) vehicleConstraints(loc []any, f *fields, c *VehicleConstraintsIn) {
	if raw, ok := f.take("skills"); ok && raw != nil {
		c.Skills, _ = e.skills(at(loc, "skills"), raw)
	}
	if raw, ok := f.take("capacities"); ok && raw != nil {
		c.Capacities, _ = e.dimensions(at(loc, "capacities"), raw, capacityRange)
	}
	if raw, ok := f.take("breaks"); ok && raw != nil {
		c.Breaks, _ = e.breaks(at(loc, "breaks"), raw)
	}
	if raw, ok := f.take("max_duration_minutes"); ok && raw != nil {
		if n, ok := e.intField(at(loc, "max_duration_minutes"), raw, 1, MaxDurationMinutes); ok {
			c.MaxDurationMinutes = &n
		}
	}
	if raw, ok := f.take("max_distance_km"); ok {
		c.MaxDistanceKm, _ = e.optFloat(at(loc, "max_distance_km"), raw, distanceRange)
	}
	if raw, ok := f.take("max_stops"); ok && raw != nil {
		if n, ok := e.intField(at(loc, "max_stops"), raw, 1, MaxStops); ok {
			c.MaxStops = &n
		}
	}
	for _, end := range []struct {
		name string
		dst  **DepotIn
	}{{"start", &c.Start}, {"end", &c.End}} {
		if raw, ok := f.take(end.name); ok && raw != nil {
			if d, ok := e.location(at(loc, end.name), raw, end.name); ok {
				*end.dst = &d
			}
		}
	}
	if raw, ok := f.take("open_end"); ok {
		c.OpenEnd, _ = e.boolField(at(loc, "open_end"), raw)
	}
}

// shiftProblem is the model rule of a vehicle or a fleet: the shift in
// order, the breaks inside it, end not with open_end; "" when it holds.
func shiftProblem(shiftStart, shiftEnd string, c *VehicleConstraintsIn) string {
	if shiftStart > shiftEnd {
		return "shift_start must not be after shift_end"
	}
	for _, b := range c.Breaks {
		if b.Start < shiftStart || b.End > shiftEnd {
			return "each break must lie inside the shift " + shiftStart + "-" + shiftEnd + "; " + b.Start + "-" + b.End + " does not"
		}
	}
	if c.End != nil && c.OpenEnd {
		return "give either end or open_end, not both"
	}
	return ""
}

// timeWindows reads 1 to MaxTimeWindows windows, then (a field validator,
// run only when every window is valid) checks that each starts after the
// previous one ends.
func (e *errs) timeWindows(loc []any, in any) ([]TimeWindowIn, bool) {
	items, ok := e.list(loc, in, 1, MaxTimeWindows)
	if !ok {
		return nil, false
	}
	start := e.n()
	out := make([]TimeWindowIn, len(items))
	for i, it := range items {
		out[i], _ = e.timeWindow(at(loc, i), it)
	}
	if e.n() > start {
		return nil, false
	}
	for i := 1; i < len(out); i++ {
		if out[i].Start <= out[i-1].End {
			e.valueError(loc, "each time window must start after the previous one ends; "+out[i].Start+"-"+out[i].End+" does not", in)
			return nil, false
		}
	}
	return out, true
}

func (e *errs) timeWindow(loc []any, in any) (TimeWindowIn, bool) {
	var w TimeWindowIn
	f, ok := e.model(loc, in)
	if !ok {
		return w, false
	}
	start := e.n()
	e.clock(loc, f, "start", &w.Start)
	e.clock(loc, f, "end", &w.End)
	e.extras(loc, f)
	if e.n() > start {
		return w, false
	}
	if w.Start > w.End {
		e.valueError(loc, "start must not be after end", in)
		return w, false
	}
	return w, true
}

// clock reads a required HH:MM field.
func (e *errs) clock(loc []any, f *fields, name string, dst *string) {
	if raw, ok := f.take(name); ok {
		*dst, _ = e.str(at(loc, name), raw, strRule{hhmm: true})
	} else {
		e.missing(loc, name, f)
	}
}

// skills reads 0 to MaxSkills names.
func (e *errs) skills(loc []any, in any) ([]string, bool) {
	items, ok := e.list(loc, in, 0, MaxSkills)
	if !ok {
		return nil, false
	}
	start := e.n()
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = e.str(at(loc, i), it, nameRule)
	}
	return out, e.n() == start
}

// dimensions reads an object of 1 to MaxDimensions named amounts, as
// pydantic validates a dict with constrained keys and values: key errors at
// [..., key, "[key]"], value errors at [..., key], and the size checked only
// when every item is valid.
func (e *errs) dimensions(loc []any, in any, r fRange) (map[string]float64, bool) {
	obj, ok := in.(*pyObject)
	if !ok {
		e.add(loc, "dict_type", msgDictType, in, nil)
		return nil, false
	}
	start := e.n()
	out := make(map[string]float64, len(obj.keys))
	for _, k := range obj.keys {
		kloc := at(loc, k)
		_, keyOK := e.str(at(kloc, "[key]"), k, nameRule)
		v, valueOK := e.float(kloc, obj.vals[k], r)
		if keyOK && valueOK {
			out[k] = v
		}
	}
	if e.n() > start {
		return nil, false
	}
	n := len(out)
	switch {
	case n > MaxDimensions:
		e.add(loc, "too_long", "Dictionary should have at most "+strconv.Itoa(MaxDimensions)+" items after validation, not "+strconv.Itoa(n), in,
			map[string]any{"field_type": "Dictionary", "max_length": MaxDimensions, "actual_length": n})
		return nil, false
	case n < 1:
		e.add(loc, "too_short", "Dictionary should have at least 1 item after validation, not 0", in,
			map[string]any{"field_type": "Dictionary", "min_length": 1, "actual_length": 0})
		return nil, false
	}
	return out, true
}

// breaks reads 0 to MaxBreaks breaks, then (a field validator) checks that
// each starts and ends no earlier than the one before: they are taken in
// the listed order.
func (e *errs) breaks(loc []any, in any) ([]BreakIn, bool) {
	items, ok := e.list(loc, in, 0, MaxBreaks)
	if !ok {
		return nil, false
	}
	start := e.n()
	out := make([]BreakIn, len(items))
	for i, it := range items {
		out[i], _ = e.brk(at(loc, i), it)
	}
	if e.n() > start {
		return nil, false
	}
	for i := 1; i < len(out); i++ {
		if out[i].Start < out[i-1].Start || out[i].End < out[i-1].End {
			e.valueError(loc, "breaks are taken in the listed order: each must start and end no earlier than the one before; "+out[i].Start+"-"+out[i].End+" does not", in)
			return nil, false
		}
	}
	return out, true
}

func (e *errs) brk(loc []any, in any) (BreakIn, bool) {
	var b BreakIn
	f, ok := e.model(loc, in)
	if !ok {
		return b, false
	}
	start := e.n()
	e.clock(loc, f, "start", &b.Start)
	e.clock(loc, f, "end", &b.End)
	if raw, ok := f.take("minutes"); ok {
		b.Minutes, _ = e.intField(at(loc, "minutes"), raw, 1, MaxBreakMinutes)
	} else {
		e.missing(loc, "minutes", f)
	}
	e.extras(loc, f)
	if e.n() > start {
		return b, false
	}
	if clockMinutes(b.Start)+b.Minutes > clockMinutes(b.End) {
		e.valueError(loc, "a break of "+strconv.Itoa(b.Minutes)+" minutes does not fit between "+b.Start+" and "+b.End, in)
		return b, false
	}
	return b, true
}

// clockMinutes is the minute of the day of a valid HH:MM.
func clockMinutes(hhmm string) int {
	h, _ := strconv.Atoi(hhmm[:2])
	m, _ := strconv.Atoi(hhmm[3:])
	return h*60 + m
}

// capacitiesCoverLoads is the request's model rule on load dimensions:
// every vehicle, or the fleet, gives a capacity in each dimension any
// order's loads name. It reports each vehicle lacking one, at the vehicle.
func (e *errs) capacitiesCoverLoads(loc []any, o *OptimizationIn, in any) bool {
	var names []string
	for _, ord := range o.Orders {
		for name := range ord.Loads {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return true
	}
	slices.Sort(names)
	req := in.(*pyObject)
	check := func(where []any, c *VehicleConstraintsIn, input any) {
		var missing []string
		for _, name := range names {
			if _, ok := c.Capacities[name]; !ok {
				missing = append(missing, strconv.Quote(name))
			}
		}
		if len(missing) > 0 {
			e.valueError(where, "capacities must give every dimension the orders' loads name; missing: "+strings.Join(missing, ", "), input)
		}
	}
	start := e.n()
	if o.Fleet != nil {
		check(at(loc, "fleet"), &o.Fleet.VehicleConstraintsIn, req.vals["fleet"])
	}
	for i := range o.Vehicles {
		check(at(at(loc, "vehicles"), i), &o.Vehicles[i].VehicleConstraintsIn, req.vals["vehicles"].([]any)[i])
	}
	return e.n() == start
}
