// Package geocode turns order addresses into coordinates. The pipeline asks a
// Geocoder per address; providers (Nominatim, none) implement it.
package geocode

import (
	"context"
	"errors"
	"strings"
)

// Query is a structured address.
type Query struct {
	Address, City, Region, PostalCode, Country string
}

// String joins the non-empty parts, for messages and cache keys.
func (q Query) String() string {
	parts := make([]string, 0, 5)
	for _, p := range []string{q.Address, q.City, q.Region, q.PostalCode, q.Country} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ", ")
}

// Empty reports whether q names no place at all.
func (q Query) Empty() bool { return q.String() == "" }

// Key is q normalized for caching: every field trimmed, lower-cased, with
// runs of white space collapsed to one space, and the five fields joined by
// "|" in a fixed order (a "|" inside a field becomes a space). Queries that
// differ only in case or spacing share a key; a query with the whole address
// in Address and one split into fields do not, because Nominatim searches
// them differently (free-form or structured).
func (q Query) Key() string {
	fields := [5]string{q.Address, q.City, q.Region, q.PostalCode, q.Country}
	for i, f := range fields {
		f = strings.ReplaceAll(f, "|", " ")
		fields[i] = strings.Join(strings.Fields(strings.ToLower(f)), " ")
	}
	return strings.Join(fields[:], "|")
}

// Result is a geocoded position.
type Result struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
	// Approximate is true when the match is coarser than a street address.
	Approximate bool `json:"approximate,omitempty"`
}

// Geocoder resolves queries. Found is false when the service answered but
// knows no such place; err wraps ErrUnavailable when it could not be asked.
type Geocoder interface {
	Geocode(ctx context.Context, q Query) (res Result, found bool, err error)
}

// ErrUnavailable marks a geocoder that could not be reached at all.
var ErrUnavailable = errors.New("geocoder unavailable")

// ErrNotConfigured is returned by None: no geocoder is configured.
var ErrNotConfigured = errors.New("no geocoder is configured")

// None is the geocoder of a deployment without one: every query fails with
// ErrNotConfigured, so address-only orders become unassigned.
type None struct{}

// Geocode implements Geocoder.
func (None) Geocode(context.Context, Query) (Result, bool, error) {
	return Result{}, false, ErrNotConfigured
}

// ErrNotPrefetched is returned by Prefetched: the address was not geocoded
// before the solve started.
var ErrNotPrefetched = errors.New("the address was not geocoded before the solve started (the manager geocodes every address before a solve Job starts; solve Jobs send no geocoding requests)")

// Prefetched is the geocoder of a solve Job: the manager has geocoded every
// address beforehand with the installation's one rate-limited client, so
// the Job only reads answers (through Cached) and asks no server. A miss
// fails with ErrNotPrefetched: the order becomes unassigned, the depot
// fails the solve.
type Prefetched struct{}

// Geocode implements Geocoder.
func (Prefetched) Geocode(context.Context, Query) (Result, bool, error) {
	return Result{}, false, ErrNotPrefetched
}
