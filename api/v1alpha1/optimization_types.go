package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations the service puts on its objects.
const (
	// IdempotencyKeyHashAnnotation holds the SHA-256 of the Idempotency-Key an
	// Optimization was created with (the key itself is not stored).
	IdempotencyKeyHashAnnotation = "routeopt.io/idempotency-key-sha256"
	// RequestHashAnnotation holds the SHA-256 of the canonical JSON of the
	// create request, to tell a retried request from a different one.
	RequestHashAnnotation = "routeopt.io/request-sha256"
	// ExportsAnnotation holds the optimization's export records (a JSON
	// list, written by the REST API): every API replica answers the same
	// arguments with the same record, and the records go with the
	// optimization at retention.
	ExportsAnnotation = "routeopt.io/exports"
	// QueuedAtAnnotation holds the time (RFC 3339 with nanoseconds) the REST
	// API accepted an optimization: the queue's first-in-first-out key,
	// as creationTimestamp has whole seconds only.
	QueuedAtAnnotation = "routeopt.io/queued-at"
	// QueuedAtLayout is QueuedAtAnnotation's format: RFC 3339 with all nine
	// fraction digits, so its stored size is the same for any time.
	QueuedAtLayout = "2006-01-02T15:04:05.000000000Z07:00"
	// StateLabel mirrors status.state (written by the controller), so that
	// `kubectl get opt -l routeopt.io/state=failed` works: a label selector
	// cannot read status.
	StateLabel = "routeopt.io/state"
	// OptimizationLabel names the Optimization a child object belongs to.
	OptimizationLabel = "routeopt.io/optimization"
	// ResultConfigMapSuffix is appended to an Optimization's name to name its
	// result ConfigMap.
	ResultConfigMapSuffix = "-result"
	// ResultDataKey is the ConfigMap binaryData key holding the gzip JSON result.
	ResultDataKey = "result.json.gz"
)

// State is where an Optimization is in its life.
// +kubebuilder:validation:Enum=queued;running;completed;failed;cancelled
type State string

// The states of an optimization (docs/API.md, "States").
const (
	// StateQueued waits for a solver slot.
	StateQueued State = "queued"
	// StateRunning is being processed; stage and progress tell where.
	StateRunning State = "running"
	// StateCompleted has a result.
	StateCompleted State = "completed"
	// StateFailed carries errorCode and errorMessage.
	StateFailed State = "failed"
	// StateCancelled was cancelled by the caller.
	StateCancelled State = "cancelled"
)

// IsTerminal reports whether no further transition can happen from s.
func (s State) IsTerminal() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// Stage is the current step of a solve.
// +kubebuilder:validation:Enum=queued;geocoding;matrix;optimizing;storing
type Stage string

// The stages a solve passes through, in order.
const (
	StageQueued     Stage = "queued"
	StageGeocoding  Stage = "geocoding"
	StageMatrix     Stage = "matrix"
	StageOptimizing Stage = "optimizing"
	StageStoring    Stage = "storing"
)

// Strategy chooses how routes are planned.
// +kubebuilder:validation:Enum=optimized;baseline
type Strategy string

const (
	// StrategyOptimized searches for the best plan.
	StrategyOptimized Strategy = "optimized"
	// StrategyBaseline keeps the caller's file order, for comparison.
	StrategyBaseline Strategy = "baseline"
)

// Objective chooses what the optimizer minimises.
// +kubebuilder:validation:Enum=distance;duration
type Objective string

const (
	// ObjectiveDistance minimises metres driven.
	ObjectiveDistance Objective = "distance"
	// ObjectiveDuration minimises route time, waiting included.
	ObjectiveDuration Objective = "duration"
)

// Error codes of a failed Optimization (docs/API.md, "Error codes of a
// failed optimization").
const (
	ErrorGeocodingUnavailable = "geocoding_unavailable"
	ErrorMatrixUnavailable    = "matrix_unavailable"
	ErrorSolver               = "solver_error"
	ErrorDeadlineExceeded     = "deadline_exceeded"
	ErrorInternal             = "internal_error"
	// ErrorInvalidInput is a spec the REST API would have refused (422) but
	// that reached the cluster another way, such as kubectl.
	ErrorInvalidInput = "invalid_input"
)

// ConditionFinished is True once an Optimization reached a terminal state;
// its reason tells which.
const ConditionFinished = "Finished"

// Reasons of ConditionFinished and of the Events the controller records.
const (
	ReasonQueued    = "Queued"
	ReasonStarted   = "Started"
	ReasonCompleted = "Completed"
	ReasonFailed    = "Failed"
	ReasonCancelled = "Cancelled"
)

// Depot is where every route starts and ends.
// +kubebuilder:validation:XValidation:rule="(has(self.address) && size(self.address) > 0) || (has(self.latitude) && has(self.longitude))",message="depot needs an address or both latitude and longitude"
// +kubebuilder:validation:XValidation:rule="has(self.latitude) == has(self.longitude)",message="latitude and longitude go together"
type Depot struct {
	// label names the depot on exports.
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

// The cross-field rules of orders and vehicles are not CEL rules: evaluated
// for each of up to 500 list items they cost a quarter of kube-apiserver's
// CPU per create (docs/PERFORMANCE.md). The REST API refuses such requests
// (422) and solver.ValidateSpec fails an Optimization made another way, such
// as with kubectl, with invalid_input. Rules evaluated once per object
// (depot, fleet, spec) stay CEL rules and refuse at admission.

// Order is one delivery. It needs an address or both latitude and longitude,
// and its time window must not end before it starts; its timeWindows do not
// go with timeWindowStart and timeWindowEnd, and each starts after the
// previous one ends. An Optimization breaking this fails with errorCode
// invalid_input.
type Order struct {
	// id is the caller's own reference, returned as order_ref.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	ID string `json:"id,omitempty"`
	// address is the street address.
	// +optional
	// +kubebuilder:validation:MaxLength=300
	Address *string `json:"address,omitempty"`
	// city improves geocoding.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	City *string `json:"city,omitempty"`
	// region is the state or province.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	Region *string `json:"region,omitempty"`
	// postalCode improves geocoding.
	// +optional
	// +kubebuilder:validation:MaxLength=20
	PostalCode *string `json:"postalCode,omitempty"`
	// country improves geocoding.
	// +optional
	// +kubebuilder:validation:MaxLength=60
	Country *string `json:"country,omitempty"`
	// latitude with longitude skips geocoding.
	// +optional
	// +kubebuilder:validation:Minimum=-90
	// +kubebuilder:validation:Maximum=90
	Latitude *float64 `json:"latitude,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// longitude with latitude skips geocoding.
	// +optional
	// +kubebuilder:validation:Minimum=-180
	// +kubebuilder:validation:Maximum=180
	Longitude *float64 `json:"longitude,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// demand in the unit of vehicle capacity; 1 when absent.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Demand *float64 `json:"demand,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// serviceMinutes is the time spent at the stop; 5 when absent.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1440
	ServiceMinutes *float64 `json:"serviceMinutes,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// timeWindowStart is the earliest service start, HH:MM local to the depot.
	// +optional
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	TimeWindowStart *string `json:"timeWindowStart,omitempty"`
	// timeWindowEnd is the latest service start, HH:MM local to the depot.
	// +optional
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	TimeWindowEnd *string `json:"timeWindowEnd,omitempty"`
	// customer is shown on driver exports.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Customer *string `json:"customer,omitempty"`
	// phone is shown on driver exports.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	Phone *string `json:"phone,omitempty"`
	// notes are shown on driver exports.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Notes *string `json:"notes,omitempty"`
	// timeWindows are the windows service may start in, in time order,
	// each starting after the previous one ends; instead of timeWindowStart
	// and timeWindowEnd.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	TimeWindows []TimeWindow `json:"timeWindows,omitempty"`
	// skills the serving vehicle must all have (case-sensitive).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=40
	Skills []string `json:"skills,omitempty"`
	// loads are the order's amounts in named dimensions, counted against the
	// vehicles' capacities of the same names.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	Loads []DimensionLoad `json:"loads,omitempty"`
	// priority decides, when not every order fits, which are served: the
	// larger total priority first, then more orders, then the lower cost;
	// 0 when absent.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Priority *int32 `json:"priority,omitempty"`
}

// Vehicle is one individually described van. Its shift must not end before
// it starts, and its constraints follow VehicleConstraints' rules; an
// Optimization breaking this fails with errorCode invalid_input.
type Vehicle struct {
	// id is returned as vehicle_ref.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	ID string `json:"id,omitempty"`
	// capacity in the unit of order demand.
	// +required
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Capacity float64 `json:"capacity"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// driver is returned as driver_name.
	// +optional
	// +kubebuilder:validation:MaxLength=120
	Driver *string `json:"driver,omitempty"`
	// shiftStart is the earliest departure, HH:MM.
	// +optional
	// +kubebuilder:default="08:00"
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	ShiftStart string `json:"shiftStart,omitempty"`
	// shiftEnd is the latest return to the depot, HH:MM.
	// +optional
	// +kubebuilder:default="18:00"
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	ShiftEnd string `json:"shiftEnd,omitempty"`
	// fixedCost is added to the objective when the vehicle is used.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	FixedCost float64 `json:"fixedCost,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly

	VehicleConstraints `json:",inline"`
}

// Fleet is N identical vans; its constraints apply to each.
// +kubebuilder:validation:XValidation:rule="self.shiftStart <= self.shiftEnd",message="shiftStart must not be after shiftEnd"
// +kubebuilder:validation:XValidation:rule="!has(self.breaks) || self.breaks.all(b, int(b.start.substring(0, 2)) * 60 + int(b.start.substring(3, 5)) + b.minutes <= int(b.end.substring(0, 2)) * 60 + int(b.end.substring(3, 5)))",message="each break's minutes must fit between its start and end"
// +kubebuilder:validation:XValidation:rule="!has(self.breaks) || self.breaks.all(b, self.shiftStart <= b.start && b.end <= self.shiftEnd)",message="breaks must lie inside the shift"
// +kubebuilder:validation:XValidation:rule="!has(self.breaks) || size(self.breaks) < 2 || (self.breaks[0].start <= self.breaks[1].start && self.breaks[0].end <= self.breaks[1].end && (size(self.breaks) < 3 || (self.breaks[1].start <= self.breaks[2].start && self.breaks[1].end <= self.breaks[2].end)))",message="breaks are taken in the listed order: each must start and end no earlier than the one before"
// +kubebuilder:validation:XValidation:rule="!has(self.end) || !has(self.openEnd) || !self.openEnd",message="give either end or openEnd, not both"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || (has(self.start.address) && size(self.start.address) > 0) || (has(self.start.latitude) && has(self.start.longitude))",message="start needs an address or both latitude and longitude"
// +kubebuilder:validation:XValidation:rule="!has(self.start) || has(self.start.latitude) == has(self.start.longitude)",message="start: latitude and longitude go together"
// +kubebuilder:validation:XValidation:rule="!has(self.end) || (has(self.end.address) && size(self.end.address) > 0) || (has(self.end.latitude) && has(self.end.longitude))",message="end needs an address or both latitude and longitude"
// +kubebuilder:validation:XValidation:rule="!has(self.end) || has(self.end.latitude) == has(self.end.longitude)",message="end: latitude and longitude go together"
type Fleet struct {
	// count is the number of vans.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Count int32 `json:"count,omitempty"`
	// capacity of each van.
	// +required
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Capacity float64 `json:"capacity"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// shiftStart is the earliest departure, HH:MM.
	// +optional
	// +kubebuilder:default="08:00"
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	ShiftStart string `json:"shiftStart,omitempty"`
	// shiftEnd is the latest return, HH:MM.
	// +optional
	// +kubebuilder:default="18:00"
	// +kubebuilder:validation:MinLength=5
	// +kubebuilder:validation:MaxLength=5
	// +kubebuilder:validation:Pattern=`^([01][0-9]|2[0-3]):[0-5][0-9]$`
	ShiftEnd string `json:"shiftEnd,omitempty"`
	// fixedCost is added to the objective per van used.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	FixedCost float64 `json:"fixedCost,omitempty"` //nolint:kubeapilinter // floats on purpose: requests round-trip exactly
	// namePrefix names the vans "<prefix> 1" .. "<prefix> N".
	// +optional
	// +kubebuilder:default="Vehicle"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	NamePrefix string `json:"namePrefix,omitempty"`

	VehicleConstraints `json:",inline"`
}

// Options tune the solve.
type Options struct {
	// strategy is optimized (default) or baseline.
	// +optional
	// +kubebuilder:default=optimized
	Strategy Strategy `json:"strategy,omitempty"`
	// objective is distance (default) or duration.
	// +optional
	// +kubebuilder:default=distance
	Objective Objective `json:"objective,omitempty"`
	// solverSeconds is the optimizer's time budget.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=60
	SolverSeconds *int32 `json:"solverSeconds,omitempty"`
}

// InputRef names the ConfigMap that holds an optimization's orders and
// individual vehicles (the Input document, in binaryData input.json.gz or
// data input.json), so that they stay out of the Optimization.
type InputRef struct {
	// name is the ConfigMap's name, in the Optimization's namespace.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`
	// orders is how many orders the ConfigMap holds, so the record can show
	// it before a solve reads them.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=500
	Orders int32 `json:"orders,omitempty"`
	// vehicles is how many individual vehicles it holds: none with a fleet.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Vehicles int32 `json:"vehicles,omitempty"`
	// sha256 is the lowercase hex SHA-256 of binaryData input.json.gz: when
	// set, a ConfigMap whose document differs is refused.
	// +optional
	// +kubebuilder:validation:MinLength=64
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	SHA256 string `json:"sha256,omitempty"`
}

// OptimizationSpec is the create request. Only cancel may change after creation.
// +kubebuilder:validation:XValidation:rule="has(self.orders) != has(self.input)",message="exactly one of orders and input is required"
// +kubebuilder:validation:XValidation:rule="!has(self.input) || !has(self.vehicles)",message="with input, the vehicles are in its ConfigMap"
// +kubebuilder:validation:XValidation:rule="has(self.fleet) != (has(self.vehicles) || (has(self.input) && has(self.input.vehicles) && self.input.vehicles > 0))",message="exactly one of vehicles and fleet is required"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="cancel cannot be undone"
type OptimizationSpec struct {
	// name is a free label.
	// +optional
	// +kubebuilder:validation:MaxLength=120
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable"
	Name *string `json:"name,omitempty"`
	// depot is where routes start and end.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="depot is immutable"
	Depot Depot `json:"depot"`
	// orders to plan; ids are unique. Absent when input names a ConfigMap
	// that holds them.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=500
	Orders []Order `json:"orders,omitempty"`
	// vehicles are the individual vans, when given; ids are unique. With
	// input, they are in its ConfigMap instead.
	// +optional
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Vehicles []Vehicle `json:"vehicles,omitempty"`
	// fleet is N identical vans, when given.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="fleet is immutable"
	Fleet *Fleet `json:"fleet,omitempty"`
	// options tune the solve.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="options are immutable"
	Options *Options `json:"options,omitempty"`
	// input names the ConfigMap holding the orders and the individual
	// vehicles, instead of listing them here: each write to the
	// Optimization then costs the same whatever their number.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="input is immutable"
	Input *InputRef `json:"input,omitempty"`
	// cancel asks the controller to stop the optimization.
	// +optional
	Cancel bool `json:"cancel,omitempty"`
}

// Summary is the KPI digest of a result, for kubectl and the record.
type Summary struct {
	// ordersAssigned counts planned orders.
	// +optional
	OrdersAssigned int32 `json:"ordersAssigned,omitempty"`
	// ordersUnassigned counts orders that could not be planned.
	// +optional
	OrdersUnassigned int32 `json:"ordersUnassigned,omitempty"`
	// vehiclesUsed counts routes.
	// +optional
	VehiclesUsed int32 `json:"vehiclesUsed,omitempty"`
	// distanceMeters is the total distance.
	// +optional
	DistanceMeters int64 `json:"distanceMeters,omitempty"`
	// distance is distanceMeters written for people, like "41.2km".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Distance string `json:"distance,omitempty"`
}

// OptimizationStatus is the record the REST API serves. The controller owns
// state, errorCode, errorMessage, startedAt, finishedAt, orderCount,
// vehicleCount, conditions and observedGeneration; the solver owns stage,
// progress, summary and resultRef. Each writes only its fields
// (server-side apply with its own field manager).
type OptimizationStatus struct {
	// conditions describe the latest observations.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// state is queued, running, completed, failed or cancelled.
	// +optional
	State State `json:"state,omitempty"`
	// stage names the current step.
	// +optional
	Stage Stage `json:"stage,omitempty"`
	// progress is 0 to 100 and never goes backwards.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Progress int32 `json:"progress,omitempty"`
	// orderCount is the number of orders, for kubectl.
	// +optional
	OrderCount int32 `json:"orderCount,omitempty"`
	// vehicleCount is the number of vehicles, for kubectl.
	// +optional
	VehicleCount int32 `json:"vehicleCount,omitempty"`
	// errorCode is set when state is failed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	ErrorCode string `json:"errorCode,omitempty"`
	// errorMessage is set when state is failed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	ErrorMessage string `json:"errorMessage,omitempty"`
	// startedAt is when a solver picked the optimization up.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// finishedAt is when the optimization reached a terminal state.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// summary digests the result.
	// +optional
	Summary *Summary `json:"summary,omitempty"`
	// resultRef names the ConfigMap that holds the result.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ResultRef string `json:"resultRef,omitempty"`
	// observedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// webhooks records the delivery of this optimization's event (its
	// terminal state) to each of the tenant's endpoints, so that a
	// restarted manager neither skips one nor repeats one that succeeded.
	// +optional
	// +listType=map
	// +listMapKey=endpoint
	// +kubebuilder:validation:MaxItems=64
	Webhooks []WebhookDelivery `json:"webhooks,omitempty"`
}

// WebhookResult is how the delivery of an event to one endpoint ended.
// +kubebuilder:validation:Enum=delivered;failed;dropped
type WebhookResult string

const (
	// WebhookDelivered: the endpoint answered an attempt with a 2xx.
	WebhookDelivered WebhookResult = "delivered"
	// WebhookFailed: every attempt failed.
	WebhookFailed WebhookResult = "failed"
	// WebhookDropped: the endpoint was disabled, or lost its signing
	// secret, before the event could be sent.
	WebhookDropped WebhookResult = "dropped"
)

// WebhookDelivery is the delivery of an optimization's event to one endpoint.
type WebhookDelivery struct {
	// endpoint is the WebhookEndpoint's uid (its id in the REST API).
	// +required
	// +kubebuilder:validation:MaxLength=64
	Endpoint string `json:"endpoint"`
	// eventID is the event's id (evt_...).
	// +required
	// +kubebuilder:validation:MaxLength=64
	EventID string `json:"eventID"`
	// result tells how it ended.
	// +required
	Result WebhookResult `json:"result,omitempty"`
	// attempts is how many attempts were made.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Attempts int32 `json:"attempts,omitempty"`
	// lastStatus is the HTTP status of the last attempt, absent when no
	// attempt got an answer.
	// +optional
	LastStatus *int32 `json:"lastStatus,omitempty"`
	// message says why the last attempt failed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
	// time is when the delivery ended.
	// +required
	Time metav1.Time `json:"time"`
}

// Optimization is one routing request and its record. Its name is the
// optimization id (a UUID): the CRD refuses any other name, which the REST
// API could never serve.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')",message="metadata.name must be a lowercase UUID (the optimization id the REST API serves)"
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=opt,categories=routeopt
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.status.stage`
// +kubebuilder:printcolumn:name="Progress",type=integer,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Orders",type=integer,JSONPath=`.status.orderCount`
// +kubebuilder:printcolumn:name="Vehicles",type=integer,JSONPath=`.status.vehicleCount`
// +kubebuilder:printcolumn:name="Distance",type=string,JSONPath=`.status.summary.distance`
// +kubebuilder:printcolumn:name="Unassigned",type=integer,JSONPath=`.status.summary.ordersUnassigned`
// +kubebuilder:printcolumn:name="Error",type=string,JSONPath=`.status.errorCode`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Optimization struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the create request.
	// +required
	Spec OptimizationSpec `json:"spec"`
	// status is the record.
	// +optional
	Status OptimizationStatus `json:"status,omitempty"`
}

// OptimizationList is a list of Optimizations.
// +kubebuilder:object:root=true
type OptimizationList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the list's metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Optimizations.
	Items []Optimization `json:"items"`
}

// VehicleTotal is the number of vehicles the spec describes.
func (s *OptimizationSpec) VehicleTotal() int {
	if s.Fleet != nil {
		return int(s.Fleet.Count)
	}
	if s.Input != nil && s.Vehicles == nil {
		return int(s.Input.Vehicles)
	}
	return len(s.Vehicles)
}

// EffectiveOptions returns the options with defaults applied.
func (s *OptimizationSpec) EffectiveOptions() Options {
	o := Options{Strategy: DefaultStrategy, Objective: DefaultObjective}
	if s.Options != nil {
		if s.Options.Strategy != "" {
			o.Strategy = s.Options.Strategy
		}
		if s.Options.Objective != "" {
			o.Objective = s.Options.Objective
		}
		o.SolverSeconds = s.Options.SolverSeconds
	}
	return o
}

// ResultConfigMapName is the name of the ConfigMap holding o's result.
func (o *Optimization) ResultConfigMapName() string {
	return o.Name + ResultConfigMapSuffix
}

// DisplayStage is the stage to show for s. The solver alone writes stage,
// so a record that no solve has reported on yet shows its state's own:
// queued while waiting, and the first step (geocoding) once handed to a
// solver that has not reported yet. A terminal record keeps the last
// stage reached.
func (s *OptimizationStatus) DisplayStage() Stage {
	switch {
	case s.State == "" || s.State == StateQueued:
		return StageQueued
	case s.Stage == "" || s.Stage == StageQueued:
		if s.State == StateRunning {
			return StageGeocoding
		}
		return StageQueued
	}
	return s.Stage
}

// QueuedAt is o's place in the solve queue: the REST API's QueuedAtAnnotation
// when it lies within a second of creationTimestamp (it is stamped just
// before the create), else creationTimestamp. The bound keeps an annotation
// written by hand (kubectl) from moving an optimization ahead of others by
// more than the second creationTimestamp cannot tell apart.
func (o *Optimization) QueuedAt() time.Time {
	created := o.CreationTimestamp.Time
	if v, ok := o.Annotations[QueuedAtAnnotation]; ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			if d := t.Sub(created); d > -time.Second && d < time.Second {
				return t
			}
		}
	}
	return created
}
