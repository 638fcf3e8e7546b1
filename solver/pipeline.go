// Package solver is the solve pipeline a runner executes for one
// Optimization: it reads the custom resource, geocodes, builds the travel
// matrix, optimizes and stores the result ConfigMap, reporting stage and
// progress on the record as it goes. The controller decides the state; the
// pipeline only reports how far it got and what it found.
//
// A solve is a list of phases (phases.go) run over one scope, the state of
// that solve; the translation between spec, model and result is the pure
// package solver/plan; every Kubernetes read and write goes through
// package solver/store.
package solver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// DefaultProgressInterval bounds how often progress is written to the record.
const DefaultProgressInterval = time.Second

// Pipeline runs solves. It is safe for concurrent use.
type Pipeline struct {
	// Client writes the Optimization's status and its result.
	Client client.Client
	// Reader reads the Optimization and its input ConfigMap from the API
	// server (not a cache, whose copy may predate a cancel); nil means Client.
	Reader client.Reader
	// InputWait is how long after an optimization's creation a solve waits
	// for the ConfigMap spec.input names; 0 means store.DefaultInputWait.
	InputWait time.Duration
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

// Run solves the named Optimization; each geocoding request counts t (the
// solve's geocoding admission in the manager; nil in a solve Job, which
// asks no geocoder) down. It returns nil once the result is stored,
// ctx.Err() when cancelled (nothing is stored then), and a *record.Failure
// for every other way it can end.
func (p *Pipeline) Run(ctx context.Context, key types.NamespacedName, t *geobudget.Ticket) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = record.Failf(v1alpha1.ErrorInternal, "solver crashed: %v", r)
		}
	}()
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("optimization", key.String()))
	s, err := p.counting(t).start(ctx, key)
	if err != nil {
		return err
	}
	if err := s.runPhases(ctx, solvePhases); err != nil {
		return err
	}
	return s.status.Finish(ctx, plan.Summary(s.result))
}

// scope is the state of one solve, filled in phase by phase.
type scope struct {
	p      *Pipeline
	opt    *v1alpha1.Optimization
	status *store.Progress

	located  *plan.Located
	matrix   *matrix.Matrix
	solution *plan.Solution
	result   *v1alpha1.Result
}

// start reads the named Optimization, waiting for its input ConfigMap when
// its create has not written it yet, and checks what its schema cannot
// (ValidateSpec), giving the scope its phases run over.
func (p *Pipeline) start(ctx context.Context, key types.NamespacedName) (*scope, error) {
	opt, err := store.AwaitRead(ctx, p.reader(), key, p.InputWait)
	if err != nil {
		return nil, err
	}
	if f := ValidateSpec(&opt.Spec); f != nil {
		return nil, f
	}
	return &scope{p: p, opt: opt, status: store.NewProgress(p.Client, opt)}, nil
}

// read gets the named Optimization with its orders and vehicles; one that
// was cancelled or has finished gives context.Canceled, an input not
// written yet store.ErrInputPending.
func (p *Pipeline) read(ctx context.Context, key types.NamespacedName) (*v1alpha1.Optimization, error) {
	return store.Read(ctx, p.reader(), key, p.InputWait)
}

// reader reads around any cache.
func (p *Pipeline) reader() client.Reader {
	if p.Reader == nil {
		return p.Client
	}
	return p.Reader
}

// runPhases runs phases in order: each reports its stage and progress,
// runs, and has its duration observed. A run of a prefix of solvePhases
// (the manager's geocoding before a solve Job) is a run like any other.
func (s *scope) runPhases(ctx context.Context, phases []phase) error {
	for _, ph := range phases {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.status.Report(ctx, ph.stage, ph.progress); err != nil {
			return err
		}
		start := time.Now()
		if err := ph.run(s, ctx); err != nil {
			return err
		}
		observeStage(ctx, ph.stage, start)
	}
	return nil
}
