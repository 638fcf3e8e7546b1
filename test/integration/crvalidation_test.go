package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
)

// crSpec is a valid spec of three orders; each case breaks one thing in it.
func crSpec() v1alpha1.OptimizationSpec {
	return v1alpha1.OptimizationSpec{
		Depot: v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
		Orders: []v1alpha1.Order{
			{ID: "A-1", Latitude: ptr.To(52.53), Longitude: ptr.To(13.38)},
			{ID: "A-17", Latitude: ptr.To(52.51), Longitude: ptr.To(13.41), TimeWindowStart: ptr.To("09:00"), TimeWindowEnd: ptr.To("12:00")},
			{ID: "A-3", Latitude: ptr.To(52.50), Longitude: ptr.To(13.43)},
		},
		Vehicles: []v1alpha1.Vehicle{{ID: "van-1", Capacity: 10}},
	}
}

// TestCustomResourceValidation: an Optimization created directly with the
// Kubernetes client, as kubectl does, that breaks a per-order or per-vehicle
// rule is stored (those are no longer CEL rules, for the create's cost) and
// then fails with invalid_input naming the order; the schema's bounds and
// the once-per-object rules still refuse at admission.
func TestCustomResourceValidation(t *testing.T) {
	s := startSystem(t, "inprocess")
	ctx := context.Background()

	t.Run("fails with invalid_input", func(t *testing.T) {
		for name, tc := range map[string]struct {
			mutate func(*v1alpha1.OptimizationSpec)
			want   string
		}{
			"time window reversed": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[1].TimeWindowStart, sp.Orders[1].TimeWindowEnd = ptr.To("12:00"), ptr.To("09:00")
				},
				want: `order "A-17": time window 12:00–09:00 ends before it starts`,
			},
			"order with neither address nor coordinates": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[1].Latitude, sp.Orders[1].Longitude = nil, nil },
				want:   `order "A-17": needs an address or both latitude and longitude`,
			},
			"order with a blank address only": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[1].Latitude, sp.Orders[1].Longitude, sp.Orders[1].Address = nil, nil, ptr.To("   ")
				},
				want: `order "A-17": needs an address or both latitude and longitude`,
			},
			"latitude without longitude": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[1].Longitude = nil },
				want:   `order "A-17": latitude and longitude must be given together`,
			},
			"vehicle shift reversed": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].ShiftStart, sp.Vehicles[0].ShiftEnd = "19:00", "18:00"
				},
				want: `vehicle "van-1": shift 19:00–18:00 ends before it starts`,
			},
		} {
			t.Run(name, func(t *testing.T) {
				spec := crSpec()
				tc.mutate(&spec)
				opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: spec}
				if err := k8sClient.Create(ctx, opt); err != nil {
					t.Fatalf("create refused at admission, want it stored and failed by the solver: %v", err)
				}
				var cur *v1alpha1.Optimization
				waitFor(t, 30*time.Second, "the optimization to fail", func() (bool, error) {
					cur = getOpt(t, opt)
					if cur.Status.State.IsTerminal() && cur.Status.State != v1alpha1.StateFailed {
						return false, fmt.Errorf("state %s, want failed", cur.Status.State)
					}
					return cur.Status.State == v1alpha1.StateFailed, nil
				})
				if cur.Status.ErrorCode != v1alpha1.ErrorInvalidInput {
					t.Errorf("errorCode = %q, want %q (message %q)", cur.Status.ErrorCode, v1alpha1.ErrorInvalidInput, cur.Status.ErrorMessage)
				}
				if !strings.Contains(cur.Status.ErrorMessage, tc.want) {
					t.Errorf("errorMessage = %q, want it to contain %q", cur.Status.ErrorMessage, tc.want)
				}
			})
		}
	})

	t.Run("refused at admission", func(t *testing.T) {
		for name, tc := range map[string]struct {
			mutate func(*v1alpha1.OptimizationSpec)
			want   string
		}{
			"501 orders": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders = nil
					for i := range 501 {
						sp.Orders = append(sp.Orders, v1alpha1.Order{ID: fmt.Sprintf("o-%d", i), Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)})
					}
				},
				want: "must have at most 500 items",
			},
			"latitude 91": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[1].Latitude = ptr.To(91.0) },
				want:   "should be less than or equal to 90",
			},
			"time window not HH:MM": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[1].TimeWindowEnd = ptr.To("25:00") },
				want:   "spec.orders[1].timeWindowEnd",
			},
			"empty order id": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[1].ID = "" },
				want:   "spec.orders[1].id",
			},
			// listType=map keys are checked by the schema, not by CEL.
			"duplicate order ids": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[2].ID = "A-17" },
				want:   "Duplicate value",
			},
			// The rules below are evaluated once per object, so they stay CEL rules.
			"vehicles and fleet": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Fleet = &v1alpha1.Fleet{Count: 1, Capacity: 10} },
				want:   "exactly one of vehicles and fleet is required",
			},
			"neither vehicles nor fleet": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Vehicles = nil },
				want:   "exactly one of vehicles and fleet is required",
			},
			"fleet shift reversed": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, ShiftStart: "17:00", ShiftEnd: "09:00"}
				},
				want: "shiftStart must not be after shiftEnd",
			},
			"depot without location": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Depot = v1alpha1.Depot{Label: ptr.To("HQ")} },
				want:   "depot needs an address or both latitude and longitude",
			},
		} {
			t.Run(name, func(t *testing.T) {
				spec := crSpec()
				tc.mutate(&spec)
				opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: spec}
				err := k8sClient.Create(ctx, opt)
				if err == nil {
					t.Fatal("create accepted, want it refused at admission")
				}
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("create error = %v, want Invalid containing %q", err, tc.want)
				}
			})
		}
	})
}
