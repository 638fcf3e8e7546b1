package v1alpha1

import "strings"

// LocationProblem is what keeps a depot or an order from being placed on
// the map (docs/API.md, "Creating an optimization"). The REST API refuses
// it with 422 before anything is stored, the CRD's CEL rules refuse a
// depot's at admission, and a solve fails an order's with invalid_input;
// each words it for its reader, all decide it with CheckLocation.
type LocationProblem int32

const (
	// LocationOK is an address, or both coordinates.
	LocationOK LocationProblem = iota
	// LocationUnpaired is a latitude without its longitude, or the reverse.
	LocationUnpaired
	// LocationMissing is neither an address nor coordinates; an empty or
	// blank address is no address.
	LocationMissing
)

// CheckLocation is the location rule of depots and orders.
func CheckLocation(address *string, latitude, longitude *float64) LocationProblem {
	switch {
	case (latitude == nil) != (longitude == nil):
		return LocationUnpaired
	case latitude == nil && !HasText(address):
		return LocationMissing
	}
	return LocationOK
}

// HasText reports whether an optional text is given and not blank, as an
// address must be to count.
func HasText(s *string) bool { return s != nil && strings.TrimSpace(*s) != "" }
