package webserver

import (
	"maps"
	"slices"
	"time"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/schema"
)

// specFromRequest maps the validated REST request (snake_case) onto the
// custom resource's spec (camelCase), defaults applied. The orders and the
// individual vehicles are not in it: they go to the input document
// (InputFromRequest), which spec.input names.
func specFromRequest(in *schema.OptimizationIn) v1alpha1.OptimizationSpec {
	spec := v1alpha1.OptimizationSpec{
		Name: in.Name,
		Depot: v1alpha1.Depot{
			Label: in.Depot.Label, Address: in.Depot.Address,
			Latitude: in.Depot.Latitude, Longitude: in.Depot.Longitude,
		},
		Options: &v1alpha1.Options{
			Strategy:      v1alpha1.Strategy(in.Options.Strategy),
			Objective:     v1alpha1.Objective(in.Options.Objective),
			SolverSeconds: int32Ptr(in.Options.SolverSeconds),
		},
	}
	if in.Fleet != nil {
		f := in.Fleet
		spec.Fleet = &v1alpha1.Fleet{
			Count: int32(f.Count), Capacity: f.Capacity, ShiftStart: f.ShiftStart, ShiftEnd: f.ShiftEnd,
			FixedCost: f.FixedCost, NamePrefix: f.NamePrefix,
			VehicleConstraints: vehicleConstraints(&f.VehicleConstraintsIn),
		}
	}
	return spec
}

// InputFromRequest is the input document of the validated REST request:
// its orders and individual vehicles in the custom resource's form,
// defaults applied. Encoded (v1alpha1.EncodeInput), it is what a create
// stores and what MaxStoredBytes bounds.
func InputFromRequest(in *schema.OptimizationIn) *v1alpha1.Input {
	doc := &v1alpha1.Input{Orders: make([]v1alpha1.Order, 0, len(in.Orders))}
	for _, o := range in.Orders {
		doc.Orders = append(doc.Orders, v1alpha1.Order{
			ID: o.ID, Address: o.Address, City: o.City, Region: o.Region, PostalCode: o.PostalCode, Country: o.Country,
			Latitude: o.Latitude, Longitude: o.Longitude,
			Demand: ptr.To(o.Demand), ServiceMinutes: ptr.To(o.ServiceMinutes),
			TimeWindowStart: o.TimeWindowStart, TimeWindowEnd: o.TimeWindowEnd,
			Customer: o.Customer, Phone: o.Phone, Notes: o.Notes,
			TimeWindows: timeWindows(o.TimeWindows), Skills: skills(o.Skills), Loads: loads(o.Loads),
			Priority: nonZero(o.Priority),
		})
	}
	for _, v := range in.Vehicles {
		doc.Vehicles = append(doc.Vehicles, v1alpha1.Vehicle{
			ID: v.ID, Capacity: v.Capacity, Driver: v.Driver, ShiftStart: v.ShiftStart, ShiftEnd: v.ShiftEnd, FixedCost: v.FixedCost,
			VehicleConstraints: vehicleConstraints(&v.VehicleConstraintsIn),
		})
	}
	return doc
}

// The fleet constraints map field by field; an unset one, or one at its
// default (priority 0, no skills, open_end false), stays unset, so the input
// document of a request without them is what it was before they existed.

func vehicleConstraints(c *schema.VehicleConstraintsIn) v1alpha1.VehicleConstraints {
	out := v1alpha1.VehicleConstraints{
		Skills: skills(c.Skills), Start: location(c.Start), End: location(c.End),
		MaxDurationMinutes: int32(ptr.Deref(c.MaxDurationMinutes, 0)), MaxStops: int32(ptr.Deref(c.MaxStops, 0)),
		MaxDistanceKm: ptr.Deref(c.MaxDistanceKm, 0),
	}
	for _, name := range slices.Sorted(maps.Keys(c.Capacities)) {
		out.Capacities = append(out.Capacities, v1alpha1.DimensionCapacity{Name: name, Value: c.Capacities[name]})
	}
	for _, b := range c.Breaks {
		out.Breaks = append(out.Breaks, v1alpha1.Break{Start: b.Start, End: b.End, Minutes: int32(b.Minutes)})
	}
	if c.OpenEnd {
		out.OpenEnd = ptr.To(true)
	}
	return out
}

func timeWindows(in []schema.TimeWindowIn) []v1alpha1.TimeWindow {
	var out []v1alpha1.TimeWindow
	for _, w := range in {
		out = append(out, v1alpha1.TimeWindow{Start: w.Start, End: w.End})
	}
	return out
}

// loads lists named amounts by name, so the same request always stores the
// same document.
func loads(in map[string]float64) []v1alpha1.DimensionLoad {
	var out []v1alpha1.DimensionLoad
	for _, name := range slices.Sorted(maps.Keys(in)) {
		out = append(out, v1alpha1.DimensionLoad{Name: name, Value: in[name]})
	}
	return out
}

func skills(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	return slices.Clone(in)
}

func location(d *schema.DepotIn) *v1alpha1.Location {
	if d == nil {
		return nil
	}
	return &v1alpha1.Location{Label: d.Label, Address: d.Address, Latitude: d.Latitude, Longitude: d.Longitude}
}

func nonZero(v int) *int32 {
	if v == 0 {
		return nil
	}
	return ptr.To(int32(v))
}

func int32Ptr(v *int) *int32 {
	if v == nil {
		return nil
	}
	return ptr.To(int32(*v))
}

// Record is the REST record of an optimization.
type Record struct {
	ID           string  `json:"id"`
	Name         *string `json:"name"`
	Status       string  `json:"status"`
	Stage        string  `json:"stage"`
	Progress     int32   `json:"progress"`
	Strategy     string  `json:"strategy"`
	Orders       int     `json:"orders"`
	Vehicles     int     `json:"vehicles"`
	ErrorCode    *string `json:"error_code"`
	ErrorMessage *string `json:"error_message"`
	CreatedAt    string  `json:"created_at"`
	FinishedAt   *string `json:"finished_at"`
	Links        Links   `json:"links"`
}

// Links of a record.
type Links struct {
	Self   string `json:"self"`
	Result string `json:"result"`
	Web    string `json:"web"`
}

// timestamp writes t as ISO 8601 UTC.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// record renders an Optimization as the REST record. Before the controller
// first sees it, an Optimization is queued.
func (s *Server) record(opt *v1alpha1.Optimization) Record {
	st := opt.Status
	rec := Record{
		ID:        opt.Name,
		Name:      opt.Spec.Name,
		Status:    string(stateOf(opt)),
		Stage:     string(st.DisplayStage()),
		Progress:  st.Progress,
		Strategy:  string(opt.Spec.EffectiveOptions().Strategy),
		Orders:    int(st.OrderCount),
		Vehicles:  int(st.VehicleCount),
		CreatedAt: timestamp(opt.CreationTimestamp.Time),
		Links: Links{
			Self:   s.baseURL + "/v1/optimizations/" + opt.Name,
			Result: s.baseURL + "/v1/optimizations/" + opt.Name + "/result",
			Web:    s.baseURL + PortalPath + "optimizations/" + opt.Name,
		},
	}
	if rec.Orders == 0 {
		rec.Orders = opt.Spec.OrderTotal()
	}
	if rec.Vehicles == 0 {
		rec.Vehicles = opt.Spec.VehicleTotal()
	}
	if st.State == v1alpha1.StateFailed {
		rec.ErrorCode, rec.ErrorMessage = ptr.To(st.ErrorCode), ptr.To(st.ErrorMessage)
	}
	if st.FinishedAt != nil {
		rec.FinishedAt = ptr.To(timestamp(st.FinishedAt.Time))
	}
	return rec
}

// stateOf is an optimization's state; queued before the controller saw it.
func stateOf(opt *v1alpha1.Optimization) v1alpha1.State {
	if opt.Status.State == "" {
		return v1alpha1.StateQueued
	}
	return opt.Status.State
}
