package plan

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	polyline "github.com/twpayne/go-polyline"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

// Geometry returns the road points along a path (matrix.Matrix.Geometry);
// nil means straight legs.
type Geometry func(ctx context.Context, path []matrix.Point) ([]matrix.Point, error)

// Result turns the solver's plan into the REST API's result document. geometry
// is asked once per route for its polyline; it is the only call that may
// leave the process.
func Result(ctx context.Context, opt *v1alpha1.Optimization, in *Located, sol *Solution, geometry Geometry) *v1alpha1.Result {
	spec := &opt.Spec
	r := &v1alpha1.Result{
		ID:         opt.Name,
		Status:     v1alpha1.StateCompleted,
		Strategy:   spec.EffectiveOptions().Strategy,
		Routes:     []v1alpha1.Route{},
		Unassigned: []v1alpha1.Unassigned{},
		Warnings:   append([]v1alpha1.Warning{}, in.Warnings...),
	}
	var dims []string
	if sol.Problem != nil {
		dims = sol.Problem.Dimensions
	}
	k := &r.KPIs
	k.OrdersTotal = len(spec.Orders)
	k.VehiclesAvailable = len(sol.Fleet)
	// Every vehicle in request order, unused ones with 0 stops.
	k.PerVehicle = make([]v1alpha1.VehicleKPI, len(sol.Fleet))
	for i, v := range sol.Fleet {
		k.PerVehicle[i] = v1alpha1.VehicleKPI{VehicleRef: v.Ref, Capacity: v.Capacity, Loads: dimensionValues(dims, nil), Capacities: dimensionValues(dims, v.Capacities)}
	}
	var load, capacity float64
	for _, route := range sol.Routes {
		v := sol.Fleet[route.Vehicle]
		out := v1alpha1.Route{
			VehicleRef: v.Ref,
			DriverName: v.Driver,
			DepartS:    route.Depart,
			ReturnS:    route.Return,
			DistanceM:  int64(route.Distance),
			Load:       route.Load,
			Capacity:   v.Capacity,
			Loads:      dimensionValues(dims, route.Loads),
			Capacities: dimensionValues(dims, v.Capacities),
			Breaks:     routeBreaks(&v.Vehicle, route.Breaks),
			Stops:      make([]v1alpha1.Stop, 0, len(route.Stops)),
		}
		start, end := in.Depot, &in.Depot
		if in.Ends != nil {
			e := &in.Ends[route.Vehicle]
			out.Start = &e.Start.Place
			start = in.Points[e.Start.Point]
			if e.Open {
				out.End, end = v1alpha1.RouteEnd{Open: true}, nil
			} else {
				out.End, end = v1alpha1.RouteEnd{At: &e.End.Place}, &in.Points[e.End.Point]
			}
		}
		path := []matrix.Point{start}
		for i, st := range route.Stops {
			specIdx := in.Orders[st.Order]
			o := &spec.Orders[specIdx]
			pt := in.Points[st.Order+1]
			windowStart, windowEnd := servedWindow(o, st.Window)
			out.Stops = append(out.Stops, v1alpha1.Stop{
				Seq:          i + 1,
				OrderRef:     o.ID,
				Address:      stopAddress(o),
				Latitude:     pt.Lat,
				Longitude:    pt.Lon,
				ArrivalS:     st.Arrival,
				StartS:       st.Start,
				DepartS:      st.Depart,
				WaitS:        st.Wait,
				LateS:        st.Late,
				LegDistanceM: int64(st.LegDistance),
				LegTravelS:   st.LegTravel,

				Customer:        cloneString(o.Customer),
				TimeWindowStart: windowStart,
				TimeWindowEnd:   windowEnd,
			})
			if st.Late > 0 {
				k.LateStops++
			}
			path = append(path, pt)
		}
		if end != nil {
			path = append(path, *end)
		}
		out.Polyline = routePolyline(ctx, geometry, path, &r.Warnings, v.Ref)
		r.Routes = append(r.Routes, out)
		k.PerVehicle[route.Vehicle] = v1alpha1.VehicleKPI{
			VehicleRef: v.Ref, Stops: len(route.Stops), DistanceM: int64(route.Distance), Load: route.Load, Capacity: v.Capacity,
			Loads: dimensionValues(dims, route.Loads), Capacities: dimensionValues(dims, v.Capacities),
		}
		k.OrdersAssigned += len(route.Stops)
		k.DistanceM += int64(route.Distance)
		k.DriveSeconds += int64(route.DriveS)
		// From departure to return: breaks and waiting included.
		k.RouteSeconds += int64(route.Return - route.Depart)
		load += route.Load
		capacity += v.Capacity
	}
	k.VehiclesUsed = len(r.Routes)
	if capacity > 0 {
		k.AvgUtilization = load / capacity
	}

	// Unassigned entries in the caller's order: the pipeline's and the solver's.
	bySpec := make(map[int]v1alpha1.Unassigned, len(in.Unassigned))
	for i, u := range in.Unassigned {
		bySpec[in.UnassignAt[i]] = u
	}
	for _, u := range sol.Unassigned {
		specIdx := in.Orders[u.Order]
		bySpec[specIdx] = v1alpha1.Unassigned{OrderRef: spec.Orders[specIdx].ID, Reason: string(u.Reason), Message: u.Message}
	}
	for i := range spec.Orders {
		if u, ok := bySpec[i]; ok {
			r.Unassigned = append(r.Unassigned, u)
		}
	}
	k.OrdersUnassigned = len(r.Unassigned)
	return r
}

// servedWindow is the window to show on a stop of order o served in its
// window index w (vrp.Stop.Window): the order's own window, or for an order
// with time windows the one it was served in.
func servedWindow(o *v1alpha1.Order, w int) (start, end *string) {
	if len(o.TimeWindows) == 0 {
		return cloneString(o.TimeWindowStart), cloneString(o.TimeWindowEnd)
	}
	tw := o.TimeWindows[min(max(w, 0), len(o.TimeWindows)-1)]
	return &tw.Start, &tw.End
}

// dimensionValues names values by their dimensions; nil without
// dimensions, so a result without them has no such field. A missing value
// is 0.
func dimensionValues(dims []string, values []float64) map[string]float64 {
	if len(dims) == 0 {
		return nil
	}
	out := make(map[string]float64, len(dims))
	for d, name := range dims {
		if d < len(values) {
			out[name] = values[d]
		} else {
			out[name] = 0
		}
	}
	return out
}

// routeBreaks are the breaks a route of vehicle v takes, in time order;
// nil for a vehicle without breaks, so its route has no such field.
func routeBreaks(v *vrp.Vehicle, planned []vrp.PlannedBreak) []v1alpha1.RouteBreak {
	if len(v.Breaks) == 0 {
		return nil
	}
	out := make([]v1alpha1.RouteBreak, 0, len(planned))
	for _, b := range planned {
		out = append(out, v1alpha1.RouteBreak{StartS: b.Start, EndS: b.End, AfterSeq: b.AfterStop})
	}
	slices.SortStableFunc(out, func(a, b v1alpha1.RouteBreak) int { return cmp.Compare(a.StartS, b.StartS) })
	return out
}

// cloneString copies an optional order field into the result, so the
// result shares nothing with the spec it was built from.
func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}

// routePolyline encodes the road geometry through path when geometry knows
// it, else straight legs (docs/API.md, "Route"); a geometry that cannot be had
// is a warning, not a failure.
func routePolyline(ctx context.Context, geometry Geometry, path []matrix.Point, warnings *[]v1alpha1.Warning, vehicle string) string {
	points := path
	if geometry != nil {
		road, err := geometry(ctx, path)
		if err == nil && len(road) >= 2 {
			points = road
		} else if err != nil {
			*warnings = append(*warnings, v1alpha1.Warning{Code: v1alpha1.WarningGeometryUnavailable, Message: fmt.Sprintf("road geometry of %s's route is unavailable (%v); its polyline uses straight legs", vehicle, err)})
		}
	}
	coords := make([][]float64, len(points))
	for i, p := range points {
		coords[i] = []float64{p.Lat, p.Lon}
	}
	return string(polyline.EncodeCoords(coords))
}

// Summary is the status digest of a result.
func Summary(r *v1alpha1.Result) *v1alpha1.Summary {
	return &v1alpha1.Summary{
		OrdersAssigned:   int32(r.KPIs.OrdersAssigned),
		OrdersUnassigned: int32(r.KPIs.OrdersUnassigned),
		VehiclesUsed:     int32(r.KPIs.VehiclesUsed),
		DistanceMeters:   r.KPIs.DistanceM,
		Distance:         FormatDistance(r.KPIs.DistanceM),
	}
}

// FormatDistance writes metres for people, always in km ("0.29km",
// "41.2km", "1235km") so that a kubectl column cannot be read as minutes:
// a bare "290m" could be either. Precision shrinks as the value grows.
func FormatDistance(m int64) string {
	km := float64(m) / 1000
	switch {
	case m < 10_000:
		return fmt.Sprintf("%.2fkm", km)
	case m < 1_000_000:
		return fmt.Sprintf("%.1fkm", km)
	}
	return fmt.Sprintf("%.0fkm", km)
}
