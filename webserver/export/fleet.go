package export

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"routeopt.io/routeopt/api/v1alpha1"
)

// What the fleet constraints add to an export: the route's start, breaks
// and end as rows of their own (named in an Activity column), each order's
// skills and its loads per named dimension on its stop row, and in the
// summary where each vehicle starts and ends and its load and capacity per
// dimension. Each appears only when the request used the constraint behind
// it, so a request without them exports exactly what it always did.

// rowKind tells a stop row from the route's other rows.
type rowKind int

const (
	rowStop rowKind = iota
	rowStart
	rowBreak
	rowEnd
)

// The Activity column's words. A break reads "Break 30 min, 12:10–12:40"
// (see breakText).
const (
	activityStop    = "Stop"
	activityStart   = "Start"
	activityEnd     = "End"
	activityOpenEnd = "End at the last stop (open route)"
	// openEndPlace is where an open route ends, in the summary.
	openEndPlace = "Last stop (open route)"
)

// amount is a number that may be absent (an order without a load in a
// dimension): its cell stays empty rather than showing a 0 nobody gave.
type amount struct {
	value float64
	set   bool
}

// fleetColumns are the columns and rows the fleet constraints add.
type fleetColumns struct {
	// activity: start, break and end rows, and the Activity column naming
	// every row.
	activity bool
	// places: the summary's Start and End columns.
	places bool
	// skills: the Skills column (the orders' skills).
	skills bool
	// dims are the named load dimensions (as given), the orders' in the
	// order they first name them, then any other the result reports, by
	// name; headers are their cell texts.
	dims    []string
	headers []string
}

// fleetColumnsOf decides the columns from what the request used (and, for
// a document written another way, what the result carries).
func fleetColumnsOf(spec *v1alpha1.OptimizationSpec, res *v1alpha1.Result) fleetColumns {
	var fc fleetColumns
	uses := func(vc *v1alpha1.VehicleConstraints) {
		fc.activity = fc.activity || len(vc.Breaks) > 0
		fc.places = fc.places || vc.Start != nil || vc.End != nil || (vc.OpenEnd != nil && *vc.OpenEnd)
	}
	if spec.Fleet != nil {
		uses(&spec.Fleet.VehicleConstraints)
	}
	for i := range spec.Vehicles {
		uses(&spec.Vehicles[i].VehicleConstraints)
	}
	seen := map[string]bool{}
	addDim := func(name string) {
		if !seen[name] {
			seen[name] = true
			fc.dims = append(fc.dims, name)
		}
	}
	for _, o := range spec.Orders {
		fc.skills = fc.skills || len(o.Skills) > 0
		for _, l := range o.Loads {
			addDim(l.Name)
		}
	}
	others := map[string]bool{}
	for _, r := range res.Routes {
		fc.activity = fc.activity || len(r.Breaks) > 0
		fc.places = fc.places || r.Start != nil || !r.End.IsZero()
		for name := range r.Loads {
			others[name] = true
		}
	}
	for _, v := range res.KPIs.PerVehicle {
		for name := range v.Capacities {
			others[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(others)) {
		addDim(name)
	}
	fc.activity = fc.activity || fc.places
	for _, d := range fc.dims {
		fc.headers = append(fc.headers, cellText(d))
	}
	return fc
}

// vehicleConstraints finds the constraints of a vehicle by its ref: the
// fleet's for every vehicle of a fleet; nil for a vehicle the spec does
// not know.
func vehicleConstraints(spec *v1alpha1.OptimizationSpec) func(ref string) *v1alpha1.VehicleConstraints {
	if spec.Fleet != nil {
		return func(string) *v1alpha1.VehicleConstraints { return &spec.Fleet.VehicleConstraints }
	}
	byID := make(map[string]*v1alpha1.VehicleConstraints, len(spec.Vehicles))
	for i := range spec.Vehicles {
		byID[spec.Vehicles[i].ID] = &spec.Vehicles[i].VehicleConstraints
	}
	return func(ref string) *v1alpha1.VehicleConstraints { return byID[ref] }
}

// orderFields fills a stop row's skills and loads from its order.
func (fc *fleetColumns) orderFields(row *stopRow, o *v1alpha1.Order) {
	if fc.skills {
		row.skills = cellText(strings.Join(o.Skills, ", "))
	}
	if len(fc.dims) == 0 {
		return
	}
	row.loads = make([]amount, len(fc.dims))
	for _, l := range o.Loads {
		if i := slices.Index(fc.dims, l.Name); i >= 0 {
			row.loads[i] = amount{l.Value, true}
		}
	}
}

// amounts lists m's values in the order of fc.dims.
func (fc *fleetColumns) amounts(m map[string]float64) []amount {
	if len(fc.dims) == 0 {
		return nil
	}
	out := make([]amount, len(fc.dims))
	for i, d := range fc.dims {
		if v, ok := m[d]; ok {
			out[i] = amount{v, true}
		}
	}
	return out
}

// addRouteRows sets rp.rows: the stops, and with fleet constraints the
// route's start first, each break after the stop it follows (after_seq;
// 0 before the first stop) and the end last. vc is the vehicle's
// constraints (nil when the spec does not know it); they name the start and
// end by the labels the request gave them.
func (fc *fleetColumns) addRouteRows(rp *routePlan, r v1alpha1.Route, vc *v1alpha1.VehicleConstraints, depot *v1alpha1.Depot) {
	rp.openEnd = r.End.Open
	if !fc.activity {
		rp.rows = rp.stops
		return
	}
	rp.rows = make([]stopRow, 0, len(rp.stops)+len(r.Breaks)+2)
	if r.Start != nil {
		rp.start = startPlace(vc, depot, r.Start)
		rp.rows = append(rp.rows, placeRow(rowStart, activityStart, r.DepartS, rp.start, r.Start))
	}
	breaks := slices.Clone(r.Breaks)
	slices.SortStableFunc(breaks, func(a, b v1alpha1.RouteBreak) int {
		if a.AfterSeq != b.AfterSeq {
			return a.AfterSeq - b.AfterSeq
		}
		return a.StartS - b.StartS
	})
	next := 0
	for _, s := range rp.stops {
		for ; next < len(breaks) && breaks[next].AfterSeq < s.seq; next++ {
			rp.rows = append(rp.rows, breakRow(breaks[next]))
		}
		rp.rows = append(rp.rows, s)
	}
	for _, b := range breaks[next:] {
		rp.rows = append(rp.rows, breakRow(b))
	}
	switch {
	case r.End.Open:
		rp.end = openEndPlace
		rp.rows = append(rp.rows, stopRow{kind: rowEnd, activity: activityOpenEnd, arrivalS: r.ReturnS})
	case r.End.At != nil:
		rp.end = endPlace(vc, depot, r.End.At)
		rp.rows = append(rp.rows, placeRow(rowEnd, activityEnd, r.ReturnS, rp.end, r.End.At))
	}
}

// fillVehicle fills a summary row's start, end, loads and capacities: the
// route's when the vehicle has one, else what the request says of it.
func (fc *fleetColumns) fillVehicle(row *vehicleRow, v v1alpha1.VehicleKPI, r *routePlan, vc *v1alpha1.VehicleConstraints, depot *v1alpha1.Depot) {
	row.loads, row.capacities = fc.amounts(v.Loads), fc.amounts(v.Capacities)
	if !fc.places {
		return
	}
	if r != nil && r.start != "" {
		row.start = r.start
	} else {
		row.start = startPlace(vc, depot, nil)
	}
	switch {
	case r != nil && r.end != "":
		row.end = r.end
	case vc != nil && vc.OpenEnd != nil && *vc.OpenEnd:
		row.end = openEndPlace
	default:
		row.end = endPlace(vc, depot, nil)
	}
}

func placeRow(kind rowKind, activity string, at int, name string, p *v1alpha1.Place) stopRow {
	return stopRow{kind: kind, activity: activity, arrivalS: at, address: name, lat: p.Latitude, lon: p.Longitude, placed: true}
}

func breakRow(b v1alpha1.RouteBreak) stopRow {
	return stopRow{kind: rowBreak, activity: breakText(b), arrivalS: b.StartS}
}

// breakText is a break as a driver reads it: "Break 30 min, 12:10–12:40".
func breakText(b v1alpha1.RouteBreak) string {
	minutes := (max(b.EndS-b.StartS, 0) + 30) / 60
	return fmt.Sprintf("Break %d min, %s–%s", minutes, hhmm(b.StartS), hhmm(b.EndS))
}

// startPlace names where a route starts (cell text): the vehicle's start as
// the request gave it, else the depot; at is the result's place, named by
// its address or coordinates when the spec does not know the vehicle.
func startPlace(vc *v1alpha1.VehicleConstraints, depot *v1alpha1.Depot, at *v1alpha1.Place) string {
	var given *v1alpha1.Location
	if vc != nil {
		given = vc.Start
	}
	return placeName(vc != nil, given, depot, at)
}

// endPlace is startPlace for the end.
func endPlace(vc *v1alpha1.VehicleConstraints, depot *v1alpha1.Depot, at *v1alpha1.Place) string {
	var given *v1alpha1.Location
	if vc != nil {
		given = vc.End
	}
	return placeName(vc != nil, given, depot, at)
}

// placeName is the cell text of a route's start or end: the location the
// request gave, else the depot when the spec knows the vehicle (known) or
// the result has no place, else the result's place.
func placeName(known bool, given *v1alpha1.Location, depot *v1alpha1.Depot, at *v1alpha1.Place) string {
	switch {
	case given != nil:
		return cellText(locationText(given.Label, given.Address, given.Latitude, given.Longitude))
	case known || at == nil:
		return cellText(locationText(depot.Label, depot.Address, depot.Latitude, depot.Longitude))
	}
	return cellText(placeText(at))
}

// locationText names a place given as a request gives it: its label and
// address ("Hub North, Hamburger Straße 1"), either alone, or its
// coordinates when it has neither.
func locationText(label, address *string, lat, lon *float64) string {
	var parts []string
	for _, s := range []*string{label, address} {
		if s != nil && strings.TrimSpace(*s) != "" {
			parts = append(parts, *s)
		}
	}
	if len(parts) == 0 && lat != nil && lon != nil {
		return coordText(*lat, *lon)
	}
	return strings.Join(parts, ", ")
}

func placeText(p *v1alpha1.Place) string {
	if strings.TrimSpace(p.Address) != "" {
		return p.Address
	}
	return coordText(p.Latitude, p.Longitude)
}

func coordText(lat, lon float64) string {
	return strconv.FormatFloat(lat, 'f', -1, 64) + ", " + strconv.FormatFloat(lon, 'f', -1, 64)
}

// load is the row's amount in dimension d (none on rows without an order).
func (s *stopRow) load(d int) amount {
	if d < len(s.loads) {
		return s.loads[d]
	}
	return amount{}
}
