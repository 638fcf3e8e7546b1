package export

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
)

// plan is what both formats render, every text already made safe for a
// cell (see cellText): the result's own fields, joined with what only the
// spec holds (see buildPlan).
type plan struct {
	title    string // the optimization's name, or "Routes"
	strategy string
	created  time.Time
	depot    string
	kpis     v1alpha1.KPIs

	routes     []routePlan
	vehicles   []vehicleRow // kpis.per_vehicle, every vehicle in request order
	unassigned []unassignedRow
	paperSize  int // excelize paper size index: 1 Letter, 9 A4

	// fleet says which columns the fleet constraints add: none for a
	// request without them, whose files stay what they always were.
	fleet fleetColumns
}

type routePlan struct {
	vehicleRef string // raw, for the sheet name
	vehicle    string // cell text
	driver     string // cell text, "" when the route has no driver
	departS    int
	returnS    int
	distanceM  int64
	load       float64
	capacity   float64
	stops      []stopRow // in driving order
	// rows are the stops with the route's start, breaks and end between
	// them, as the sheet lists them; the stops alone without fleet
	// constraints.
	rows []stopRow
	// openEnd: the route ends at its last stop (returnS is its departure).
	openEnd bool
	// start and end name where the route starts and ends (cell text), for
	// the summary; "" when the request gave no start or end.
	start, end string
}

// A stopRow is a stop, or with fleet constraints also the route's start,
// a break or its end (kind), named in the Activity column.
type stopRow struct {
	kind     rowKind
	activity string // cell text of the Activity column
	// seq is the stop's; 0 on the other rows.
	seq int
	// arrivalS is the planned time of the row: the stop's arrival, the
	// departure from the start, the start of a break, the arrival at the end.
	arrivalS       int
	window         string
	orderRef       string
	customer       string
	address        string
	phone          string
	notes          string
	serviceMinutes float64
	lat, lon       float64
	placed         bool     // lat and lon are known: not on a break or an open route's end
	skills         string   // the order's skills, cell text
	loads          []amount // the order's loads, per plan.fleet.dims
}

type vehicleRow struct {
	vehicle   string
	driver    string
	used      bool // has a route: departure and return are known
	departS   int
	returnS   int
	stops     int
	distanceM int64
	load      float64
	capacity  float64
	// start and end name where the vehicle starts and ends; loads and
	// capacities are per plan.fleet.dims (fleet constraints only).
	start, end string
	loads      []amount
	capacities []amount
}

type unassignedRow struct {
	orderRef, reason, message string
}

// defaultServiceMinutes is the service time of an order without
// serviceMinutes.
const defaultServiceMinutes = v1alpha1.DefaultServiceMinutes

// buildPlan reads every field the result carries from the result: the
// strategy, KPIs, routes and their drivers, and each stop's address,
// coordinates, times, customer and time window. Only what the result does
// not carry comes from opt: the title, the depot, the creation time, the
// paper size (the orders' countries), each stop's phone, notes and service
// minutes (joined by order id), and the drivers of unused vehicles.
func buildPlan(opt *v1alpha1.Optimization, res *v1alpha1.Result) *plan {
	spec := &opt.Spec
	p := &plan{
		title:     "Routes",
		strategy:  string(res.Strategy),
		created:   opt.CreationTimestamp.UTC(),
		depot:     cellText(depotText(&spec.Depot)),
		kpis:      res.KPIs,
		paperSize: paperSize(spec.Orders),
	}
	if spec.Name != nil && strings.TrimSpace(*spec.Name) != "" {
		p.title = cellText(*spec.Name)
	}

	p.fleet = fleetColumnsOf(spec, res)
	vehicleOf := vehicleConstraints(spec)

	orders := make(map[string]*v1alpha1.Order, len(spec.Orders))
	for i := range spec.Orders {
		orders[spec.Orders[i].ID] = &spec.Orders[i]
	}
	drivers := make(map[string]string, len(spec.Vehicles))
	for _, v := range spec.Vehicles {
		if v.Driver != nil {
			drivers[v.ID] = *v.Driver
		}
	}

	routeByVehicle := make(map[string]*routePlan, len(res.Routes))
	p.routes = make([]routePlan, 0, len(res.Routes))
	for _, r := range res.Routes {
		rp := routePlan{
			vehicleRef: r.VehicleRef,
			vehicle:    cellText(r.VehicleRef),
			departS:    r.DepartS,
			returnS:    r.ReturnS,
			distanceM:  r.DistanceM,
			load:       r.Load,
			capacity:   r.Capacity,
			stops:      make([]stopRow, 0, len(r.Stops)),
		}
		if r.DriverName != nil {
			rp.driver = cellText(*r.DriverName)
		}
		stops := slices.Clone(r.Stops)
		// The result is in driving order already; sorting by seq (stable)
		// only guards against a document written by hand.
		slices.SortStableFunc(stops, func(a, b v1alpha1.Stop) int { return a.Seq - b.Seq })
		for _, s := range stops {
			rp.stops = append(rp.stops, p.fleet.stopFor(s, orders[s.OrderRef]))
		}
		p.fleet.addRouteRows(&rp, r, vehicleOf(r.VehicleRef), &spec.Depot)
		p.routes = append(p.routes, rp)
	}
	for i := range p.routes {
		if _, dup := routeByVehicle[p.routes[i].vehicleRef]; !dup {
			routeByVehicle[p.routes[i].vehicleRef] = &p.routes[i]
		}
	}

	for _, v := range res.KPIs.PerVehicle {
		row := vehicleRow{
			vehicle:   cellText(v.VehicleRef),
			stops:     v.Stops,
			distanceM: v.DistanceM,
			load:      v.Load,
			capacity:  v.Capacity,
		}
		if r, ok := routeByVehicle[v.VehicleRef]; ok {
			row.driver, row.used, row.departS, row.returnS = r.driver, true, r.departS, r.returnS
		} else if d, ok := drivers[v.VehicleRef]; ok {
			row.driver = cellText(d)
		}
		p.fleet.fillVehicle(&row, v, routeByVehicle[v.VehicleRef], vehicleOf(v.VehicleRef), &spec.Depot)
		p.vehicles = append(p.vehicles, row)
	}

	for _, u := range res.Unassigned {
		p.unassigned = append(p.unassigned, unassignedRow{
			orderRef: cellText(u.OrderRef),
			reason:   cellText(u.Reason),
			message:  cellText(u.Message),
		})
	}
	return p
}

// stopFor is the row of stop s, whose order is o (nil when the spec does
// not know it). The phone and notes are not in the result, and its service
// time only in whole seconds (departure less start), so they come from o,
// as do its skills and loads when the request used them.
func (fc *fleetColumns) stopFor(s v1alpha1.Stop, o *v1alpha1.Order) stopRow {
	row := stopRow{
		kind:           rowStop,
		activity:       activityStop,
		seq:            s.Seq,
		arrivalS:       s.ArrivalS,
		window:         windowText(s.TimeWindowStart, s.TimeWindowEnd),
		orderRef:       cellText(s.OrderRef),
		customer:       cellText(deref(s.Customer)),
		address:        cellText(s.Address),
		lat:            s.Latitude,
		lon:            s.Longitude,
		placed:         true,
		serviceMinutes: defaultServiceMinutes,
	}
	if o == nil {
		// An order the spec does not know (not expected): the service time is
		// what the result planned.
		row.serviceMinutes = math.Max(0, float64(s.DepartS-s.StartS)/60)
		return row
	}
	row.phone = deref(o.Phone) // neutralised by each format: see phoneText
	row.notes = cellText(deref(o.Notes))
	if o.ServiceMinutes != nil {
		row.serviceMinutes = *o.ServiceMinutes
	}
	fc.orderFields(&row, o)
	return row
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// windowText writes a time window as a driver reads it: "09:00-11:00",
// "from 09:00", "until 11:00", or "" when the stop has none.
func windowText(start, end *string) string {
	s, e := strings.TrimSpace(deref(start)), strings.TrimSpace(deref(end))
	switch {
	case s != "" && e != "":
		return s + "-" + e
	case s != "":
		return "from " + s
	case e != "":
		return "until " + e
	default:
		return ""
	}
}

func depotText(d *v1alpha1.Depot) string {
	switch {
	case d.Label != nil && strings.TrimSpace(*d.Label) != "":
		return *d.Label
	case d.Address != nil && strings.TrimSpace(*d.Address) != "":
		return *d.Address
	case d.Latitude != nil && d.Longitude != nil:
		return strconv.FormatFloat(*d.Latitude, 'f', -1, 64) + ", " + strconv.FormatFloat(*d.Longitude, 'f', -1, 64)
	default:
		return ""
	}
}

// hhmm writes seconds since the depot's local midnight as HH:MM. A time past
// midnight keeps counting hours ("25:30"), as the workbook's [h]:mm format
// shows it; seconds are dropped, as a spreadsheet's hh:mm display drops them.
func hhmm(s int) string {
	if s < 0 {
		s = 0
	}
	return fmt.Sprintf("%02d:%02d", s/3600, s%3600/60)
}

// neutralisedLeads are the first characters that make a spreadsheet treat a
// cell as a formula (OWASP, CSV injection).
const neutralisedLeads = "=+-@\t\r"

// cellText makes customer-supplied text safe for a cell. Text that begins
// with = + - @ tab or CR gets a leading single quote, as OWASP recommends
// against formula (CSV) injection; line breaks are normalised to LF (a CR
// alone or CRLF), because encoding/csv cannot round-trip CRLF inside a field
// and a lone CR shows as a stray glyph. Nothing else is changed: quotes,
// commas, right-to-left text, emoji and combining characters stay as given.
func cellText(s string) string {
	neutralise := s != "" && strings.IndexByte(neutralisedLeads, s[0]) >= 0
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	if neutralise {
		return "'" + s
	}
	return s
}

// phoneText is a phone number for a cell of format f. A number made only
// of phone characters (digits, spaces, + ( ) - . /) cannot spell a
// formula that calls anything, and a workbook's text cells are never
// evaluated, so the workbook shows it as given ("+49 30 1234567", not
// "'+49 30 1234567", which a phone may refuse to dial). Anything else, and
// every phone in the csv (where Excel would read "+49 30 ..." as a broken
// formula), goes through cellText.
func phoneText(s string, f Format) string {
	if f == XLSX && strings.Trim(s, "0123456789 +()-./") == "" {
		return s
	}
	return cellText(s)
}

// letterCountries are the values of an order's country field (lower case)
// for which the paper is US Letter; A4 everywhere else.
var letterCountries = map[string]bool{
	"us": true, "usa": true, "u.s.": true, "u.s.a.": true, "united states": true,
	"united states of america": true, "ca": true, "can": true, "canada": true,
	"mx": true, "mex": true, "mexico": true, "méxico": true, "ph": true, "phl": true,
	"philippines": true, "cl": true, "chile": true, "co": true, "colombia": true,
}

// Paper sizes in excelize's (and the file format's) numbering.
const (
	paperLetter = 1
	paperA4     = 9
)

// paperSize picks US Letter when most orders that name a country are in a
// Letter country, A4 otherwise.
func paperSize(orders []v1alpha1.Order) int {
	letter, other := 0, 0
	for _, o := range orders {
		if o.Country == nil {
			continue
		}
		c := strings.ToLower(strings.TrimSpace(*o.Country))
		switch {
		case c == "":
		case letterCountries[c]:
			letter++
		default:
			other++
		}
	}
	if letter > other {
		return paperLetter
	}
	return paperA4
}

// The columns of a route sheet and of the csv, in order. Activity, Skills
// and the loads (one column per named dimension) are there only when the
// request used the fleet constraints that fill them.
type colID int

const (
	colActivity colID = iota
	colSeq
	colArrival
	colWindow
	colOrderRef
	colCustomer
	colAddress
	colPhone
	colNotes
	colService
	colSkills
	colLoad
	colLat
	colLon
)

type colSpec struct {
	header     string
	driverOnly bool    // only with driver instructions
	minWidth   float64 // xlsx column width bounds, in characters
	maxWidth   float64
	wrap       bool // long text wraps inside its bounded width
}

// The widths' upper bounds keep a route sheet with driver instructions
// within about 190 characters: printed one page wide in landscape, that is
// still a readable size.
var stopCols = [...]colSpec{
	colActivity: {header: "Activity", minWidth: 8, maxWidth: 26, wrap: true},
	colSeq:      {header: "Seq", minWidth: 5, maxWidth: 6},
	colArrival:  {header: "Planned arrival", minWidth: 9, maxWidth: 9},
	colWindow:   {header: "Time window", minWidth: 9, maxWidth: 14},
	colOrderRef: {header: "Order ref", minWidth: 9, maxWidth: 20, wrap: true},
	colCustomer: {header: "Customer", driverOnly: true, minWidth: 12, maxWidth: 26, wrap: true},
	colAddress:  {header: "Address", minWidth: 14, maxWidth: 36, wrap: true},
	colPhone:    {header: "Phone", driverOnly: true, minWidth: 9, maxWidth: 18, wrap: true},
	colNotes:    {header: "Notes", driverOnly: true, minWidth: 12, maxWidth: 40, wrap: true},
	colService:  {header: "Service (min)", minWidth: 9, maxWidth: 9},
	colSkills:   {header: "Skills", minWidth: 8, maxWidth: 24, wrap: true},
	colLoad:     {minWidth: 8, maxWidth: 14}, // headed by its dimension's name
	colLat:      {header: "Latitude", minWidth: 10, maxWidth: 13},
	colLon:      {header: "Longitude", minWidth: 11, maxWidth: 13},
}

// column is one column of a route sheet: dim picks the load dimension of
// a colLoad column (an index into plan.fleet.dims).
type column struct {
	id  colID
	dim int
}

func (c column) spec() colSpec { return stopCols[c.id] }

// header is the column's heading (cell text).
func (p *plan) header(c column) string {
	if c.id == colLoad {
		return p.fleet.headers[c.dim]
	}
	return stopCols[c.id].header
}

// stopColumns are the columns of a route sheet (and of the csv after its
// vehicle and driver columns).
func (p *plan) stopColumns(driver bool) []column {
	cols := make([]column, 0, len(stopCols)+len(p.fleet.dims))
	for id := range stopCols {
		switch c := colID(id); {
		case stopCols[c].driverOnly && !driver,
			c == colActivity && !p.fleet.activity,
			c == colSkills && !p.fleet.skills:
		case c == colLoad:
			for d := range p.fleet.dims {
				cols = append(cols, column{id: colLoad, dim: d})
			}
		default:
			cols = append(cols, column{id: c})
		}
	}
	return cols
}
