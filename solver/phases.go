package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
	"routeopt.io/routeopt/solver/vrp"
)

// Progress points of the stages; optimizing spreads over the range between.
const (
	progressGeocoding  = 5
	progressMatrix     = 15
	progressOptimizing = 20
	progressStoring    = 96
)

// phase is one stage of a solve: the stage and progress reported when it
// starts, and its work on the scope.
type phase struct {
	stage    v1alpha1.Stage
	progress int32
	run      func(*scope, context.Context) error
}

var (
	geocodingPhase  = phase{v1alpha1.StageGeocoding, progressGeocoding, (*scope).geocode}
	matrixPhase     = phase{v1alpha1.StageMatrix, progressMatrix, (*scope).buildMatrix}
	optimizingPhase = phase{v1alpha1.StageOptimizing, progressOptimizing, (*scope).optimize}
	storingPhase    = phase{v1alpha1.StageStoring, progressStoring, (*scope).saveResult}

	// solvePhases is a whole solve, in order.
	solvePhases = []phase{geocodingPhase, matrixPhase, optimizingPhase, storingPhase}
)

func (p *Pipeline) geocodeCacheTTL() time.Duration {
	if p.GeocodeCacheTTL > 0 {
		return p.GeocodeCacheTTL
	}
	return geocode.DefaultCacheTTL
}

func (s *scope) geocoder() geocode.Geocoder {
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

// geocode places the depot, the vehicles' starts and ends and every order,
// through the tenant's cache, into s.located.
func (s *scope) geocode(ctx context.Context) error {
	spec := &s.opt.Spec
	in := &plan.Located{}
	g := s.geocoder()
	_, noGeocoder := g.(geocode.None)
	var geoCache *store.GeocodeCache
	if !noGeocoder {
		var err error
		if geoCache, err = store.LoadGeocodeCache(ctx, s.p.Client, s.opt); err != nil {
			return err
		}
		// Answers are kept as they come, and on every way out (a failure,
		// a cancel), so a retried solve asks only for the rest.
		stopSaving := geoCache.KeepSaving(ctx)
		cached := &geocode.Cached{Next: g, Store: geoCache, TTL: s.p.geocodeCacheTTL(), Tenant: s.opt.Namespace}
		defer func() {
			cached.Wait() // a cancelled query's answer may still be on its way into the cache
			stopSaving()
		}()
		g = cached
	}

	if spec.Depot.Latitude != nil && spec.Depot.Longitude != nil {
		in.Depot = matrix.Point{Lat: *spec.Depot.Latitude, Lon: *spec.Depot.Longitude}
	} else {
		q := geocode.Query{Address: deref(spec.Depot.Address)}
		res, found, err := g.Geocode(ctx, q)
		countProvider("geocoder", err)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, geocode.ErrNotConfigured):
			return record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the depot has no coordinates and no geocoder is configured")
		case err != nil:
			return record.Failf(v1alpha1.ErrorGeocodingUnavailable, "geocoding the depot failed: %v", err)
		case !found:
			return record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the depot address %q was not found by the geocoder", q.String())
		}
		in.Depot = matrix.Point{Lat: res.Lat, Lon: res.Lon}
	}
	in.Points = append(in.Points, in.Depot)

	ends, err := s.geocodeEnds(ctx, g, geoCache, in)
	if err != nil {
		return err
	}
	answers, err := geocodeOrders(ctx, g, spec.Orders)
	if err != nil {
		return err
	}
	missing := 0
	for i := range spec.Orders {
		o := &spec.Orders[i]
		if o.Latitude != nil && o.Longitude != nil {
			in.Orders = append(in.Orders, i)
			in.Points = append(in.Points, matrix.Point{Lat: *o.Latitude, Lon: *o.Longitude})
			continue
		}
		a := answers[i]
		switch {
		case errors.Is(a.err, geocode.ErrNotConfigured):
			missing++
			in.Unassign(i, o.ID, v1alpha1.UnassignedGeocodeFailed, fmt.Sprintf("order %q has no coordinates and no geocoder is configured", o.ID))
		case errors.Is(a.err, geocode.ErrUnavailable):
			return record.Failf(v1alpha1.ErrorGeocodingUnavailable, "the geocoder could not be reached: %v", a.err)
		case a.err != nil:
			in.Unassign(i, o.ID, v1alpha1.UnassignedGeocodeFailed, fmt.Sprintf("geocoding %q failed: %s", a.query.String(), s.geocodeFailure(geoCache, a)))
		case !a.found:
			in.Unassign(i, o.ID, v1alpha1.UnassignedGeocodeFailed, fmt.Sprintf("address %q was not found", a.query.String()))
		default:
			if a.res.Approximate {
				ref := o.ID
				in.Warnings = append(in.Warnings, v1alpha1.Warning{Code: v1alpha1.WarningGeocodeApproximate, Message: fmt.Sprintf("address %q was placed approximately", a.query.String()), OrderRef: &ref})
			}
			in.Orders = append(in.Orders, i)
			in.Points = append(in.Points, matrix.Point{Lat: a.res.Lat, Lon: a.res.Lon})
		}
	}
	if noGeocoder && missing > 0 {
		in.Warnings = append(in.Warnings, v1alpha1.Warning{
			Code:    v1alpha1.WarningNoGeocoder,
			Message: fmt.Sprintf("%d order(s) without coordinates could not be placed: no geocoder is configured; send latitude and longitude", missing),
		})
	}
	// After the orders: the matrix has the vehicles' other locations last.
	in.PlaceEnds(spec, func(loc *v1alpha1.Location) matrix.Point {
		if p, ok := coordinates(loc); ok {
			return p
		}
		return ends[loc]
	})
	s.located = in
	return nil
}

// endLocation is where a vehicle, or every vehicle of the fleet, starts or
// ends when not at the depot.
type endLocation struct {
	owner string // `vehicle "van-1"` or "the fleet"
	which string // "start" or "end"
	loc   *v1alpha1.Location
}

// endLocations lists the starts and ends spec gives, in spec order.
func endLocations(spec *v1alpha1.OptimizationSpec) []endLocation {
	var out []endLocation
	add := func(owner string, c *v1alpha1.VehicleConstraints) {
		if c.Start != nil {
			out = append(out, endLocation{owner, "start", c.Start})
		}
		if c.End != nil {
			out = append(out, endLocation{owner, "end", c.End})
		}
	}
	if spec.Fleet != nil {
		add("the fleet", &spec.Fleet.VehicleConstraints)
	}
	for i := range spec.Vehicles {
		add(fmt.Sprintf("vehicle %q", spec.Vehicles[i].ID), &spec.Vehicles[i].VehicleConstraints)
	}
	return out
}

// coordinates is the position loc gives, if it gives both coordinates.
func coordinates(loc *v1alpha1.Location) (matrix.Point, bool) {
	if loc.Latitude == nil || loc.Longitude == nil {
		return matrix.Point{}, false
	}
	return matrix.Point{Lat: *loc.Latitude, Lon: *loc.Longitude}, true
}

// endQuery is the geocoding query of a start or end given by address.
func endQuery(loc *v1alpha1.Location) geocode.Query {
	return geocode.Query{Address: deref(loc.Address)}
}

// geocodeEnds places the vehicles' starts and ends given by address, as
// the orders' are placed. One that cannot be placed fails the solve with
// invalid_input naming the vehicle (a route cannot start nowhere), all of
// them in one message; a geocoder that cannot be reached fails it with
// geocoding_unavailable.
func (s *scope) geocodeEnds(ctx context.Context, g geocode.Geocoder, geoCache *store.GeocodeCache, in *plan.Located) (map[*v1alpha1.Location]matrix.Point, error) {
	ends := endLocations(&s.opt.Spec)
	queries := make([]geocode.Query, len(ends))
	ask := make([]bool, len(ends))
	for i, e := range ends {
		if _, ok := coordinates(e.loc); !ok {
			queries[i], ask[i] = endQuery(e.loc), true
		}
	}
	answers, err := geocodeQueries(ctx, g, queries, ask)
	if err != nil {
		return nil, err
	}
	placed := map[*v1alpha1.Location]matrix.Point{}
	var v validation
	for i, e := range ends {
		if !ask[i] {
			continue
		}
		a := answers[i]
		switch {
		case errors.Is(a.err, geocode.ErrNotConfigured):
			v.add(fmt.Sprintf("%s: its %s address %q cannot be placed: no geocoder is configured; give its latitude and longitude", e.owner, e.which, a.query.String()))
		case a.err != nil:
			v.add(fmt.Sprintf("%s: geocoding its %s address %q failed: %s", e.owner, e.which, a.query.String(), s.geocodeFailure(geoCache, a)))
		case !a.found:
			v.add(fmt.Sprintf("%s: its %s address %q was not found", e.owner, e.which, a.query.String()))
		default:
			if a.res.Approximate {
				in.Warnings = append(in.Warnings, v1alpha1.Warning{Code: v1alpha1.WarningGeocodeApproximate, Message: fmt.Sprintf("the %s address %q of %s was placed approximately", e.which, a.query.String(), e.owner)})
			}
			placed[e.loc] = matrix.Point{Lat: a.res.Lat, Lon: a.res.Lon}
		}
	}
	if f := v.failure(); f != nil {
		return nil, f
	}
	return placed, nil
}

// geocodeFailure is the reason an order's geocoding failed. A refusal (the
// geocoder's HTTP 4xx) is recorded in geoCache, so that a solve Job, which
// asks no geocoder and so misses that address, gives the geocoder's own
// message instead of "not geocoded".
func (s *scope) geocodeFailure(geoCache *store.GeocodeCache, a geocoded) string {
	msg := a.err.Error()
	if geoCache == nil {
		return msg
	}
	key := geocode.CacheKey(s.opt.Namespace, a.query)
	var refused *geocode.StatusError
	switch {
	case errors.As(a.err, &refused):
		geoCache.Refuse(key, msg)
	case errors.Is(a.err, geocode.ErrNotPrefetched):
		if m, ok := geoCache.Refusal(key); ok {
			return m
		}
	}
	return msg
}

// geocodeOrders asks the geocoder for every order without coordinates, a
// few at a time. It stops at the first unreachable-geocoder answer and when
// ctx ends.
func geocodeOrders(ctx context.Context, g geocode.Geocoder, orders []v1alpha1.Order) ([]geocoded, error) {
	queries := make([]geocode.Query, len(orders))
	ask := make([]bool, len(orders))
	for i := range orders {
		if o := &orders[i]; o.Latitude == nil || o.Longitude == nil {
			queries[i], ask[i] = orderQuery(o), true
		}
	}
	return geocodeQueries(ctx, g, queries, ask)
}

// geocodeQueries asks the geocoder for queries[i] wherever ask[i], a few
// at a time. It stops at the first unreachable-geocoder answer and when
// ctx ends.
func geocodeQueries(parent context.Context, g geocode.Geocoder, queries []geocode.Query, ask []bool) ([]geocoded, error) {
	answers := make([]geocoded, len(queries))
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	for range geocodeWorkers {
		wg.Go(func() {
			for i := range work {
				q := queries[i]
				res, found, err := g.Geocode(ctx, q)
				countProvider("geocoder", err)
				answers[i] = geocoded{query: q, res: res, found: found, err: err}
				if errors.Is(err, geocode.ErrUnavailable) {
					cancel()
				}
			}
		})
	}
	for i := range queries {
		if !ask[i] {
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

// buildMatrix computes travel between the located points into s.matrix.
func (s *scope) buildMatrix(ctx context.Context) error {
	provider := s.p.Matrix
	if provider == nil {
		provider = matrix.Haversine{}
	}
	m, err := provider.Matrix(ctx, s.located.Points)
	countProvider("matrix", err)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return record.Failf(v1alpha1.ErrorMatrixUnavailable, "building the travel matrix failed: %v", err)
	}
	if n := len(m.Estimated); n > 0 {
		s.located.Warnings = append(s.located.Warnings, v1alpha1.Warning{
			Code:    v1alpha1.WarningMatrixEstimated,
			Message: fmt.Sprintf("the road network has no route for %d pair(s) of stops; their travel is estimated from the straight-line distance", n),
		})
	}
	s.matrix = m
	return nil
}

// optimize solves the routing problem into s.solution, within the
// request's time budget.
func (s *scope) optimize(ctx context.Context) error {
	spec := &s.opt.Spec
	fleet, err := plan.Fleet(spec)
	if err != nil {
		return record.Failf(v1alpha1.ErrorSolver, "invalid vehicles: %v", err)
	}
	prob, err := plan.Problem(spec, s.located, s.matrix, fleet)
	if err != nil {
		return record.Failf(v1alpha1.ErrorSolver, "invalid problem: %v", err)
	}
	out := &plan.Solution{Fleet: fleet, Problem: prob}
	if len(prob.Orders) == 0 {
		out.Solution = &vrp.Solution{}
		s.solution = out
		return nil
	}
	opts := spec.EffectiveOptions()
	if opts.Strategy == v1alpha1.StrategyBaseline {
		out.Solution, err = vrp.Baseline(prob)
	} else {
		reporter := s.progressReporter(ctx)
		out.Solution, err = vrp.Solve(ctx, prob, vrp.Options{
			TimeLimit: opts.SolverBudget(len(prob.Orders)),
			Seed:      1,
			Progress:  reporter.observe,
		})
		reporter.stop()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return record.Failf(v1alpha1.ErrorSolver, "optimization failed: %v", err)
	}
	s.solution = out
	return nil
}

// saveResult builds the Result and stores it in the solve's ConfigMap,
// unless a cancel arrived while optimizing (the Optimization is read again).
func (s *scope) saveResult(ctx context.Context) error {
	if _, err := store.ReadOptimization(ctx, s.p.reader(), client.ObjectKeyFromObject(s.opt)); err != nil {
		return err
	}
	s.result = plan.Result(ctx, s.opt, s.located, s.solution, s.matrix.Geometry)
	return store.StoreResult(ctx, s.p.Client, s.opt, s.result)
}

// progressReporter turns the solver's progress callbacks into status writes,
// at most one per interval, off the solver's goroutine.
type progressReporter struct {
	latest  chan int32
	done    chan struct{}
	stopped sync.Once
}

func (s *scope) progressReporter(ctx context.Context) *progressReporter {
	interval := s.p.ProgressInterval
	if interval <= 0 {
		interval = DefaultProgressInterval
	}
	r := &progressReporter{latest: make(chan int32, 1), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		var last time.Time
		for p := range r.latest {
			if time.Since(last) < interval {
				continue
			}
			last = time.Now()
			// A failed progress write is not worth failing the solve for.
			_ = s.status.Report(ctx, v1alpha1.StageOptimizing, p)
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
