// Package store keeps an optimization's data in Kubernetes, for the solve
// pipeline (package solver) and the controllers alike:
//
//   - read.go reads the Optimization with the orders and vehicles of its
//     input ConfigMap, held to the CRD's schema (schema.go), since a
//     ConfigMap written by hand bypassed admission;
//   - status.go writes the solve's part of the status (stage, progress,
//     where the result is) as the solver's field manager;
//   - result.go makes the result ConfigMap (the controller, before a solve
//     starts) and stores a result in it, in parts when it is large;
//   - geocache.go keeps geocoding answers: the tenant's cache ConfigMap,
//     read by a solve, and the answers a solve found, written into its own
//     ConfigMap and merged into the cache by the controller.
//
// It holds no solve logic (no routing, travel matrix or geocoding provider
// is called here), so the controllers import it without the pipeline.
package store
