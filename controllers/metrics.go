package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the controller, served on the manager's metrics endpoint.
var (
	optimizationsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "routeopt_optimizations_total",
		Help: "Optimizations that entered each state.",
	}, []string{"state"})
	solveDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "routeopt_solve_duration_seconds",
		Help:    "Time from start of a solve to its end, by outcome.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 300},
	}, []string{"state"})
	queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "routeopt_queue_depth",
		Help: "Optimizations waiting in state queued.",
	})
	runningSolves = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "routeopt_running_solves",
		Help: "Optimizations in state running.",
	})
)

func init() {
	metrics.Registry.MustRegister(optimizationsTotal, solveDuration, queueDepth, runningSolves)
}
