// Package schema holds the REST request DTOs of the route-optimization API
// and their decoding and validation. Errors come out exactly as FastAPI sends
// pydantic v2 errors (type, loc, msg, input, ctx), because the service
// replaces a FastAPI one and clients rely on that shape (docs/API.md,
// "Validation errors (422)").
//
// Decoding follows the original stack step by step: the body is parsed as
// CPython's json.loads does (same error messages and character offsets,
// exact integers, duplicate keys resolved last-wins), then validated in
// pydantic v2 lax mode, field by field in declaration order, reporting every
// error. Cross-field rules run, as pydantic model validators do, only on
// models whose fields are all valid.
//
// Only the standard library is used.
package schema

import (
	"bytes"
	"encoding/json"

	"routeopt.io/routeopt/api/v1alpha1"
)

// OptimizationIn is the body of POST /v1/optimizations, decoded with
// defaults applied.
type OptimizationIn struct {
	Name     *string     `json:"name"`
	Depot    DepotIn     `json:"depot"`
	Orders   []OrderIn   `json:"orders"`
	Vehicles []VehicleIn `json:"vehicles"` // nil when absent or null
	Fleet    *FleetIn    `json:"fleet"`    // nil when absent or null
	Options  OptionsIn   `json:"options"`
}

// DepotIn is a place, an address or a latitude and longitude: the depot, or
// where a vehicle's route starts or ends.
type DepotIn struct {
	Label     *string  `json:"label"`
	Address   *string  `json:"address"`
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
}

// HasAddress reports whether the depot has a usable (non-blank) address.
func (d *DepotIn) HasAddress() bool { return v1alpha1.HasText(d.Address) }

// OrderIn is one stop to serve. Demand defaults to 1, ServiceMinutes to 5,
// Priority to 0.
type OrderIn struct {
	ID              string   `json:"id"`
	Address         *string  `json:"address"`
	City            *string  `json:"city"`
	Region          *string  `json:"region"`
	PostalCode      *string  `json:"postal_code"`
	Country         *string  `json:"country"`
	Latitude        *float64 `json:"latitude"`
	Longitude       *float64 `json:"longitude"`
	Demand          float64  `json:"demand"`
	ServiceMinutes  float64  `json:"service_minutes"`
	TimeWindowStart *string  `json:"time_window_start"`
	TimeWindowEnd   *string  `json:"time_window_end"`
	Customer        *string  `json:"customer"`
	Phone           *string  `json:"phone"`
	Notes           *string  `json:"notes"`

	// The fleet constraints are left out of CanonicalJSON when unset (or
	// at their default), so a request without them hashes as it did
	// before they existed.
	TimeWindows []TimeWindowIn     `json:"time_windows,omitempty"`
	Skills      []string           `json:"skills,omitempty"`
	Loads       map[string]float64 `json:"loads,omitempty"`
	Priority    int                `json:"priority,omitempty"`
}

// TimeWindowIn is one of an order's time windows, HH:MM.
type TimeWindowIn struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// HasAddress reports whether the order has a usable address: an empty or
// blank string is no address (docs/API.md, "Creating an optimization").
func (o *OrderIn) HasAddress() bool { return v1alpha1.HasText(o.Address) }

// VehicleIn is one individual vehicle. Shifts default to 08:00-18:00.
type VehicleIn struct {
	ID         string  `json:"id"`
	Capacity   float64 `json:"capacity"`
	Driver     *string `json:"driver"`
	ShiftStart string  `json:"shift_start"`
	ShiftEnd   string  `json:"shift_end"`
	FixedCost  float64 `json:"fixed_cost"`

	VehicleConstraintsIn
}

// FleetIn is Count identical vehicles, named NamePrefix (default "Vehicle")
// plus a number by the caller; its constraints apply to each.
type FleetIn struct {
	Count      int     `json:"count"`
	Capacity   float64 `json:"capacity"`
	ShiftStart string  `json:"shift_start"`
	ShiftEnd   string  `json:"shift_end"`
	FixedCost  float64 `json:"fixed_cost"`
	NamePrefix string  `json:"name_prefix"`

	VehicleConstraintsIn
}

// VehicleConstraintsIn are the fields VehicleIn and FleetIn share beyond
// capacity and shift. Like OrderIn's fleet constraints, they are left out of
// CanonicalJSON when unset.
type VehicleConstraintsIn struct {
	Skills             []string           `json:"skills,omitempty"`
	Capacities         map[string]float64 `json:"capacities,omitempty"`
	Breaks             []BreakIn          `json:"breaks,omitempty"`
	MaxDurationMinutes *int               `json:"max_duration_minutes,omitempty"`
	MaxDistanceKm      *float64           `json:"max_distance_km,omitempty"`
	MaxStops           *int               `json:"max_stops,omitempty"`
	Start              *DepotIn           `json:"start,omitempty"`
	End                *DepotIn           `json:"end,omitempty"`
	OpenEnd            bool               `json:"open_end,omitempty"`
}

// BreakIn is a vehicle's break: Minutes long, between Start and End (HH:MM).
type BreakIn struct {
	Start   string `json:"start"`
	End     string `json:"end"`
	Minutes int    `json:"minutes"`
}

// OptionsIn are the solver options. Strategy defaults to "optimized",
// Objective to "distance"; SolverSeconds is nil unless given.
type OptionsIn struct {
	Strategy      string `json:"strategy"`
	Objective     string `json:"objective"`
	SolverSeconds *int   `json:"solver_seconds"`
}

// ExportFormats are the formats an export may ask for, in the order a
// refusal lists them; package export renders each.
var ExportFormats = []string{"xlsx", "csv"}

// ExportIn is the optional body of POST /v1/optimizations/{id}/exports.
// Format defaults to "xlsx", IncludeDriverInstructions to true.
type ExportIn struct {
	Format                    string `json:"format"`
	IncludeDriverInstructions bool   `json:"include_driver_instructions"`
}

// WebhookIn is the body of POST /v1/webhooks. Only its shape and length are
// checked here; whether URL is a public https URL is checked elsewhere.
type WebhookIn struct {
	URL string `json:"url"`
}

// Defaults of the optional fields; those of a request come from
// api/v1alpha1, which the solver applies too.
const (
	DefaultDemand         = v1alpha1.DefaultDemand
	DefaultServiceMinutes = v1alpha1.DefaultServiceMinutes
	DefaultShiftStart     = v1alpha1.DefaultShiftStart
	DefaultShiftEnd       = v1alpha1.DefaultShiftEnd
	DefaultNamePrefix     = v1alpha1.DefaultFleetNamePrefix
	DefaultStrategy       = string(v1alpha1.DefaultStrategy)
	DefaultObjective      = string(v1alpha1.DefaultObjective)
	DefaultExportFormat   = "xlsx"
)

// CanonicalJSON marshals the decoded, defaulted request deterministically:
// fields in declaration order, every field present (null when unset) but the
// fleet constraints (absent when unset), keys of load and capacity objects
// sorted, numbers as Go prints float64, no HTML escaping, no trailing newline. Two requests
// that differ only in key order, whitespace, duplicate keys, omitted
// defaults or equivalent coercions ("2", 2.0, 2) give the same bytes, which
// makes it suitable for idempotency hashing.
func (o *OptimizationIn) CanonicalJSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		// Only a hand-built value holding NaN or ±Inf gets here; decoded
		// values are always finite.
		panic("schema: CanonicalJSON: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
