package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

	t.Run("fleet constraints at their bounds are stored as given", func(t *testing.T) {
		spec := crSpec()
		spec.Orders[0].TimeWindows = []v1alpha1.TimeWindow{{Start: "00:00", End: "08:00"}, {Start: "08:01", End: "09:00"}, {Start: "12:00", End: "12:00"}, {Start: "13:00", End: "23:59"}}
		spec.Orders[0].Skills = []string{strings.Repeat("é", 40), "fridge"}
		spec.Orders[0].Loads = []v1alpha1.DimensionLoad{{Name: "a", Value: 0}, {Name: "b", Value: 1000000}, {Name: "c", Value: 1}, {Name: strings.Repeat("d", 40), Value: 2.5}}
		spec.Orders[0].Priority = ptr.To[int32](100)
		spec.Vehicles, spec.Fleet = nil, &v1alpha1.Fleet{Count: 2, Capacity: 10, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
			Skills:             []string{"fridge"},
			Capacities:         []v1alpha1.DimensionCapacity{{Name: "a", Value: 0.001}, {Name: "b", Value: 1000000}, {Name: "c", Value: 1}, {Name: strings.Repeat("d", 40), Value: 3}},
			Breaks:             []v1alpha1.Break{{Start: "08:00", End: "16:00", Minutes: 480}, {Start: "08:00", End: "16:00", Minutes: 1}, {Start: "17:59", End: "18:00", Minutes: 1}},
			MaxDurationMinutes: 1440, MaxDistanceKm: 10000, MaxStops: 500,
			Start:   &v1alpha1.Location{Label: ptr.To("Yard"), Address: ptr.To("Yard Street 1")},
			OpenEnd: ptr.To(true),
		}}
		opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: spec}
		if err := k8sClient.Create(ctx, opt); err != nil {
			t.Fatalf("create refused: %v", err)
		}
		got := getOpt(t, opt)
		for i := range spec.Orders { // the CRD's defaults
			spec.Orders[i].Demand, spec.Orders[i].ServiceMinutes = ptr.To(v1alpha1.DefaultDemand), ptr.To(v1alpha1.DefaultServiceMinutes)
		}
		if diff := cmp.Diff(spec.Orders, got.Spec.Orders); diff != "" {
			t.Errorf("stored orders (-want +got):\n%s", diff)
		}
		spec.Fleet.NamePrefix = v1alpha1.DefaultFleetNamePrefix // the CRD's default
		if diff := cmp.Diff(spec.Fleet, got.Spec.Fleet); diff != "" {
			t.Errorf("stored fleet (-want +got):\n%s", diff)
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

			// Fleet constraints: bounds of orders and vehicles, and the
			// fleet's rules, evaluated once per object.
			"five time windows": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[0].TimeWindows = make([]v1alpha1.TimeWindow, 5)
					for i := range sp.Orders[0].TimeWindows {
						sp.Orders[0].TimeWindows[i] = v1alpha1.TimeWindow{Start: fmt.Sprintf("%02d:00", 8+i), End: fmt.Sprintf("%02d:30", 8+i)}
					}
				},
				want: "spec.orders[0].timeWindows: Too many: 5: must have at most 4 items",
			},
			"time window not HH:MM in a list": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[0].TimeWindows = []v1alpha1.TimeWindow{{Start: "9:00", End: "10:00"}}
				},
				want: "spec.orders[0].timeWindows[0].start",
			},
			"priority 101": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders[2].Priority = ptr.To[int32](101) },
				want:   "spec.orders[2].priority: Invalid value: 101: spec.orders[2].priority in body should be less than or equal to 100",
			},
			"skill of 41 characters": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[0].Skills = []string{"fridge", strings.Repeat("é", 41)}
				},
				want: "spec.orders[0].skills[1]: Too long",
			},
			"eleven skills": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].Skills = strings.Split("a b c d e f g h i j k", " ")
				},
				want: "spec.vehicles[0].skills: Too many: 11: must have at most 10 items",
			},
			"negative load": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[0].Loads = []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: -1}}
				},
				want: "spec.orders[0].loads[0].value in body should be greater than or equal to 0",
			},
			"a load dimension twice": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Orders[0].Loads = []v1alpha1.DimensionLoad{{Name: "kg", Value: 1}, {Name: "kg", Value: 2}}
				},
				want: "spec.orders[0].loads[1]: Duplicate value",
			},
			"a dimension name of 41 characters": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].Capacities = []v1alpha1.DimensionCapacity{{Name: strings.Repeat("k", 41), Value: 1}}
				},
				want: "spec.vehicles[0].capacities[0].name: Too long",
			},
			"a capacity of 0": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].Capacities = []v1alpha1.DimensionCapacity{{Name: "kg", Value: 0}}
				},
				want: "spec.vehicles[0].capacities[0].value in body should be greater than 0",
			},
			"four breaks": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].Breaks = make([]v1alpha1.Break, 4)
					for i := range sp.Vehicles[0].Breaks {
						sp.Vehicles[0].Breaks[i] = v1alpha1.Break{Start: "09:00", End: "10:00", Minutes: 5}
					}
				},
				want: "spec.vehicles[0].breaks: Too many: 4: must have at most 3 items",
			},
			"a break of 481 minutes": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].Breaks = []v1alpha1.Break{{Start: "08:00", End: "17:00", Minutes: 481}}
				},
				want: "spec.vehicles[0].breaks[0].minutes in body should be less than or equal to 480",
			},
			"route limits out of bounds": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].MaxDurationMinutes, sp.Vehicles[0].MaxDistanceKm, sp.Vehicles[0].MaxStops = 1441, 10000.5, 501
				},
				want: "spec.vehicles[0].maxDistanceKm in body should be less than or equal to 10000",
			},
			"vehicle start latitude 91": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles[0].Start = &v1alpha1.Location{Latitude: ptr.To(91.0), Longitude: ptr.To(13.4)}
				},
				want: "spec.vehicles[0].start.latitude in body should be less than or equal to 90",
			},
			"fleet break longer than its window": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, VehicleConstraints: v1alpha1.VehicleConstraints{
						Breaks: []v1alpha1.Break{{Start: "12:00", End: "12:30", Minutes: 31}},
					}}
				},
				want: "each break's minutes must fit between its start and end",
			},
			"fleet break outside the shift": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, ShiftStart: "09:00", ShiftEnd: "17:00", VehicleConstraints: v1alpha1.VehicleConstraints{
						Breaks: []v1alpha1.Break{{Start: "08:30", End: "10:00", Minutes: 30}},
					}}
				},
				want: "breaks must lie inside the shift",
			},
			"fleet breaks out of order": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, VehicleConstraints: v1alpha1.VehicleConstraints{
						Breaks: []v1alpha1.Break{{Start: "09:00", End: "12:00", Minutes: 10}, {Start: "10:00", End: "13:00", Minutes: 10}, {Start: "10:00", End: "12:30", Minutes: 10}},
					}}
				},
				want: "breaks are taken in the listed order",
			},
			"fleet end with openEnd": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, VehicleConstraints: v1alpha1.VehicleConstraints{
						End: &v1alpha1.Location{Address: ptr.To("Home Street 1")}, OpenEnd: ptr.To(true),
					}}
				},
				want: "give either end or openEnd, not both",
			},
			"fleet start without location": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, VehicleConstraints: v1alpha1.VehicleConstraints{
						Start: &v1alpha1.Location{Label: ptr.To("Yard")},
					}}
				},
				want: "start needs an address or both latitude and longitude",
			},
			"fleet end latitude without longitude": {
				mutate: func(sp *v1alpha1.OptimizationSpec) {
					sp.Vehicles, sp.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 10, VehicleConstraints: v1alpha1.VehicleConstraints{
						End: &v1alpha1.Location{Latitude: ptr.To(52.4), Address: ptr.To("Home Street 1")},
					}}
				},
				want: "end: latitude and longitude go together",
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
