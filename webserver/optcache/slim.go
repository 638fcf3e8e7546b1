// Package optcache is what the REST API process keeps of Optimizations in
// memory: the cache transform that keeps records, not requests, and the
// index that serves list pages newest first from the informer.
package optcache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Slim is a cache transform for the API process: it keeps
// records, not requests. Orders and vehicles listed inline (an
// Optimization written by hand; the API stores them apart) are dropped from
// cached Optimizations after their counts are kept in the status (where the
// controller writes them too), and managed fields from every object, so
// the API's memory follows the number of optimizations, not their size.
// Handlers that need the full spec read it around the cache.
func Slim(obj any) (any, error) {
	if accessor, ok := obj.(metav1.Object); ok {
		accessor.SetManagedFields(nil)
	}
	opt, ok := obj.(*v1alpha1.Optimization)
	if !ok {
		return obj, nil
	}
	if opt.Status.OrderCount == 0 {
		opt.Status.OrderCount = int32(opt.Spec.OrderTotal())
	}
	if opt.Status.VehicleCount == 0 {
		opt.Status.VehicleCount = int32(opt.Spec.VehicleTotal())
	}
	opt.Spec.Orders = nil
	opt.Spec.Vehicles = nil
	return opt, nil
}
