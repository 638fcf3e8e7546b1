package controllers

import (
	"routeopt.io/routeopt/api/v1alpha1"
)

// SlimOptimization is the standalone manager's cache transform for
// Optimizations: it drops the orders, the vehicles and the managed fields,
// most of a stored optimization, which reconciling never reads (a solve
// reads its optimization from the API server). The counts the controller
// writes into status are taken from the full object first.
func SlimOptimization(obj any) (any, error) {
	opt, ok := obj.(*v1alpha1.Optimization)
	if !ok {
		return obj, nil
	}
	opt.ManagedFields = nil
	if opt.Spec.Orders != nil || opt.Spec.Input != nil {
		opt.Status.OrderCount = int32(opt.Spec.OrderTotal())
		opt.Spec.Orders = nil
	}
	if opt.Spec.Vehicles != nil || opt.Spec.Fleet != nil || opt.Spec.Input != nil {
		opt.Status.VehicleCount = int32(opt.Spec.VehicleTotal())
		opt.Spec.Vehicles = nil
	}
	return opt, nil
}

// orderCount is the number of opt's orders, from its spec or, on a slim
// cached copy, from the count SlimOptimization kept.
func orderCount(opt *v1alpha1.Optimization) int {
	if opt.Spec.Orders != nil || opt.Spec.Input != nil {
		return opt.Spec.OrderTotal()
	}
	return int(opt.Status.OrderCount)
}

// vehicleCount is the number of opt's vehicles, as orderCount.
func vehicleCount(opt *v1alpha1.Optimization) int {
	if opt.Spec.Vehicles != nil || opt.Spec.Fleet != nil || opt.Spec.Input != nil {
		return opt.Spec.VehicleTotal()
	}
	return int(opt.Status.VehicleCount)
}
