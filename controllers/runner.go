// Package controllers holds the reconcilers of routeopt: the
// OptimizationReconciler moves an Optimization from queued to a terminal
// state by handing it to a Runner (a Job per solve, or a goroutine pool).
// The runners call the solve pipeline through Solver, which cmd wires, and
// the optimization's data through solver/store: this package imports none
// of the solve code.
package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/record"
)

// Phase is what a Runner knows of one optimization's solve.
type Phase int

const (
	// PhaseUnknown: the runner has no solve for it (never started, or lost
	// with a restarted process); the controller starts one.
	PhaseUnknown Phase = iota
	// PhaseRunning: a solve is queued or in progress.
	PhaseRunning
	// PhaseSucceeded: the result is stored.
	PhaseSucceeded
	// PhaseFailed: Outcome.Failure says why.
	PhaseFailed
)

// Outcome is a Runner's answer about one optimization.
type Outcome struct {
	Phase   Phase
	Failure *record.Failure
}

// Runner executes solves. Implementations are keyed by the optimization's
// UID, so a recreated optimization with the same name never adopts an old solve.
type Runner interface {
	// Start begins a solve; starting one that is already known does nothing.
	Start(ctx context.Context, opt *v1alpha1.Optimization) error
	// Observe tells how the solve of opt is going.
	Observe(ctx context.Context, opt *v1alpha1.Optimization) (Outcome, error)
	// Stop cancels the solve of opt and forgets it; stopping an unknown one does nothing.
	Stop(ctx context.Context, opt *v1alpha1.Optimization) error
	// Finish releases what the runner made for opt's solve once it has
	// ended, before the terminal state is written (and again if that write
	// is retried).
	Finish(ctx context.Context, opt *v1alpha1.Optimization) error
	// Forget drops what the runner keeps in memory about a solve whose
	// terminal state is stored.
	Forget(opt *v1alpha1.Optimization)
}

// Solver is the solve pipeline as the in-process runner and Geocoding call
// it; cmd wires in *solver.Pipeline, so the controllers import none of the
// solve code.
type Solver interface {
	// AdmitGeocoding admits on b, before any is sent, the addresses key's
	// solve would send to the geocoder: a *record.Failure
	// (geocoding_unavailable) when they cannot be geocoded in time, a nil
	// ticket when there is nothing to geocode, store.ErrInputPending while
	// the input ConfigMap is not written yet, and context.Canceled when the
	// optimization was cancelled or has finished.
	AdmitGeocoding(ctx context.Context, key types.NamespacedName, b *geobudget.Budget) (*geobudget.Ticket, error)
	// Run solves key and stores its result; each geocoding request counts
	// t (may be nil) down.
	Run(ctx context.Context, key types.NamespacedName, t *geobudget.Ticket) error
	// Geocode runs key's geocoding alone, keeping the answers for its solve
	// Job; each request counts t (may be nil) down.
	Geocode(ctx context.Context, key types.NamespacedName, t *geobudget.Ticket) error
}
