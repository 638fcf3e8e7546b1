package solver

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
)

// Metrics of the pipeline. In-process solves report them on the manager's
// metrics endpoint; a solve Job's process is short-lived and not scraped.
var (
	stageDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "routeopt_stage_duration_seconds",
		Help:    "Duration of each solve stage.",
		Buckets: prometheus.ExponentialBuckets(0.005, 3, 10),
	}, []string{"stage"})
	providerRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "routeopt_provider_requests_total",
		Help: "Calls to the geocoder and the matrix provider.",
	}, []string{"provider"})
	providerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "routeopt_provider_errors_total",
		Help: "Failed calls to the geocoder and the matrix provider.",
	}, []string{"provider"})
)

func init() {
	metrics.Registry.MustRegister(stageDuration, providerRequests, providerErrors)
}

// observeStage records how long stage took since start, in the metrics
// and the log.
func observeStage(ctx context.Context, stage v1alpha1.Stage, start time.Time) {
	took := time.Since(start)
	stageDuration.WithLabelValues(string(stage)).Observe(took.Seconds())
	ctrl.LoggerFrom(ctx).V(1).Info("Stage finished", "stage", stage, "duration", took.String())
}

// countProvider counts one call to a provider and its failure; "no geocoder
// configured" is not a call.
func countProvider(provider string, err error) {
	if errors.Is(err, geocode.ErrNotConfigured) {
		return
	}
	providerRequests.WithLabelValues(provider).Inc()
	if err != nil {
		providerErrors.WithLabelValues(provider).Inc()
	}
}
