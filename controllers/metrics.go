package controllers

import (
	"context"
	"sync"
	"time"

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
	inProcessSolves = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "routeopt_inprocess_solves",
		Help: "Solve goroutines of the in-process runner that have not returned, stopping ones included.",
	})
)

func init() {
	metrics.Registry.MustRegister(optimizationsTotal, solveDuration, inProcessSolves, queueGauges)
}

// queueGauges reports the queue depth and running solves when scraped,
// counted from the leader's cache index, so reconciling never pays for
// them. A manager that does not lead reports zero.
var queueGauges = &queueCollector{sources: map[*solveQueue]struct{}{}}

var (
	queueDepthDesc = prometheus.NewDesc("routeopt_queue_depth", "Optimizations waiting in state queued.", nil, nil)
	runningDesc    = prometheus.NewDesc("routeopt_running_solves", "Optimizations in state running.", nil, nil)
)

// scrapeTimeout bounds reading the cache at scrape time.
const scrapeTimeout = 5 * time.Second

// queueCollector is a prometheus.Collector over the queues of the managers
// that lead in this process (one in production; tests run several).
type queueCollector struct {
	mu      sync.Mutex
	sources map[*solveQueue]struct{}
}

// serve counts q until ctx ends.
func (c *queueCollector) serve(ctx context.Context, q *solveQueue) error {
	c.add(q)
	defer c.remove(q)
	<-ctx.Done()
	return nil
}

func (c *queueCollector) add(q *solveQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sources[q] = struct{}{}
}

func (c *queueCollector) remove(q *solveQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sources, q)
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- runningDesc
}

// Collect implements prometheus.Collector.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := make([]*solveQueue, 0, len(c.sources))
	for q := range c.sources {
		sources = append(sources, q)
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	var running, queued int
	for _, q := range sources {
		r, w, err := q.counts(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(queueDepthDesc, err)
			ch <- prometheus.NewInvalidMetric(runningDesc, err)
			return
		}
		running, queued = running+r, queued+w
	}
	ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(queued))
	ch <- prometheus.MustNewConstMetric(runningDesc, prometheus.GaugeValue, float64(running))
}
