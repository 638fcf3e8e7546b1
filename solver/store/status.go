package store

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// ProgressDone is the progress of a solve whose result is stored.
const ProgressDone = 100

// Progress writes a solve's part of its Optimization's status (stage,
// progress and, at the end, where the result is) as the solver's field
// manager. Progress never goes backwards, even when reports race (the
// optimizing stage reports off the solver's goroutine). It is safe for
// concurrent use.
type Progress struct {
	c         client.Client
	key       types.NamespacedName
	resultRef string

	mu       sync.Mutex
	progress int32
}

// NewProgress writes opt's solve status through c, from the progress opt
// already shows (a retried solve goes on from there).
func NewProgress(c client.Client, opt *v1alpha1.Optimization) *Progress {
	return &Progress{c: c, key: client.ObjectKeyFromObject(opt), resultRef: opt.ResultConfigMapName(), progress: opt.Status.Progress}
}

// Report writes stage and progress, or the progress already written when
// that is further.
func (p *Progress) Report(ctx context.Context, stage v1alpha1.Stage, progress int32) error {
	p.mu.Lock()
	progress = max(progress, p.progress)
	p.progress = progress
	p.mu.Unlock()
	err := record.ApplySolver(ctx, p.c, p.key, record.SolverStatus{Stage: stage, Progress: progress})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("unable to report stage %s: %w", stage, err)
	}
	return nil
}

// Finish is the solve's last write: done, with where the result is and its
// digest.
func (p *Progress) Finish(ctx context.Context, summary *v1alpha1.Summary) error {
	return record.ApplySolver(ctx, p.c, p.key, record.SolverStatus{
		Stage:     v1alpha1.StageStoring,
		Progress:  ProgressDone,
		ResultRef: p.resultRef,
		Summary:   summary,
	})
}
