package solver

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/plan"
	"routeopt.io/routeopt/solver/record"
)

// The Kubernetes reads and writes of a solve, in one place: the phases
// compute, and reach the API server only through these.

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
	_, err := s.p.read(ctx, s.key())
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
