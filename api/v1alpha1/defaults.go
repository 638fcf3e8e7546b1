package v1alpha1

import "time"

// Defaults of a request's optional fields, in one place: the REST API fills
// them in before a request is stored, and the solver applies them to an
// Optimization made another way (kubectl, a Go client) that left them out.
// The CRD's +kubebuilder:default markers repeat the shift and name-prefix
// values, since markers cannot name a constant.
const (
	DefaultShiftStart      = "08:00"
	DefaultShiftEnd        = "18:00"
	DefaultDemand          = 1.0
	DefaultServiceMinutes  = 5.0
	DefaultFleetNamePrefix = "Vehicle"
	DefaultStrategy        = StrategyOptimized
	DefaultObjective       = ObjectiveDistance
)

// maxDefaultSolverSeconds caps the optimizer's default budget.
const maxDefaultSolverSeconds = 15

// DefaultSolverSeconds is the optimizer's budget when the request sets none:
// enough for small problems to converge, growing with size up to 15 s.
func DefaultSolverSeconds(orders int) int {
	return min(maxDefaultSolverSeconds, 2+orders/50)
}

// SolverBudget is how long the optimizer may search a problem of the given
// number of orders: the request's solverSeconds, else DefaultSolverSeconds.
// The solver and the solve Job's deadline both take it from here, so the
// deadline always covers the search.
func (o Options) SolverBudget(orders int) time.Duration {
	seconds := DefaultSolverSeconds(orders)
	if o.SolverSeconds != nil {
		seconds = int(*o.SolverSeconds)
	}
	return time.Duration(seconds) * time.Second
}

// Shift is the vehicle's shift with the defaults applied.
func (v *Vehicle) Shift() (start, end string) {
	return orDefault(v.ShiftStart, DefaultShiftStart), orDefault(v.ShiftEnd, DefaultShiftEnd)
}

// Shift is the fleet's shift with the defaults applied.
func (f *Fleet) Shift() (start, end string) {
	return orDefault(f.ShiftStart, DefaultShiftStart), orDefault(f.ShiftEnd, DefaultShiftEnd)
}

// EffectiveNamePrefix is the prefix of the fleet's vehicle names.
func (f *Fleet) EffectiveNamePrefix() string {
	return orDefault(f.NamePrefix, DefaultFleetNamePrefix)
}

// EffectiveDemand is the order's demand with the default applied.
func (o *Order) EffectiveDemand() float64 {
	if o.Demand == nil {
		return DefaultDemand
	}
	return *o.Demand
}

// EffectiveServiceMinutes is the order's service time with the default applied.
func (o *Order) EffectiveServiceMinutes() float64 {
	if o.ServiceMinutes == nil {
		return DefaultServiceMinutes
	}
	return *o.ServiceMinutes
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
