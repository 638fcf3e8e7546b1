// Package solver is the solve pipeline a runner executes for one
// Optimization: it reads the custom resource, geocodes, builds the travel
// matrix, optimizes and stores the result ConfigMap, reporting stage and
// progress on the record as it goes. The controller decides the state; the
// pipeline only reports how far it got and what it found.
package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/vrp"
)

// Progress points of the stages; optimizing spreads over the range between.
const (
	progressGeocoding  = 5
	progressMatrix     = 15
	progressOptimizing = 20
	progressStoring    = 96
	progressDone       = 100
)

// DefaultProgressInterval bounds how often progress is written to the record.
const DefaultProgressInterval = time.Second

// Pipeline runs solves. It is safe for concurrent use.
type Pipeline struct {
	// Client writes the Optimization's status and its result.
	Client client.Client
	// Reader reads the Optimization from the API server (not a cache, whose
	// copy may predate a cancel); nil means Client.
	Reader client.Reader
	// Geocoder resolves addresses; nil means none is configured.
	Geocoder geocode.Geocoder
	// GeocodeCacheTTL is how long a tenant's geocoding answers are reused;
	// 0 means geocode.DefaultCacheTTL.
	GeocodeCacheTTL time.Duration
	// Matrix computes travel; nil means Haversine with defaults.
	Matrix matrix.Provider
	// ProgressInterval bounds status writes while optimizing; 0 means one second.
	ProgressInterval time.Duration
}

// Run solves the named Optimization. It returns nil once the result is
// stored, ctx.Err() when cancelled (nothing is stored then), and a *record.Failure
// for every other way it can end.
func (p *Pipeline) Run(ctx context.Context, key types.NamespacedName) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = record.Failf(v1alpha1.ErrorInternal, "solver crashed: %v", r)
		}
	}()
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("optimization", key.String()))
	opt, err := p.read(ctx, key)
	if err != nil {
		return err
	}
	// The CRD no longer checks orders' cross-field rules (ValidateSpec).
	if f := ValidateSpec(&opt.Spec); f != nil {
		return f
	}
	s := &solve{p: p, opt: opt, progress: opt.Status.Progress}

	if err := s.report(ctx, v1alpha1.StageGeocoding, progressGeocoding); err != nil {
		return err
	}
	start := time.Now()
	in, err := s.geocode(ctx)
	if err != nil {
		return err
	}
	observeStage(ctx, v1alpha1.StageGeocoding, start)
	if err := s.report(ctx, v1alpha1.StageMatrix, progressMatrix); err != nil {
		return err
	}
	start = time.Now()
	m, err := s.matrix(ctx, in)
	if err != nil {
		return err
	}
	observeStage(ctx, v1alpha1.StageMatrix, start)
	if err := s.report(ctx, v1alpha1.StageOptimizing, progressOptimizing); err != nil {
		return err
	}
	start = time.Now()
	sol, err := s.optimize(ctx, in, m)
	if err != nil {
		return err
	}
	observeStage(ctx, v1alpha1.StageOptimizing, start)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := s.report(ctx, v1alpha1.StageStoring, progressStoring); err != nil {
		return err
	}
	// A cancel may have arrived while optimizing: no result is stored after it.
	if _, err := p.read(ctx, key); err != nil {
		return err
	}
	start = time.Now()
	result := buildResult(ctx, opt, in, m, sol)
	if err := storeResult(ctx, p.Client, opt, result); err != nil {
		return err
	}
	observeStage(ctx, v1alpha1.StageStoring, start)
	return record.ApplySolver(ctx, p.Client, key, record.SolverStatus{
		Stage:     v1alpha1.StageStoring,
		Progress:  progressDone,
		ResultRef: opt.ResultConfigMapName(),
		Summary:   summaryOf(result),
	})
}

// read gets the Optimization from the API server; one that was cancelled or
// has finished ends the run with context.Canceled.
func (p *Pipeline) read(ctx context.Context, key types.NamespacedName) (*v1alpha1.Optimization, error) {
	reader := p.Reader
	if reader == nil {
		reader = p.Client
	}
	opt := &v1alpha1.Optimization{}
	if err := reader.Get(ctx, key, opt); err != nil {
		return nil, fmt.Errorf("unable to read optimization: %w", err)
	}
	if opt.Spec.Cancel || opt.Status.State.IsTerminal() {
		return nil, context.Canceled
	}
	return opt, nil
}

// solve is the state of one Run.
type solve struct {
	p        *Pipeline
	opt      *v1alpha1.Optimization
	mu       sync.Mutex
	progress int32
}

// report writes stage and progress; progress never goes backwards.
func (s *solve) report(ctx context.Context, stage v1alpha1.Stage, progress int32) error {
	s.mu.Lock()
	progress = max(progress, s.progress)
	s.progress = progress
	s.mu.Unlock()
	err := record.ApplySolver(ctx, s.p.Client, client.ObjectKeyFromObject(s.opt), record.SolverStatus{Stage: stage, Progress: progress})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("unable to report stage %s: %w", stage, err)
	}
	return nil
}

// located is the problem after geocoding: the depot and the orders that
// have a position, with the warnings and unassigned orders found so far.
type located struct {
	depot      matrix.Point
	orders     []int          // spec order index of each located order
	points     []matrix.Point // depot first, then located orders
	unassigned []v1alpha1.Unassigned
	unassignAt []int // spec index of each unassigned entry
	warnings   []v1alpha1.Warning
}

func (p *Pipeline) geocodeCacheTTL() time.Duration {
	if p.GeocodeCacheTTL > 0 {
		return p.GeocodeCacheTTL
	}
	return geocode.DefaultCacheTTL
}

func (s *solve) geocoder() geocode.Geocoder {
	if s.p.Geocoder == nil {
		return geocode.None{}
	}
	return s.p.Geocoder
}

// geocodeWorkers is how many orders are geocoded at once by default; the
// geocoder's own rate limit and concurrency bound still apply.
const geocodeWorkers = 8

// geocoded is the answer for one order.
type geocoded struct {
	query geocode.Query
	res   geocode.Result
	found bool
	err   error
}

// geocode places the depot and every order, through the tenant's cache.
func (s *solve) geocode(ctx context.Context) (*located, error) {
	spec := &s.opt.Spec
	in := &located{}
	g := s.geocoder()
	_, noGeocoder := g.(geocode.None)
	if !noGeocoder {
		store, err := loadGeocodeCache(ctx, s.p.Client, s.opt)
		if err != nil {
			return nil, err
		}
		// Answers are kept as they come, and on every way out (a failure,
		// a cancel), so a retried solve asks only for the rest.
		defer store.keepSaving(ctx, geocodeSaveEvery, geocodeSaveInterval)()
		g = &geocode.Cached{Next: g, Store: store, TTL: s.p.geocodeCacheTTL(), Tenant: s.opt.Namespace}
	}

	if spec.Depot.Latitude != nil && spec.Depot.Longitude != nil {
		in.depot = matrix.Point{Lat: *spec.Depot.Latitude, Lon: *spec.Depot.Longitude}
	} else {
		q := geocode.Query{Address: deref(spec.Depot.Address)}
		res, found, err := g.Geocode(ctx, q)
		countProvider("geocoder", err)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, geocode.ErrNotConfigured):
			return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the depot has no coordinates and no geocoder is configured")
		case err != nil:
			return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable, "geocoding the depot failed: %v", err)
		case !found:
			return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the depot address %q was not found by the geocoder", q.String())
		}
		in.depot = matrix.Point{Lat: res.Lat, Lon: res.Lon}
	}
	in.points = append(in.points, in.depot)

	answers, err := geocodeOrders(ctx, g, spec.Orders)
	if err != nil {
		return nil, err
	}
	missing := 0
	for i := range spec.Orders {
		o := &spec.Orders[i]
		if o.Latitude != nil && o.Longitude != nil {
			in.orders = append(in.orders, i)
			in.points = append(in.points, matrix.Point{Lat: *o.Latitude, Lon: *o.Longitude})
			continue
		}
		a := answers[i]
		switch {
		case errors.Is(a.err, geocode.ErrNotConfigured):
			missing++
			in.unassign(i, o.ID, v1alpha1.UnassignedGeocodeFailed, fmt.Sprintf("order %q has no coordinates and no geocoder is configured", o.ID))
		case errors.Is(a.err, geocode.ErrUnavailable):
			return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the geocoder could not be reached: %v", a.err)
		case a.err != nil:
			in.unassign(i, o.ID, v1alpha1.UnassignedGeocodeFailed, fmt.Sprintf("geocoding %q failed: %v", a.query.String(), a.err))
		case !a.found:
			in.unassign(i, o.ID, v1alpha1.UnassignedGeocodeFailed, fmt.Sprintf("address %q was not found", a.query.String()))
		default:
			if a.res.Approximate {
				ref := o.ID
				in.warnings = append(in.warnings, v1alpha1.Warning{Code: v1alpha1.WarningGeocodeApproximate, Message: fmt.Sprintf("address %q was placed approximately", a.query.String()), OrderRef: &ref})
			}
			in.orders = append(in.orders, i)
			in.points = append(in.points, matrix.Point{Lat: a.res.Lat, Lon: a.res.Lon})
		}
	}
	if noGeocoder && missing > 0 {
		in.warnings = append(in.warnings, v1alpha1.Warning{
			Code:    v1alpha1.WarningNoGeocoder,
			Message: fmt.Sprintf("%d order(s) without coordinates could not be placed: no geocoder is configured; send latitude and longitude", missing),
		})
	}
	return in, nil
}

// geocodeOrders asks the geocoder for every order without coordinates, a
// few at a time. It stops at the first unreachable-geocoder answer and when
// ctx ends.
func geocodeOrders(parent context.Context, g geocode.Geocoder, orders []v1alpha1.Order) ([]geocoded, error) {
	answers := make([]geocoded, len(orders))
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	for range geocodeWorkers {
		wg.Go(func() {
			for i := range work {
				o := &orders[i]
				q := geocode.Query{Address: deref(o.Address), City: deref(o.City), Region: deref(o.Region), PostalCode: deref(o.PostalCode), Country: deref(o.Country)}
				res, found, err := g.Geocode(ctx, q)
				countProvider("geocoder", err)
				answers[i] = geocoded{query: q, res: res, found: found, err: err}
				if errors.Is(err, geocode.ErrUnavailable) {
					cancel()
				}
			}
		})
	}
	for i := range orders {
		if orders[i].Latitude != nil && orders[i].Longitude != nil {
			continue
		}
		select {
		case work <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	for _, a := range answers {
		if errors.Is(a.err, geocode.ErrUnavailable) {
			return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the geocoder could not be reached: %v", a.err)
		}
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	return answers, nil
}

func (in *located) unassign(specIndex int, ref, reason, msg string) {
	in.unassigned = append(in.unassigned, v1alpha1.Unassigned{OrderRef: ref, Reason: reason, Message: msg})
	in.unassignAt = append(in.unassignAt, specIndex)
}

func (s *solve) matrix(ctx context.Context, in *located) (*matrix.Matrix, error) {
	provider := s.p.Matrix
	if provider == nil {
		provider = matrix.Haversine{}
	}
	m, err := provider.Matrix(ctx, in.points)
	countProvider("matrix", err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, record.Failf(v1alpha1.ErrorMatrixUnavailable, "building the travel matrix failed: %v", err)
	}
	if n := len(m.Estimated); n > 0 {
		in.warnings = append(in.warnings, v1alpha1.Warning{
			Code:    v1alpha1.WarningMatrixEstimated,
			Message: fmt.Sprintf("the road network has no route for %d pair(s) of stops; their travel is estimated from the straight-line distance", n),
		})
	}
	return m, nil
}

// fleetVehicle is one vehicle of the problem with its display data.
type fleetVehicle struct {
	ref    string
	driver *string
	vrp.Vehicle
}

// vehicles expands the spec's vehicles or fleet.
func vehicles(spec *v1alpha1.OptimizationSpec) ([]fleetVehicle, error) {
	var out []fleetVehicle
	add := func(ref string, driver *string, capacity float64, start, end string, fixed float64) error {
		ss, err := ParseClock(orDefault(start, "08:00"))
		if err != nil {
			return err
		}
		se, err := ParseClock(orDefault(end, "18:00"))
		if err != nil {
			return err
		}
		out = append(out, fleetVehicle{ref: ref, driver: driver, Vehicle: vrp.Vehicle{Capacity: capacity, ShiftStart: ss, ShiftEnd: se, FixedCost: fixed}})
		return nil
	}
	if f := spec.Fleet; f != nil {
		prefix := orDefault(f.NamePrefix, "Vehicle")
		for i := range int(f.Count) {
			if err := add(fmt.Sprintf("%s %d", prefix, i+1), nil, f.Capacity, f.ShiftStart, f.ShiftEnd, f.FixedCost); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	for _, v := range spec.Vehicles {
		if err := add(v.ID, v.Driver, v.Capacity, v.ShiftStart, v.ShiftEnd, v.FixedCost); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// problem translates the located orders into the solver's model.
func problem(spec *v1alpha1.OptimizationSpec, in *located, m *matrix.Matrix, fleet []fleetVehicle) (*vrp.Problem, error) {
	p := &vrp.Problem{Distance: m.Distance, Duration: m.Duration, Objective: vrp.ObjectiveDistance}
	if spec.EffectiveOptions().Objective == v1alpha1.ObjectiveDuration {
		p.Objective = vrp.ObjectiveDuration
	}
	for _, v := range fleet {
		p.Vehicles = append(p.Vehicles, v.Vehicle)
	}
	for _, idx := range in.orders {
		o := &spec.Orders[idx]
		vo := vrp.Order{Demand: derefOr(o.Demand, 1), ServiceS: int(math.Round(derefOr(o.ServiceMinutes, 5) * 60)), WindowEnd: vrp.NoWindowEnd}
		if o.TimeWindowStart != nil {
			t, err := ParseClock(*o.TimeWindowStart)
			if err != nil {
				return nil, err
			}
			vo.WindowStart = t
		}
		if o.TimeWindowEnd != nil {
			t, err := ParseClock(*o.TimeWindowEnd)
			if err != nil {
				return nil, err
			}
			vo.WindowEnd = t
		}
		p.Orders = append(p.Orders, vo)
	}
	return p, p.Validate()
}

// solution is the solver's answer with the vehicles it refers to.
type solution struct {
	*vrp.Solution
	fleet   []fleetVehicle
	problem *vrp.Problem
}

// DefaultSolverSeconds is the optimizer's budget when the request sets none:
// enough for small problems to converge, growing with size up to 15 s.
func DefaultSolverSeconds(orders int) int {
	return min(15, 2+orders/50)
}

func (s *solve) optimize(ctx context.Context, in *located, m *matrix.Matrix) (*solution, error) {
	spec := &s.opt.Spec
	fleet, err := vehicles(spec)
	if err != nil {
		return nil, record.Failf(v1alpha1.ErrorSolver, "invalid vehicles: %v", err)
	}
	prob, err := problem(spec, in, m, fleet)
	if err != nil {
		return nil, record.Failf(v1alpha1.ErrorSolver, "invalid problem: %v", err)
	}
	out := &solution{fleet: fleet, problem: prob}
	if len(prob.Orders) == 0 {
		out.Solution = &vrp.Solution{}
		return out, nil
	}
	opts := spec.EffectiveOptions()
	if opts.Strategy == v1alpha1.StrategyBaseline {
		out.Solution, err = vrp.Baseline(prob)
	} else {
		seconds := DefaultSolverSeconds(len(prob.Orders))
		if opts.SolverSeconds != nil {
			seconds = int(*opts.SolverSeconds)
		}
		reporter := s.progressReporter(ctx)
		out.Solution, err = vrp.Solve(ctx, prob, vrp.Options{
			TimeLimit: time.Duration(seconds) * time.Second,
			Seed:      1,
			Progress:  reporter.observe,
		})
		reporter.stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, record.Failf(v1alpha1.ErrorSolver, "optimization failed: %v", err)
	}
	return out, nil
}

// progressReporter turns the solver's progress callbacks into status writes,
// at most one per interval, off the solver's goroutine.
type progressReporter struct {
	s       *solve
	ctx     context.Context
	latest  chan int32
	done    chan struct{}
	stopped sync.Once
}

func (s *solve) progressReporter(ctx context.Context) *progressReporter {
	interval := s.p.ProgressInterval
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	r := &progressReporter{s: s, ctx: ctx, latest: make(chan int32, 1), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		var last time.Time
		for p := range r.latest {
			if time.Since(last) < interval {
				continue
			}
			last = time.Now()
			// A failed progress write is not worth failing the solve for.
			_ = s.report(ctx, v1alpha1.StageOptimizing, p)
		}
	}()
	return r
}

// observe maps a solver fraction onto the optimizing range; it never blocks.
func (r *progressReporter) observe(fraction float64) {
	p := progressOptimizing + int32(math.Floor(fraction*float64(progressStoring-progressOptimizing-1)))
	select {
	case r.latest <- p:
	default:
		select { // replace a stale pending value with the newer one
		case <-r.latest:
		default:
		}
		select {
		case r.latest <- p:
		default:
		}
	}
}

func (r *progressReporter) stop() {
	r.stopped.Do(func() { close(r.latest) })
	<-r.done
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefOr(f *float64, def float64) float64 {
	if f == nil {
		return def
	}
	return *f
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
