package webserver

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"routeopt.io/routeopt/webserver/kubebudget"
)

// How long a request waits for the Kubernetes API: one budget
// (Options.RequestTimeout, --kube-timeout) for all its Kubernetes calls,
// and up to Options.SlowRequestTimeout while the API server answers a
// probe (package kubebudget).

// ctxKubeBudget holds a request's *kubebudget.Budget.
const ctxKubeBudget = "routeopt.kubeBudget"

// withKubeBudget gives the request its Kubernetes budget and ends it once
// the handlers have answered.
func (s *Server) withKubeBudget(c *gin.Context) {
	b := kubebudget.New(c.Request.Context(), s.opts.RequestTimeout, s.opts.SlowRequestTimeout, s.kubeProbe)
	c.Set(ctxKubeBudget, b)
	defer b.Stop()
	c.Next()
}

// kubeContext is the context of a call to the Kubernetes API: the
// request's one budget (see package kubebudget). The cancel function
// releases only this call's resources.
func (s *Server) kubeContext(c *gin.Context) (context.Context, context.CancelFunc) {
	if v, ok := c.Get(ctxKubeBudget); ok {
		return context.WithCancel(v.(*kubebudget.Budget).Context())
	}
	return context.WithTimeout(c.Request.Context(), s.opts.RequestTimeout)
}

// ProbeKubernetes starts the probe of the API server that lets requests
// wait past their budget while it answers (see package kubebudget); it
// runs until ctx ends. Without it every request answers 503 at its budget.
func (s *Server) ProbeKubernetes(ctx context.Context) {
	interval := min(max(s.opts.RequestTimeout/6, 50*time.Millisecond), time.Second)
	go s.kubeProbe.Run(ctx, interval, s.opts.SlowRequestTimeout)
}
