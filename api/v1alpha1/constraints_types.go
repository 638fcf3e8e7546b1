package v1alpha1

// The fleet constraints beyond a single capacity, window and shift: several
// windows, skills, named load dimensions and priorities on orders; skills,
// capacities in those dimensions, breaks, route limits and start and end
// locations on vehicles. All optional: a spec without them means what it
// meant before they existed. As for the other per-order and per-vehicle
// rules, their cross-field rules are checked by the REST API (422) and by the
// solve (invalid_input), not by CEL; only the fleet's, evaluated once per
// object, are CEL rules.

// TimeWindow is one window of an order: service starts no earlier than start
// and no later than end.
type TimeWindow struct {
	// start is the earliest service start, HH:MM local to the depot.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	Start string `json:"start,omitempty"`
	// end is the latest service start, HH:MM; not before start.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	End string `json:"end,omitempty"`
}

// DimensionLoad is an order's amount in one named load dimension.
type DimensionLoad struct {
	// name is the dimension, such as weight_kg; the vehicles' capacities
	// must name it too.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name,omitempty"`
	// value is the amount, in the dimension's own unit.
	// +required
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Value float64 `json:"value"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
}

// DimensionCapacity is a vehicle's capacity in one named load dimension.
type DimensionCapacity struct {
	// name is the dimension, such as weight_kg.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	Name string `json:"name,omitempty"`
	// value is the capacity, in the dimension's own unit.
	// +required
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Value float64 `json:"value"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
}

// Break is a rest a used vehicle takes: minutes long, lying wholly between
// start and end, inside the shift. It is taken where the vehicle is: at its
// start before leaving, at a stop after the service, or at a stop while
// waiting for the window to open (the wait counts towards it). A vehicle
// without stops takes none.
type Break struct {
	// start is the earliest the break may begin, HH:MM.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	Start string `json:"start,omitempty"`
	// end is the latest the break may finish, HH:MM.
	// +required
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	End string `json:"end,omitempty"`
	// minutes is how long the break lasts; start plus minutes is not after end.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=480
	Minutes int32 `json:"minutes,omitempty"`
}

// Location is a vehicle's start or end: an address, or both latitude and
// longitude, as for the depot.
type Location struct {
	// label names the place on exports.
	// +optional
	// +kubebuilder:validation:MaxLength=120
	Label *string `json:"label,omitempty"`
	// address is geocoded when coordinates are absent.
	// +optional
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=300
	Address *string `json:"address,omitempty"`
	// latitude in degrees (WGS 84).
	// +optional
	// +kubebuilder:validation:Minimum=-90
	// +kubebuilder:validation:Maximum=90
	Latitude *float64 `json:"latitude,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// longitude in degrees (WGS 84).
	// +optional
	// +kubebuilder:validation:Minimum=-180
	// +kubebuilder:validation:Maximum=180
	Longitude *float64 `json:"longitude,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
}

// VehicleConstraints are what a vehicle (or each vehicle of a fleet) has and
// may do beyond its capacity and shift. Breaks lie inside the shift and each
// starts and ends no earlier than the one before; end does not go with
// openEnd.
type VehicleConstraints struct {
	// skills the vehicle has; an order needing one it lacks cannot go on it
	// (case-sensitive).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=40
	Skills []string `json:"skills,omitempty"`
	// capacities in named load dimensions; every dimension an order's loads
	// name must be here.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Capacities []DimensionCapacity `json:"capacities,omitempty"`
	// Fleet's CEL rule on the order of breaks compares each neighbouring
	// pair of a list of at most three: raising MaxItems means extending it.

	// breaks the vehicle takes when it is used, in this order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=3
	Breaks []Break `json:"breaks,omitempty"`
	// maxDurationMinutes bounds the route from departure to return, breaks
	// and waiting included.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1440
	MaxDurationMinutes int32 `json:"maxDurationMinutes,omitempty"`
	// maxDistanceKm bounds the route's driving distance, the legs from the
	// start and to the end included.
	// +optional
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	MaxDistanceKm float64 `json:"maxDistanceKm,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// maxStops bounds the number of stops of the route.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=500
	MaxStops int32 `json:"maxStops,omitempty"`
	// start is where the route begins; the depot when absent.
	// +optional
	Start *Location `json:"start,omitempty"`
	// end is where the route ends; the depot when absent.
	// +optional
	End *Location `json:"end,omitempty"`
	// openEnd ends the route at its last stop, with no leg back.
	// +optional
	OpenEnd *bool `json:"openEnd,omitempty"`
}
