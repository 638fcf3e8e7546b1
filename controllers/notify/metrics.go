package notify

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Metrics of the notifier, served on the manager's metrics endpoint.
var (
	deliveriesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "routeopt_webhook_deliveries_total",
		Help: "Webhook events recorded per endpoint, by result (delivered, failed, dropped).",
	}, []string{"result"})
	deliverySeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "routeopt_webhook_delivery_seconds",
		Help:    "Time from an optimization's finishedAt to the end of the delivery of its event to an endpoint (delivered or failed).",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600},
	})
)

func init() {
	metrics.Registry.MustRegister(deliveriesTotal, deliverySeconds)
	for _, r := range []v1alpha1.WebhookResult{v1alpha1.WebhookDelivered, v1alpha1.WebhookFailed, v1alpha1.WebhookDropped} {
		deliveriesTotal.WithLabelValues(string(r)) // exported at 0 before the first event
	}
}

// observe counts a recorded outcome.
func observe(o *outcome, finishedAt time.Time) {
	deliveriesTotal.WithLabelValues(string(o.result)).Inc()
	if o.result != v1alpha1.WebhookDropped && !finishedAt.IsZero() {
		deliverySeconds.Observe(o.end.Sub(finishedAt).Seconds())
	}
}
