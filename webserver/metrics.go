package webserver

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the REST API, in controller-runtime's registry: `routeopt
// api --metrics-bind-address` serves them.
var (
	kubeUnavailableTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "routeopt_api_kubernetes_unavailable_total",
		Help: "Requests answered 503 because the Kubernetes API (or etcd behind it) could not answer in time.",
	})
	clientGoneTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "routeopt_api_client_closed_total",
		Help: "Requests whose client went away before they were answered (logged as 499); no outage.",
	})
	authRateLimitedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "routeopt_api_auth_rate_limited_total",
		Help: "Requests answered 429 because their source address failed authentication too often.",
	})
)

func init() {
	metrics.Registry.MustRegister(kubeUnavailableTotal, clientGoneTotal, authRateLimitedTotal)
}
