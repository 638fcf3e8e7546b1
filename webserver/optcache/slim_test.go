package optcache

import (
	"testing"

	"routeopt.io/routeopt/api/v1alpha1"
)

func TestSlim(t *testing.T) {
	lat := 1.0
	opt := &v1alpha1.Optimization{Spec: v1alpha1.OptimizationSpec{
		Orders:   []v1alpha1.Order{{ID: "a", Latitude: &lat, Longitude: &lat}, {ID: "b", Latitude: &lat, Longitude: &lat}},
		Vehicles: []v1alpha1.Vehicle{{ID: "v", Capacity: 1}},
	}}
	opt.ManagedFields = append(opt.ManagedFields, opt.ManagedFields...)
	out, err := Slim(opt)
	if err != nil {
		t.Fatal(err)
	}
	slim := out.(*v1alpha1.Optimization)
	if slim.Spec.Orders != nil || slim.Spec.Vehicles != nil || slim.ManagedFields != nil {
		t.Fatalf("bulky fields kept: %+v", slim.Spec)
	}
	if slim.Status.OrderCount != 2 || slim.Status.VehicleCount != 1 {
		t.Fatalf("counts %d/%d, want 2/1", slim.Status.OrderCount, slim.Status.VehicleCount)
	}
}
