package controllers

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/record"
)

// ReasonGeocodingSlow is the Event reason that tells, before any request
// is sent, that a solve's geocoding will take a while at the configured rate.
const ReasonGeocodingSlow = "GeocodingSlow"

// geocodeGrace is added to twice the estimate to bound a solve's geocoding
// in the manager: room for retries and a slow server, not for a stuck one.
const geocodeGrace = 2 * time.Minute

// Geocoding runs the geocoding phase of Job-run solves in the manager, with
// the manager's one geocoder, so the installation's rate is one budget
// however many Jobs run (the public Nominatim allows one request a second in
// all). Each solve's geocoding is a goroutine with its own context,
// cancelled by stop; they all wait on the geocoder's shared rate limiter.
// A finished one sends an event on Events so the controller creates the
// Job at once. Only the leader reconciles, so only the leader geocodes.
type Geocoding struct {
	solver   Solver
	budget   *geobudget.Budget
	recorder events.EventRecorder
	backgroundRuns
}

// NewGeocoding geocodes with s's geocoder within budget; recorder (may be
// nil) tells the Optimization when its geocoding will be slow. Geocoding
// stops when base is cancelled.
func NewGeocoding(base context.Context, s Solver, budget *geobudget.Budget, recorder events.EventRecorder) *Geocoding {
	return &Geocoding{solver: s, budget: budget, recorder: recorder, backgroundRuns: newBackgroundRuns(base)}
}

// admitGeocoding admits opt's addresses on budget before any is sent (a
// *record.Failure when they cannot be geocoded in time) and warns opt with
// an Event when it will take a while. The in-process runner shares it.
func admitGeocoding(ctx context.Context, s Solver, budget *geobudget.Budget, recorder events.EventRecorder, opt *v1alpha1.Optimization) (*geobudget.Ticket, error) {
	ticket, err := s.AdmitGeocoding(ctx, client.ObjectKeyFromObject(opt), budget)
	if err != nil || ticket == nil {
		return ticket, err
	}
	if ticket.Slow && recorder != nil {
		recorder.Eventf(opt, nil, corev1.EventTypeWarning, ReasonGeocodingSlow, "Geocode", "%s", ticket.Message())
	}
	return ticket, nil
}

// start begins geocoding opt (the cached copy is enough) unless it is
// known. It answers whether the Job must wait: false when there is nothing
// to geocode or geocoding has succeeded.
func (g *Geocoding) start(ctx context.Context, opt *v1alpha1.Optimization) (wait bool, err error) {
	// The controller never reconciles one optimization twice at once, so
	// the lock need not be held while admitting.
	if run, ok := g.lookup(opt.UID); ok {
		return !run.done || run.err != nil, nil
	}
	ticket, err := admitGeocoding(ctx, g.solver, g.budget, g.recorder, opt)
	var f *record.Failure
	switch {
	case errors.As(err, &f):
		g.add(opt.UID, &backgroundRun{cancel: func() {}, done: true, err: f})
		g.notify(opt)
		return true, nil
	case errors.Is(err, context.Canceled):
		return true, nil // cancelled or finished meanwhile: the controller sees it
	case err != nil:
		return false, err
	case ticket == nil || ticket.Addresses == 0:
		ticket.Release()
		return false, nil
	}
	limit := 2*ticket.Wait + geocodeGrace
	runCtx, cancel := context.WithTimeout(g.base, limit)
	run := &backgroundRun{cancel: cancel}
	g.add(opt.UID, run)
	key := client.ObjectKeyFromObject(opt)
	g.wg.Go(func() {
		defer cancel()
		defer ticket.Release()
		err := g.solver.Geocode(runCtx, key, ticket)
		if errors.Is(err, context.DeadlineExceeded) || (err != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) && g.base.Err() == nil) {
			err = record.Failf(v1alpha1.ErrorGeocodingUnavailable, "geocoding took longer than %s (%s): the geocoder answers more slowly than its rate",
				limit.Round(time.Second), ticket.Message())
		}
		g.end(run, err)
		if errors.Is(err, context.Canceled) {
			return // stopped on purpose, or the manager is shutting down
		}
		g.notify(opt)
	})
	return true, nil
}

// observe tells how opt's geocoding goes; known is false when there is none.
func (g *Geocoding) observe(opt *v1alpha1.Optimization) (out Outcome, known bool) {
	run, ok := g.lookup(opt.UID)
	switch {
	case !ok:
		return Outcome{}, false
	case !run.done, errors.Is(run.err, context.Canceled):
		// Canceled: the manager is shutting down; its successor starts over.
		return Outcome{Phase: PhaseRunning}, true
	case run.err != nil:
		return Outcome{Phase: PhaseFailed, Failure: record.AsFailure(run.err)}, true
	default:
		return Outcome{Phase: PhaseSucceeded}, true
	}
}
