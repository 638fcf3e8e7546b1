package schema

import (
	"strconv"
	"strings"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Bounds of a request (docs/API.md, the tables of "Creating an optimization").
const (
	MaxOrders   = 500
	MaxVehicles = 100
	MaxFleet    = 100
	MaxQuantity = 1000000.0 // capacity, demand, fixed cost
)

var (
	latRange      = fRange{min: -90, max: 90}
	lonRange      = fRange{min: -180, max: 180}
	quantityRange = fRange{min: 0, max: MaxQuantity}
	capacityRange = fRange{min: 0, exclMin: true, max: MaxQuantity}
	serviceRange  = fRange{min: 0, max: 1440}
)

// DecodeOptimizationIn decodes and validates the body of
// POST /v1/optimizations. It returns the value, or every error found.
func DecodeOptimizationIn(body []byte) (*OptimizationIn, []Detail) {
	in, d := parseBody(body, false)
	if d != nil {
		return nil, d
	}
	e := &errs{}
	out, ok := e.optimizationIn([]any{"body"}, in)
	if !ok || e.n() > 0 {
		return nil, e.details
	}
	return out, nil
}

// DecodeExportIn decodes and validates the optional body of
// POST /v1/optimizations/{id}/exports. An empty body, null or {} give the
// defaults.
func DecodeExportIn(body []byte) (*ExportIn, []Detail) {
	in, d := parseBody(body, true)
	if d != nil {
		return nil, d
	}
	out := &ExportIn{Format: DefaultExportFormat, IncludeDriverInstructions: true}
	if in == nil {
		return out, nil
	}
	e := &errs{}
	loc := []any{"body"}
	f, ok := e.model(loc, in)
	if !ok {
		return nil, e.details
	}
	if raw, ok := f.take("format"); ok {
		out.Format, _ = e.literal(at(loc, "format"), raw, ExportFormats...)
	}
	if raw, ok := f.take("include_driver_instructions"); ok {
		out.IncludeDriverInstructions, _ = e.boolField(at(loc, "include_driver_instructions"), raw)
	}
	e.extras(loc, f)
	if e.n() > 0 {
		return nil, e.details
	}
	return out, nil
}

// DecodeWebhookIn decodes and validates the body of POST /v1/webhooks: url is
// a required string of at most 500 characters. Whether it is a public https
// URL is checked elsewhere.
func DecodeWebhookIn(body []byte) (*WebhookIn, []Detail) {
	in, d := parseBody(body, false)
	if d != nil {
		return nil, d
	}
	e := &errs{}
	loc := []any{"body"}
	f, ok := e.model(loc, in)
	if !ok {
		return nil, e.details
	}
	out := &WebhookIn{}
	if raw, ok := f.take("url"); ok {
		out.URL, _ = e.str(at(loc, "url"), raw, strRule{max: 500})
	} else {
		e.missing(loc, "url", f)
	}
	e.extras(loc, f)
	if e.n() > 0 {
		return nil, e.details
	}
	return out, nil
}

// parseBody turns the raw body into a Python value as FastAPI does. An empty
// body and a JSON null mean "no body": the result is (nil, nil) when the body
// is optional, a missing error at ["body"] otherwise. Invalid JSON gives one
// json_invalid detail.
func parseBody(body []byte, optional bool) (any, []Detail) {
	var v any
	if len(body) > 0 {
		var err *jsonError
		if v, err = loadsJSON(body); err != nil {
			return nil, []Detail{{
				Loc:   []any{"body", err.pos},
				Msg:   msgJSONInvalid,
				Type:  "json_invalid",
				Input: map[string]any{},
				Ctx:   map[string]any{"error": err.msg},
			}}
		}
	}
	if v == nil && !optional {
		return nil, []Detail{{Loc: []any{"body"}, Msg: msgMissing, Type: "missing", Input: nil}}
	}
	return v, nil
}

// fields reads a model's input dict, remembering which keys were used.
type fields struct {
	obj  *pyObject
	used map[string]bool
}

func (f *fields) take(name string) (any, bool) {
	v, ok := f.obj.vals[name]
	if ok {
		f.used[name] = true
	}
	return v, ok
}

// model accepts a dict for a model; anything else is model_attributes_type,
// which is what FastAPI (validate_python with from_attributes=True) reports.
func (e *errs) model(loc []any, in any) (*fields, bool) {
	obj, ok := in.(*pyObject)
	if !ok {
		e.add(loc, "model_attributes_type", msgModelAttrs, in, nil)
		return nil, false
	}
	return &fields{obj: obj, used: map[string]bool{}}, true
}

func (e *errs) missing(loc []any, name string, f *fields) {
	e.add(at(loc, name), "missing", msgMissing, f.obj, nil)
}

// extras reports the keys no field used (extra="forbid"), in input order,
// after the field errors, as pydantic does.
func (e *errs) extras(loc []any, f *fields) {
	for _, k := range f.obj.keys {
		if !f.used[k] {
			e.add(at(loc, k), "extra_forbidden", msgExtra, f.obj.vals[k], nil)
		}
	}
}

// list accepts a list of min..max items. Past max only too_long is reported:
// pydantic stops there and drops the item errors.
func (e *errs) list(loc []any, in any, min, max int) ([]any, bool) {
	l, ok := in.([]any)
	switch {
	case !ok:
		e.add(loc, "list_type", msgListType, in, nil)
		return nil, false
	case len(l) > max:
		e.add(loc, "too_long", "List should have at most "+strconv.Itoa(max)+" item"+plural(max)+" after validation, not "+strconv.Itoa(len(l)), in,
			map[string]any{"field_type": "List", "max_length": max, "actual_length": len(l)})
		return nil, false
	case len(l) < min: // only reached with no items, so no item errors either
		e.add(loc, "too_short", "List should have at least "+strconv.Itoa(min)+" item"+plural(min)+" after validation, not "+strconv.Itoa(len(l)), in,
			map[string]any{"field_type": "List", "min_length": min, "actual_length": len(l)})
		return nil, false
	}
	return l, true
}

func (e *errs) optimizationIn(loc []any, in any) (*OptimizationIn, bool) {
	f, ok := e.model(loc, in)
	if !ok {
		return nil, false
	}
	start := e.n()
	o := &OptimizationIn{}
	if raw, ok := f.take("name"); ok {
		o.Name, _ = e.optStr(at(loc, "name"), raw, strRule{max: 120})
	}
	if raw, ok := f.take("depot"); ok {
		o.Depot, _ = e.location(at(loc, "depot"), raw, "depot")
	} else {
		e.missing(loc, "depot", f)
	}
	if raw, ok := f.take("orders"); ok {
		o.Orders, _ = e.orders(at(loc, "orders"), raw)
	} else {
		e.missing(loc, "orders", f)
	}
	if raw, ok := f.take("vehicles"); ok && raw != nil {
		o.Vehicles, _ = e.vehicles(at(loc, "vehicles"), raw)
	}
	if raw, ok := f.take("fleet"); ok && raw != nil {
		if fl, ok := e.fleet(at(loc, "fleet"), raw); ok {
			o.Fleet = &fl
		}
	}
	o.Options = OptionsIn{Strategy: DefaultStrategy, Objective: DefaultObjective}
	if raw, ok := f.take("options"); ok {
		o.Options, _ = e.options(at(loc, "options"), raw)
	}
	e.extras(loc, f)
	if e.n() > start {
		return nil, false
	}
	// Model validator (runs only when every field is valid).
	switch hasV, hasF := o.Vehicles != nil, o.Fleet != nil; {
	case hasV && hasF:
		e.valueError(loc, "give either vehicles or fleet, not both", in)
		return nil, false
	case !hasV && !hasF:
		e.valueError(loc, "either vehicles or fleet is required", in)
		return nil, false
	}
	if !e.capacitiesCoverLoads(loc, o, in) {
		return nil, false
	}
	return o, true
}

// location reads a place in DepotIn's shape: the depot, or a vehicle's start
// or end (what names it in the message of the location rule).
func (e *errs) location(loc []any, in any, what string) (DepotIn, bool) {
	var d DepotIn
	f, ok := e.model(loc, in)
	if !ok {
		return d, false
	}
	start := e.n()
	if raw, ok := f.take("label"); ok {
		d.Label, _ = e.optStr(at(loc, "label"), raw, strRule{max: 120})
	}
	if raw, ok := f.take("address"); ok {
		d.Address, _ = e.optStr(at(loc, "address"), raw, strRule{min: 5, max: 300})
	}
	if raw, ok := f.take("latitude"); ok {
		d.Latitude, _ = e.optFloat(at(loc, "latitude"), raw, latRange)
	}
	if raw, ok := f.take("longitude"); ok {
		d.Longitude, _ = e.optFloat(at(loc, "longitude"), raw, lonRange)
	}
	e.extras(loc, f)
	if e.n() > start {
		return d, false
	}
	if msg := locationProblem(what, d.Address, d.Latitude, d.Longitude); msg != "" {
		e.valueError(loc, msg, in)
		return d, false
	}
	return d, true
}

// locationProblem words v1alpha1.CheckLocation's verdict on the location of
// a depot, an order or a vehicle's start or end; "" when it has one.
func locationProblem(what string, address *string, lat, lon *float64) string {
	switch v1alpha1.CheckLocation(address, lat, lon) {
	case v1alpha1.LocationUnpaired:
		return "latitude and longitude must be given together"
	case v1alpha1.LocationMissing:
		return what + " needs an address or both latitude and longitude"
	}
	return ""
}

func (e *errs) orders(loc []any, in any) ([]OrderIn, bool) {
	return uniqueItems(e, loc, in, MaxOrders, e.order, func(o OrderIn) string { return o.ID }, "order")
}

// uniqueItems validates a list of 1..max models with decode, then (a field
// validator, run only when every item is valid) that their ids are unique.
func uniqueItems[T any](e *errs, loc []any, in any, max int, decode func([]any, any) (T, bool), id func(T) string, what string) ([]T, bool) {
	items, ok := e.list(loc, in, 1, max)
	if !ok {
		return nil, false
	}
	start := e.n()
	out := make([]T, len(items))
	for i, it := range items {
		out[i], _ = decode(at(loc, i), it)
	}
	if e.n() > start {
		return nil, false
	}
	ids := make([]string, len(out))
	for i := range out {
		ids[i] = id(out[i])
	}
	if dups := duplicates(ids); dups != "" {
		e.valueError(loc, what+" ids must be unique; duplicated: "+dups, in)
		return nil, false
	}
	return out, true
}

func (e *errs) order(loc []any, in any) (OrderIn, bool) {
	o := OrderIn{Demand: DefaultDemand, ServiceMinutes: DefaultServiceMinutes}
	f, ok := e.model(loc, in)
	if !ok {
		return o, false
	}
	start := e.n()
	if raw, ok := f.take("id"); ok {
		o.ID, _ = e.str(at(loc, "id"), raw, strRule{min: 1, max: 80})
	} else {
		e.missing(loc, "id", f)
	}
	e.optText(loc, f, "address", &o.Address, 300)
	e.optText(loc, f, "city", &o.City, 100)
	e.optText(loc, f, "region", &o.Region, 100)
	e.optText(loc, f, "postal_code", &o.PostalCode, 20)
	e.optText(loc, f, "country", &o.Country, 60)
	if raw, ok := f.take("latitude"); ok {
		o.Latitude, _ = e.optFloat(at(loc, "latitude"), raw, latRange)
	}
	if raw, ok := f.take("longitude"); ok {
		o.Longitude, _ = e.optFloat(at(loc, "longitude"), raw, lonRange)
	}
	if raw, ok := f.take("demand"); ok {
		o.Demand, _ = e.float(at(loc, "demand"), raw, quantityRange)
	}
	if raw, ok := f.take("service_minutes"); ok {
		o.ServiceMinutes, _ = e.float(at(loc, "service_minutes"), raw, serviceRange)
	}
	if raw, ok := f.take("time_window_start"); ok {
		o.TimeWindowStart, _ = e.optStr(at(loc, "time_window_start"), raw, strRule{hhmm: true})
	}
	if raw, ok := f.take("time_window_end"); ok {
		o.TimeWindowEnd, _ = e.optStr(at(loc, "time_window_end"), raw, strRule{hhmm: true})
	}
	e.optText(loc, f, "customer", &o.Customer, 200)
	e.optText(loc, f, "phone", &o.Phone, 40)
	e.optText(loc, f, "notes", &o.Notes, 500)
	e.orderConstraints(loc, f, &o)
	e.extras(loc, f)
	if e.n() > start {
		return o, false
	}
	msg := locationProblem("order", o.Address, o.Latitude, o.Longitude)
	if msg == "" && o.TimeWindowStart != nil && o.TimeWindowEnd != nil && *o.TimeWindowStart > *o.TimeWindowEnd {
		msg = "time_window_start must not be after time_window_end"
	}
	if msg == "" && o.TimeWindows != nil && (o.TimeWindowStart != nil || o.TimeWindowEnd != nil) {
		msg = "give either time_windows or time_window_start and time_window_end, not both"
	}
	if msg != "" {
		e.valueError(loc, msg, in)
		return o, false
	}
	return o, true
}

func (e *errs) vehicles(loc []any, in any) ([]VehicleIn, bool) {
	return uniqueItems(e, loc, in, MaxVehicles, e.vehicle, func(v VehicleIn) string { return v.ID }, "vehicle")
}

func (e *errs) vehicle(loc []any, in any) (VehicleIn, bool) {
	v := VehicleIn{ShiftStart: DefaultShiftStart, ShiftEnd: DefaultShiftEnd}
	f, ok := e.model(loc, in)
	if !ok {
		return v, false
	}
	start := e.n()
	if raw, ok := f.take("id"); ok {
		v.ID, _ = e.str(at(loc, "id"), raw, strRule{min: 1, max: 80})
	} else {
		e.missing(loc, "id", f)
	}
	if raw, ok := f.take("capacity"); ok {
		v.Capacity, _ = e.float(at(loc, "capacity"), raw, capacityRange)
	} else {
		e.missing(loc, "capacity", f)
	}
	if raw, ok := f.take("driver"); ok {
		v.Driver, _ = e.optStr(at(loc, "driver"), raw, strRule{max: 120})
	}
	e.shifts(loc, f, &v.ShiftStart, &v.ShiftEnd)
	if raw, ok := f.take("fixed_cost"); ok {
		v.FixedCost, _ = e.float(at(loc, "fixed_cost"), raw, quantityRange)
	}
	e.vehicleConstraints(loc, f, &v.VehicleConstraintsIn)
	e.extras(loc, f)
	if e.n() > start {
		return v, false
	}
	if msg := shiftProblem(v.ShiftStart, v.ShiftEnd, &v.VehicleConstraintsIn); msg != "" {
		e.valueError(loc, msg, in)
		return v, false
	}
	return v, true
}

// optText reads an optional `str | None` field of at most max characters.
func (e *errs) optText(loc []any, f *fields, name string, dst **string, max int) {
	if raw, ok := f.take(name); ok {
		*dst, _ = e.optStr(at(loc, name), raw, strRule{max: max})
	}
}

// shifts reads shift_start and shift_end (HH:MM strings with defaults).
func (e *errs) shifts(loc []any, f *fields, startDst, endDst *string) {
	if raw, ok := f.take("shift_start"); ok {
		*startDst, _ = e.str(at(loc, "shift_start"), raw, strRule{hhmm: true})
	}
	if raw, ok := f.take("shift_end"); ok {
		*endDst, _ = e.str(at(loc, "shift_end"), raw, strRule{hhmm: true})
	}
}

func (e *errs) fleet(loc []any, in any) (FleetIn, bool) {
	fl := FleetIn{ShiftStart: DefaultShiftStart, ShiftEnd: DefaultShiftEnd, NamePrefix: DefaultNamePrefix}
	f, ok := e.model(loc, in)
	if !ok {
		return fl, false
	}
	start := e.n()
	if raw, ok := f.take("count"); ok {
		fl.Count, _ = e.intField(at(loc, "count"), raw, 1, MaxFleet)
	} else {
		e.missing(loc, "count", f)
	}
	if raw, ok := f.take("capacity"); ok {
		fl.Capacity, _ = e.float(at(loc, "capacity"), raw, capacityRange)
	} else {
		e.missing(loc, "capacity", f)
	}
	e.shifts(loc, f, &fl.ShiftStart, &fl.ShiftEnd)
	if raw, ok := f.take("fixed_cost"); ok {
		fl.FixedCost, _ = e.float(at(loc, "fixed_cost"), raw, quantityRange)
	}
	if raw, ok := f.take("name_prefix"); ok {
		fl.NamePrefix, _ = e.str(at(loc, "name_prefix"), raw, strRule{min: 1, max: 40})
	}
	e.vehicleConstraints(loc, f, &fl.VehicleConstraintsIn)
	e.extras(loc, f)
	if e.n() > start {
		return fl, false
	}
	if msg := shiftProblem(fl.ShiftStart, fl.ShiftEnd, &fl.VehicleConstraintsIn); msg != "" {
		e.valueError(loc, msg, in)
		return fl, false
	}
	return fl, true
}

func (e *errs) options(loc []any, in any) (OptionsIn, bool) {
	o := OptionsIn{Strategy: DefaultStrategy, Objective: DefaultObjective}
	f, ok := e.model(loc, in)
	if !ok {
		return o, false
	}
	start := e.n()
	if raw, ok := f.take("strategy"); ok {
		o.Strategy, _ = e.literal(at(loc, "strategy"), raw, "optimized", "baseline")
	}
	if raw, ok := f.take("objective"); ok {
		o.Objective, _ = e.literal(at(loc, "objective"), raw, "distance", "duration")
	}
	if raw, ok := f.take("solver_seconds"); ok && raw != nil {
		if n, ok := e.intField(at(loc, "solver_seconds"), raw, 1, 60); ok {
			o.SolverSeconds = &n
		}
	}
	e.extras(loc, f)
	return o, e.n() == start
}

// duplicates lists, quoted and in first-seen order, the ids that occur more
// than once; "" when all are unique.
func duplicates(ids []string) string {
	seen := make(map[string]int, len(ids))
	var dups []string
	for _, id := range ids {
		seen[id]++
		if seen[id] == 2 {
			dups = append(dups, strconv.Quote(id))
		}
	}
	return strings.Join(dups, ", ")
}
