package v1alpha1

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
)

// The result document: what GET /v1/optimizations/{id}/result serves, stored
// gzip-compressed as JSON in the ConfigMap named by ResultConfigMapName. The
// solver writes it and the REST API reads it; keeping the type here is the
// contract between them. Field names are SPEC.md's (snake_case), because the
// document is served as stored.

// Result is SPEC.md's Result.
// +kubebuilder:object:generate=false
type Result struct {
	ID         string       `json:"id"`
	Status     State        `json:"status"`
	Strategy   Strategy     `json:"strategy"`
	KPIs       KPIs         `json:"kpis"`
	Routes     []Route      `json:"routes"`
	Unassigned []Unassigned `json:"unassigned"`
	Warnings   []Warning    `json:"warnings"`
}

// KPIs summarise a result.
// +kubebuilder:object:generate=false
type KPIs struct {
	OrdersTotal       int          `json:"orders_total"`
	OrdersAssigned    int          `json:"orders_assigned"`
	OrdersUnassigned  int          `json:"orders_unassigned"`
	VehiclesAvailable int          `json:"vehicles_available"`
	VehiclesUsed      int          `json:"vehicles_used"`
	DistanceM         int64        `json:"distance_m"`
	DriveSeconds      int64        `json:"drive_seconds"`
	RouteSeconds      int64        `json:"route_seconds"`
	LateStops         int          `json:"late_stops"`
	AvgUtilization    float64      `json:"avg_utilization"`
	PerVehicle        []VehicleKPI `json:"per_vehicle"`
}

// VehicleKPI is one entry of kpis.per_vehicle.
// +kubebuilder:object:generate=false
type VehicleKPI struct {
	VehicleRef string  `json:"vehicle_ref"`
	Stops      int     `json:"stops"`
	DistanceM  int64   `json:"distance_m"`
	Load       float64 `json:"load"`
	Capacity   float64 `json:"capacity"`
}

// Route is one vehicle's plan.
// +kubebuilder:object:generate=false
type Route struct {
	VehicleRef string  `json:"vehicle_ref"`
	DriverName *string `json:"driver_name"`
	DepartS    int     `json:"depart_s"`
	ReturnS    int     `json:"return_s"`
	DistanceM  int64   `json:"distance_m"`
	Load       float64 `json:"load"`
	Capacity   float64 `json:"capacity"`
	Stops      []Stop  `json:"stops"`
	// Polyline is Google's encoded polyline (precision 1e5) from the depot
	// through the stops back to the depot. Served only with include_path=true.
	Polyline string `json:"polyline,omitempty"`
}

// Stop is one visit, in driving order.
// +kubebuilder:object:generate=false
type Stop struct {
	Seq          int     `json:"seq"`
	OrderRef     string  `json:"order_ref"`
	Address      string  `json:"address"`
	Latitude     float64 `json:"latitude"`
	Longitude    float64 `json:"longitude"`
	ArrivalS     int     `json:"arrival_s"`
	StartS       int     `json:"start_s"`
	DepartS      int     `json:"depart_s"`
	WaitS        int     `json:"wait_s"`
	LateS        int     `json:"late_s"`
	LegDistanceM int64   `json:"leg_distance_m"`
	LegTravelS   int     `json:"leg_travel_s"`
	// Customer and the time window are the order's, copied beside SPEC.md's
	// fields (a routeopt extension) so a route table needs no second
	// lookup; always present, null when the order had none.
	Customer        *string `json:"customer"`
	TimeWindowStart *string `json:"time_window_start"`
	TimeWindowEnd   *string `json:"time_window_end"`
}

// Unassigned is an order that could not be planned.
// +kubebuilder:object:generate=false
type Unassigned struct {
	OrderRef string `json:"order_ref"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

// Warning is something the caller should know about a result.
// +kubebuilder:object:generate=false
type Warning struct {
	Code     string  `json:"code"`
	Message  string  `json:"message"`
	OrderRef *string `json:"order_ref,omitempty"`
}

// Unassigned reasons decided by the pipeline (the solver decides the others).
const (
	UnassignedGeocodeFailed = "geocode_failed"
)

// Warning codes.
const (
	WarningNoGeocoder         = "no_geocoder"
	WarningGeocodeApproximate = "geocode_approximate"
	WarningSolverTimeLimit    = "solver_time_limit"
	// WarningMatrixEstimated: some travel times are straight-line estimates.
	WarningMatrixEstimated = "matrix_estimated"
	// WarningGeometryUnavailable: a polyline uses straight legs although a
	// road network is configured.
	WarningGeometryUnavailable = "geometry_unavailable"
)

// EncodeResult gzips the JSON of r, the form stored in the result ConfigMap.
func EncodeResult(r *Result) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(r); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodeResult reads what EncodeResult wrote.
func DecodeResult(data []byte) (*Result, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer func() { _ = zr.Close() }()
	r := &Result{}
	if err := json.NewDecoder(zr).Decode(r); err != nil {
		return nil, err
	}
	return r, nil
}
