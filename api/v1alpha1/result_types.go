package v1alpha1

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The result document: what GET /v1/optimizations/{id}/result serves, stored
// gzip-compressed as JSON in the ConfigMap named by ResultConfigMapName. The
// solver writes it and the REST API reads it; keeping the type here is the
// contract between them. Field names are the REST API's (snake_case; docs/API.md,
// "The result"), because the document is served as stored.

// Result is the REST API's result document.
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

// The fields of the fleet constraints (named dimensions, start and end,
// breaks) are written only when the request used them, so the result of a
// request without them is the document it was before they existed: nil
// leaves them out, while an empty list or object is written as one.

// VehicleKPI is one entry of kpis.per_vehicle.
// +kubebuilder:object:generate=false
type VehicleKPI struct {
	VehicleRef string  `json:"vehicle_ref"`
	Stops      int     `json:"stops"`
	DistanceM  int64   `json:"distance_m"`
	Load       float64 `json:"load"`
	Capacity   float64 `json:"capacity"`
	// Loads and Capacities are the load carried and the vehicle's capacity
	// in each named dimension; only when the request named dimensions.
	Loads      map[string]float64 `json:"loads,omitzero"`
	Capacities map[string]float64 `json:"capacities,omitzero"`
}

// Route is one vehicle's plan.
// +kubebuilder:object:generate=false
type Route struct {
	VehicleRef string  `json:"vehicle_ref"`
	DriverName *string `json:"driver_name"`
	DepartS    int     `json:"depart_s"`
	// ReturnS is the return to the end (the depot unless the vehicle has
	// another); for an open route, the last stop's DepartS.
	ReturnS   int     `json:"return_s"`
	DistanceM int64   `json:"distance_m"`
	Load      float64 `json:"load"`
	Capacity  float64 `json:"capacity"`
	// Loads and Capacities are the route's load and the vehicle's capacity
	// in each named dimension; only when the request named dimensions.
	Loads      map[string]float64 `json:"loads,omitzero"`
	Capacities map[string]float64 `json:"capacities,omitzero"`
	// Start and End are where the route leaves from and ends; only when the
	// request gave a vehicle or the fleet a start, an end or open_end, and
	// then on every route.
	Start *Place   `json:"start,omitempty"`
	End   RouteEnd `json:"end,omitzero"`
	// Breaks are the breaks taken on the route, in time order; only when the
	// vehicle has breaks.
	Breaks []RouteBreak `json:"breaks,omitzero"`
	Stops  []Stop       `json:"stops"`
	// Polyline is Google's encoded polyline (precision 1e5) from the start
	// through the stops to the end (the depot for both unless the vehicle
	// has others; no leg back for an open route). Served only with
	// include_path=true.
	Polyline string `json:"polyline,omitempty"`
}

// Place is where a route starts or ends. Address is the address it was
// given by, "" when it was given by coordinates only.
// +kubebuilder:object:generate=false
type Place struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Address   string  `json:"address"`
}

// RouteEnd is where a route ends: At, or nowhere for an open route (Open),
// which ends at its last stop. Written as At, null when Open, and left out
// when it is neither (a request without start, end and open_end).
// +kubebuilder:object:generate=false
type RouteEnd struct {
	Open bool
	At   *Place
}

// IsZero reports an end that is left out of the document.
func (e RouteEnd) IsZero() bool { return !e.Open && e.At == nil }

// MarshalJSON writes At, or null for an open route.
func (e RouteEnd) MarshalJSON() ([]byte, error) {
	if e.Open || e.At == nil {
		return []byte("null"), nil
	}
	return json.Marshal(e.At)
}

// UnmarshalJSON reads what MarshalJSON wrote: null is an open route.
func (e *RouteEnd) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*e = RouteEnd{Open: true}
		return nil
	}
	at := &Place{}
	if err := json.Unmarshal(data, at); err != nil {
		return err
	}
	*e = RouteEnd{At: at}
	return nil
}

// RouteBreak is a break taken on a route, from StartS to EndS (seconds since
// midnight). AfterSeq is the seq of the last stop served before it: 0 for a
// break before the first stop's service (at the start, or while waiting at
// the first stop).
// +kubebuilder:object:generate=false
type RouteBreak struct {
	StartS   int `json:"start_s"`
	EndS     int `json:"end_s"`
	AfterSeq int `json:"after_seq"`
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
	// Customer and the time window are the order's, copied beside the public
	// API's fields (a routeopt extension) so a route table needs no second
	// lookup; always present, null when the order had none. For an order
	// with several windows, the window it was served in.
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

// Unassigned reasons decided by the pipeline (the solver decides the others:
// too_large, window_unreachable, no_capacity, no_time, skills_missing and
// route_limit).
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
	return encodeGzipJSON(r)
}

// DecodeResult reads what EncodeResult wrote. The data comes from storage a
// solve pod can write, so it is decoded with a bound on its expanded size.
func DecodeResult(data []byte) (*Result, error) {
	r := &Result{}
	if err := decodeGzipJSON(data, r); err != nil {
		return nil, err
	}
	return r, nil
}

// The stored form of a result. A ConfigMap holds at most 1 MiB, and road
// geometry for hundreds of stops can be megabytes, so a result is two
// documents: the Result without polylines, and the polylines (EncodePaths).
// Each is stored inline in the result ConfigMap when it fits, otherwise in
// part ConfigMaps named by ResultPartName. The result ConfigMap's
// ResultManifestKey says where each one is, with its size and SHA-256, and
// is written last: a reader never mixes parts of two solve attempts. A
// result ConfigMap without a manifest is the older form: the Result, its
// polylines included, in ResultDataKey.
const (
	// ResultPathsKey is the binaryData key of the inline polylines.
	ResultPathsKey = "paths.json.gz"
	// ResultManifestKey is the data key of the ResultManifest.
	ResultManifestKey = "manifest.json"
	// ResultPartKey is the binaryData key of a part ConfigMap.
	ResultPartKey = "part"
	// ResultConfigMapBudget is what one ConfigMap may hold, keys included:
	// below the API server's 1 MiB (1,048,576) so that a manifest and small
	// keys written by others still fit.
	ResultConfigMapBudget = 1_000_000
	// ResultPartSize is the most bytes one part holds.
	ResultPartSize = ResultConfigMapBudget - len(ResultPartKey)
	// MaxResultParts bounds the part ConfigMaps of one result (about 10 MB);
	// the solve's Role names each one.
	MaxResultParts = 10
)

// maxDecodedBytes bounds what a stored document may expand to: several
// times the largest one stored (MaxResultParts of polylines), far below
// what a gzip bomb of that size would give.
var maxDecodedBytes = 64 << 20

// ResultPartName is the name of o's i-th (1-based) result part ConfigMap.
func (o *Optimization) ResultPartName(i int) string {
	return fmt.Sprintf("%s%s-%d", o.Name, ResultConfigMapSuffix, i)
}

// ResultManifest says where the documents of a result are stored.
// +kubebuilder:object:generate=false
type ResultManifest struct {
	Result StoredBlob `json:"result"`
	// Paths is nil when the result has no polylines.
	Paths *StoredBlob `json:"paths,omitempty"`
}

// StoredBlob is one stored document: inline under Key in the result
// ConfigMap, or split over parts First..First+Parts-1 in order.
// +kubebuilder:object:generate=false
type StoredBlob struct {
	Key    string `json:"key,omitempty"`
	First  int    `json:"first,omitempty"`
	Parts  int    `json:"parts,omitempty"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// NewStoredBlob describes data, stored nowhere yet.
func NewStoredBlob(data []byte) StoredBlob {
	return StoredBlob{Bytes: len(data), SHA256: SHA256Hex(data)}
}

// PartIndexes are the part numbers b is stored in, in order.
func (b StoredBlob) PartIndexes() []int {
	out := make([]int, 0, max(b.Parts, 0))
	for i := range b.Parts {
		out = append(out, b.First+i)
	}
	return out
}

// Validate checks that b names one place that may hold it.
func (b StoredBlob) Validate() error {
	switch {
	case b.Bytes < 0:
		return errors.New("negative size")
	case b.Key != "" && b.Parts != 0:
		return errors.New("stored both inline and in parts")
	case b.Key != "":
		return nil
	case b.Parts < 1 || b.First < 1 || b.First+b.Parts-1 > MaxResultParts:
		return fmt.Errorf("parts %d..%d are out of range 1..%d", b.First, b.First+b.Parts-1, MaxResultParts)
	}
	return nil
}

// Join joins the pieces read for b (the inline value, or each part's in
// order) and checks them against b's size and SHA-256: a piece written by
// another solve attempt is an error, never a wrong document.
func (b StoredBlob) Join(pieces [][]byte) ([]byte, error) {
	data := bytes.Join(pieces, nil)
	if len(data) != b.Bytes {
		return nil, fmt.Errorf("stored document is %d bytes, the manifest says %d: its parts are from different solve attempts", len(data), b.Bytes)
	}
	if SHA256Hex(data) != b.SHA256 {
		return nil, errors.New("stored document does not match the manifest's SHA-256: its parts are from different solve attempts")
	}
	return data, nil
}

// SplitBlob cuts data into pieces of at most size bytes (one empty piece
// for empty data).
func SplitBlob(data []byte, size int) [][]byte {
	if len(data) == 0 {
		return [][]byte{{}}
	}
	var out [][]byte
	for len(data) > 0 {
		n := min(size, len(data))
		out = append(out, data[:n:n])
		data = data[n:]
	}
	return out
}

// EncodeManifest is the stored form of m.
func EncodeManifest(m *ResultManifest) (string, error) {
	raw, err := json.Marshal(m)
	return string(raw), err
}

// DecodeManifest reads and checks what EncodeManifest wrote.
func DecodeManifest(s string) (*ResultManifest, error) {
	m := &ResultManifest{}
	if err := json.Unmarshal([]byte(s), m); err != nil {
		return nil, fmt.Errorf("result manifest: %w", err)
	}
	if err := m.Result.Validate(); err != nil {
		return nil, fmt.Errorf("result manifest: result: %w", err)
	}
	if m.Paths != nil {
		if err := m.Paths.Validate(); err != nil {
			return nil, fmt.Errorf("result manifest: paths: %w", err)
		}
	}
	return m, nil
}

// EncodePaths gzips the JSON of the routes' polylines, in route order.
func EncodePaths(polylines []string) ([]byte, error) {
	return encodeGzipJSON(polylines)
}

// DecodePaths reads what EncodePaths wrote.
func DecodePaths(data []byte) ([]string, error) {
	var out []string
	if err := decodeGzipJSON(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func encodeGzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeGzipJSON(data []byte, v any) error {
	raw, err := gunzip(data)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// gunzip expands a stored document, refusing one that expands past
// maxDecodedBytes (a gzip bomb).
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer func() { _ = zr.Close() }()
	raw, err := io.ReadAll(io.LimitReader(zr, int64(maxDecodedBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxDecodedBytes {
		return nil, fmt.Errorf("stored document expands past %d bytes", maxDecodedBytes)
	}
	return raw, nil
}
