package solver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
)

// The Kubernetes reads and writes of a solve, in one place: the phases
// compute, and reach the API server only through these.

// read gets the Optimization from the API server, with the orders and
// vehicles of the ConfigMap spec.input names filled into its spec; one that
// was cancelled or has finished ends the run with context.Canceled. An input
// not written yet is ErrInputPending.
func (p *Pipeline) read(ctx context.Context, key types.NamespacedName) (*v1alpha1.Optimization, error) {
	opt, err := p.readOptimization(ctx, key)
	if err != nil || opt.Spec.Input == nil {
		return opt, err
	}
	in, err := p.readInput(ctx, p.reader(), opt)
	if err != nil {
		return nil, err
	}
	opt.Spec = opt.Spec.WithInput(in)
	return opt, nil
}

// awaitRead is read, waiting for an input ConfigMap that does not exist
// yet until it does or the optimization is too old to expect it.
func (p *Pipeline) awaitRead(ctx context.Context, key types.NamespacedName) (*v1alpha1.Optimization, error) {
	for {
		opt, err := p.read(ctx, key)
		if !errors.Is(err, ErrInputPending) {
			return opt, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(InputPoll):
		}
	}
}

// readOptimization gets the Optimization alone from the API server; one
// that was cancelled or has finished ends the run with context.Canceled.
func (p *Pipeline) readOptimization(ctx context.Context, key types.NamespacedName) (*v1alpha1.Optimization, error) {
	opt := &v1alpha1.Optimization{}
	if err := p.reader().Get(ctx, key, opt); err != nil {
		return nil, fmt.Errorf("unable to read optimization: %w", err)
	}
	if opt.Spec.Cancel || opt.Status.State.IsTerminal() {
		return nil, context.Canceled
	}
	return opt, nil
}

// reader reads around any cache.
func (p *Pipeline) reader() client.Reader {
	if p.Reader == nil {
		return p.Client
	}
	return p.Reader
}

// key names the scope's Optimization.
func (s *scope) key() types.NamespacedName { return client.ObjectKeyFromObject(s.opt) }

// report writes stage and progress; progress never goes backwards.
func (s *scope) report(ctx context.Context, stage v1alpha1.Stage, progress int32) error {
	s.mu.Lock()
	progress = max(progress, s.progress)
	s.progress = progress
	s.mu.Unlock()
	err := record.ApplySolver(ctx, s.p.Client, s.key(), record.SolverStatus{Stage: stage, Progress: progress})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("unable to report stage %s: %w", stage, err)
	}
	return nil
}

// geocodeStore is the tenant's geocoding cache with the solve's pending
// answers (geocache.go).
func (s *scope) geocodeStore(ctx context.Context) (*configMapStore, error) {
	return loadGeocodeCache(ctx, s.p.Client, s.opt)
}

// checkNotCancelled re-reads the Optimization: a cancel may have arrived
// while optimizing, and no result is stored after it.
func (s *scope) checkNotCancelled(ctx context.Context) error {
	_, err := s.p.readOptimization(ctx, s.key())
	return err
}

// store writes the result into the solve's ConfigMap (resultstore.go).
func (s *scope) store(ctx context.Context) error {
	return storeResult(ctx, s.p.Client, s.opt, s.result)
}

// finish is the solve's last write: done, with where the result is and its
// digest.
func (s *scope) finish(ctx context.Context) error {
	return record.ApplySolver(ctx, s.p.Client, s.key(), record.SolverStatus{
		Stage:     v1alpha1.StageStoring,
		Progress:  progressDone,
		ResultRef: s.opt.ResultConfigMapName(),
		Summary:   plan.Summary(s.result),
	})
}
