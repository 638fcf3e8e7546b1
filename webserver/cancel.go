package webserver

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// cancelWait is how long cancel waits for the controller to confirm, so the
// answer usually already says "cancelled".
const cancelWait = 2 * time.Second

// cancelOptimization answers POST /v1/optimizations/{id}/cancel: it sets
// spec.cancel and lets the controller stop the work.
func (s *Server) cancelOptimization(c *gin.Context) {
	opt, ok := s.lookup(c)
	if !ok {
		return
	}
	switch opt.Status.State {
	case v1alpha1.StateCancelled:
		respondJSON(c, http.StatusOK, s.record(opt))
		return
	case v1alpha1.StateCompleted, v1alpha1.StateFailed:
		abortError(c, http.StatusConflict, CodeInvalidState, "the optimization is "+string(opt.Status.State)+" and can no longer be cancelled", map[string]any{"status": string(opt.Status.State)})
		return
	}
	if !opt.Spec.Cancel {
		ctx, cancel := s.kubeContext(c)
		defer cancel()
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"cancel":true}}`))
		target := &v1alpha1.Optimization{}
		target.Namespace, target.Name = opt.Namespace, opt.Name
		if err := s.client.Patch(ctx, target, patch); err != nil {
			abortKube(c, err, "optimization")
			return
		}
	}
	respondJSON(c, http.StatusOK, s.record(s.awaitTerminal(c.Request.Context(), opt)))
}

// awaitTerminal polls the cache until opt is terminal or cancelWait passes,
// and returns the latest version seen.
func (s *Server) awaitTerminal(ctx context.Context, opt *v1alpha1.Optimization) *v1alpha1.Optimization {
	ctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	latest := opt
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		current := &v1alpha1.Optimization{}
		if err := s.client.Get(ctx, client.ObjectKeyFromObject(opt), current); err == nil {
			latest = current
			if current.Status.State.IsTerminal() {
				return latest
			}
		}
		select {
		case <-ctx.Done():
			return latest
		case <-tick.C:
		}
	}
}
