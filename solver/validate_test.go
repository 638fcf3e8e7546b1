package solver

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// validSpec is a spec every rule accepts; cases break one thing in it.
func validSpec() *v1alpha1.OptimizationSpec {
	return &v1alpha1.OptimizationSpec{
		Depot: v1alpha1.Depot{Latitude: ptr.To(52.5), Longitude: ptr.To(13.4)},
		Orders: []v1alpha1.Order{
			{ID: "A-1", Latitude: ptr.To(52.51), Longitude: ptr.To(13.41), TimeWindowStart: ptr.To("09:00"), TimeWindowEnd: ptr.To("12:00")},
			{ID: "A-17", Address: ptr.To("Unter den Linden 1, Berlin")},
		},
		Vehicles: []v1alpha1.Vehicle{{ID: "v1", Capacity: 10, ShiftStart: "08:00", ShiftEnd: "18:00"}},
	}
}

func TestValidateSpec(t *testing.T) {
	tests := map[string]struct {
		mutate func(*v1alpha1.OptimizationSpec)
		want   []string // substrings of the message; none means valid
	}{
		"valid": {mutate: func(*v1alpha1.OptimizationSpec) {}},
		"valid with a fleet and default shifts": {mutate: func(s *v1alpha1.OptimizationSpec) {
			s.Vehicles, s.Fleet = nil, &v1alpha1.Fleet{Count: 2, Capacity: 5}
		}},
		"valid window of one minute": {mutate: func(s *v1alpha1.OptimizationSpec) {
			s.Orders[0].TimeWindowStart, s.Orders[0].TimeWindowEnd = ptr.To("10:00"), ptr.To("10:00")
		}},
		"valid window with only an end": {mutate: func(s *v1alpha1.OptimizationSpec) {
			s.Orders[0].TimeWindowStart = nil
		}},
		"time window reversed": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Orders[1].TimeWindowStart, s.Orders[1].TimeWindowEnd = ptr.To("12:00"), ptr.To("09:00")
			},
			want: []string{`order "A-17": time window 12:00–09:00 ends before it starts`},
		},
		"time window not HH:MM": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders[1].TimeWindowEnd = ptr.To("9am") },
			want:   []string{`order "A-17": time window end "9am" is not HH:MM`},
		},
		"order without location": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders[1].Address = nil },
			want:   []string{`order "A-17": needs an address or both latitude and longitude`},
		},
		"order with a blank address only": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders[1].Address = ptr.To("   ") },
			want:   []string{`order "A-17": needs an address or both latitude and longitude`},
		},
		"order latitude without longitude": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders[0].Longitude = nil },
			want:   []string{`order "A-1": latitude and longitude must be given together`},
		},
		"order longitude without latitude, address given": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders[1].Longitude = ptr.To(13.0) },
			want:   []string{`order "A-17": latitude and longitude must be given together`},
		},
		"order without id": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders[1].ID = "" },
			want:   []string{"order 2 of the list has no id"},
		},
		"duplicate order ids": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Orders = append(s.Orders, s.Orders[1], s.Orders[0], s.Orders[1])
			},
			want: []string{`order "A-1" appears 2 times; order ids must be unique`, `order "A-17" appears 3 times`},
		},
		"no orders": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Orders = nil },
			want:   []string{"there are no orders"},
		},
		"depot without location": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Depot = v1alpha1.Depot{Address: ptr.To(" \t ")} },
			want:   []string{"the depot needs an address or both latitude and longitude"},
		},
		"depot latitude without longitude": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Depot.Longitude = nil },
			want:   []string{"the depot: latitude and longitude must be given together"},
		},
		"vehicle shift reversed": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Vehicles[0].ShiftStart = "19:00" },
			want:   []string{`vehicle "v1": shift 19:00–18:00 ends before it starts`},
		},
		"vehicle shift start after the default end": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Vehicles[0].ShiftStart, s.Vehicles[0].ShiftEnd = "19:00", "" },
			want:   []string{`vehicle "v1": shift 19:00–18:00 ends before it starts`},
		},
		"duplicate vehicle ids": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Vehicles = append(s.Vehicles, s.Vehicles[0]) },
			want:   []string{`vehicle "v1" appears 2 times; vehicle ids must be unique`},
		},
		"fleet shift reversed": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Vehicles, s.Fleet = nil, &v1alpha1.Fleet{Count: 1, Capacity: 5, ShiftStart: "17:00", ShiftEnd: "09:00"}
			},
			want: []string{"the fleet: shift 17:00–09:00 ends before it starts"},
		},
		"fleet of zero": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Vehicles, s.Fleet = nil, &v1alpha1.Fleet{Capacity: 5} },
			want:   []string{"the fleet: count 0 is not at least 1"},
		},
		"vehicles and fleet": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Fleet = &v1alpha1.Fleet{Count: 1, Capacity: 5} },
			want:   []string{"give either vehicles or fleet, not both"},
		},
		"neither vehicles nor fleet": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Vehicles = nil },
			want:   []string{"either vehicles or fleet is required"},
		},
		"empty vehicles": {
			mutate: func(s *v1alpha1.OptimizationSpec) { s.Vehicles = []v1alpha1.Vehicle{} },
			want:   []string{"vehicles is empty"},
		},
		"valid with every fleet constraint": {mutate: func(s *v1alpha1.OptimizationSpec) {
			s.Orders[1].TimeWindows = []v1alpha1.TimeWindow{{Start: "08:00", End: "09:00"}, {Start: "09:01", End: "12:00"}}
			s.Orders[1].Loads = []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 5}}
			s.Vehicles[0].VehicleConstraints = v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 500}, {Name: "pallets", Value: 2}},
				Breaks:     []v1alpha1.Break{{Start: "11:00", End: "13:00", Minutes: 120}, {Start: "11:00", End: "18:00", Minutes: 15}},
				Start:      &v1alpha1.Location{Address: ptr.To("Home 1")}, OpenEnd: ptr.To(true),
			}
		}},
		"time windows with a window start": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Orders[0].TimeWindows = []v1alpha1.TimeWindow{{Start: "08:00", End: "09:00"}}
			},
			want: []string{`order "A-1": give either timeWindows or timeWindowStart and timeWindowEnd, not both`},
		},
		"time windows overlapping, reversed, not HH:MM": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Orders[1].TimeWindows = []v1alpha1.TimeWindow{{Start: "08:00", End: "10:00"}, {Start: "10:00", End: "11:00"}, {Start: "13:00", End: "12:00"}, {Start: "1pm", End: "14:00"}}
			},
			want: []string{
				`order "A-17": time window 2 10:00–11:00 does not start after the previous one ends at 10:00`,
				`order "A-17": time window 3 13:00–12:00 ends before it starts`,
				`order "A-17": time window 4 start "1pm" is not HH:MM`,
			},
		},
		"breaks that do not fit, outside the shift, out of order": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Vehicles[0].Breaks = []v1alpha1.Break{{Start: "12:00", End: "12:20", Minutes: 30}, {Start: "07:00", End: "09:00", Minutes: 10}, {Start: "11:00", End: "noon", Minutes: 10}}
			},
			want: []string{
				`vehicle "v1": break 1 of 30 minutes does not fit between 12:00 and 12:20`,
				`vehicle "v1": break 2 07:00–09:00 is not inside the shift 08:00–18:00`,
				`vehicle "v1": break 2 07:00–09:00 starts or ends before break 1`,
				`vehicle "v1": break 3 end "noon" is not HH:MM`,
			},
		},
		"the fleet's end with openEnd, a start without a place": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Vehicles, s.Fleet = nil, &v1alpha1.Fleet{Count: 2, Capacity: 5, VehicleConstraints: v1alpha1.VehicleConstraints{
					Start: &v1alpha1.Location{Label: ptr.To("Home")}, End: &v1alpha1.Location{Latitude: ptr.To(52.0)}, OpenEnd: ptr.To(true),
				}}
			},
			want: []string{
				"the fleet: give either end or openEnd, not both",
				"the fleet: start needs an address or both latitude and longitude",
				"the fleet: end: latitude and longitude must be given together",
			},
		},
		"a vehicle without a capacity in a dimension of the loads": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Orders[0].Loads = []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 5}, {Name: "volume_l", Value: 5}}
				s.Vehicles = append(s.Vehicles, v1alpha1.Vehicle{ID: "v2", Capacity: 1, VehicleConstraints: v1alpha1.VehicleConstraints{
					Capacities: []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 500}},
				}})
			},
			want: []string{
				`vehicle "v1": capacities must give every dimension the orders' loads name; missing: "volume_l", "weight_kg"`,
				`vehicle "v2": capacities must give every dimension the orders' loads name; missing: "weight_kg"`,
			},
		},
		"several problems in spec order": {
			mutate: func(s *v1alpha1.OptimizationSpec) {
				s.Orders[0].Longitude = nil
				s.Orders[1].TimeWindowStart, s.Orders[1].TimeWindowEnd = ptr.To("12:00"), ptr.To("09:00")
			},
			want: []string{`order "A-1": latitude and longitude must be given together; order "A-17": time window 12:00–09:00 ends before it starts`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(spec)
			f := ValidateSpec(spec)
			if len(tc.want) == 0 {
				if f != nil {
					t.Fatalf("ValidateSpec = %v, want nil", f)
				}
				return
			}
			if f == nil {
				t.Fatalf("ValidateSpec = nil, want a failure containing %q", tc.want)
			}
			if f.Code != v1alpha1.ErrorInvalidInput {
				t.Errorf("code = %q, want %q", f.Code, v1alpha1.ErrorInvalidInput)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message %q does not contain %q", f.Message, w)
				}
			}
		})
	}
}

// TestValidateSpecBoundsTheMessage: 500 bad orders give a message of a few
// problems and a count of the rest, not 500 lines.
func TestValidateSpecBoundsTheMessage(t *testing.T) {
	spec := validSpec()
	spec.Orders = nil
	for i := range 500 {
		spec.Orders = append(spec.Orders, v1alpha1.Order{ID: fmt.Sprintf("o%d", i)})
	}
	f := ValidateSpec(spec)
	if f == nil {
		t.Fatal("ValidateSpec accepted 500 orders without a location")
	}
	if got := strings.Count(f.Message, "needs an address"); got != record.MaxListedProblems {
		t.Errorf("message lists %d problems, want %d: %s", got, record.MaxListedProblems, f.Message)
	}
	if want := fmt.Sprintf("(and %d more problem(s))", 500-record.MaxListedProblems); !strings.HasSuffix(f.Message, want) {
		t.Errorf("message %q does not end with %q", f.Message, want)
	}
	if !strings.HasPrefix(f.Message, `order "o0": `) {
		t.Errorf("message %q does not start with the first order", f.Message)
	}
}
