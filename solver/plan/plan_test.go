package plan

import (
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

func TestParseClock(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    int
		wantErr bool
	}{
		"midnight":       {"00:00", 0, false},
		"eight":          {"08:00", 28800, false},
		"last minute":    {"23:59", 86340, false},
		"hour 24":        {"24:00", 0, true},
		"minute 60":      {"10:60", 0, true},
		"one digit hour": {"8:00", 0, true},
		"no colon":       {"0800", 0, true},
		"empty":          {"", 0, true},
		"seconds":        {"08:00:00", 0, true},
		"sign":           {"-1:00", 0, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseClock(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseClock(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestFleet(t *testing.T) {
	const eight, six = 8 * 3600, 18 * 3600
	tests := map[string]struct {
		spec    v1alpha1.OptimizationSpec
		want    []Vehicle
		wantErr bool
	}{
		"fleet with defaults is named Vehicle 1..N with an 08:00-18:00 shift": {
			spec: v1alpha1.OptimizationSpec{Fleet: &v1alpha1.Fleet{Count: 3, Capacity: 10, FixedCost: 2}},
			want: []Vehicle{
				{Ref: "Vehicle 1", Vehicle: vrp.Vehicle{Capacity: 10, ShiftStart: eight, ShiftEnd: six, FixedCost: 2, Name: "Vehicle 1"}},
				{Ref: "Vehicle 2", Vehicle: vrp.Vehicle{Capacity: 10, ShiftStart: eight, ShiftEnd: six, FixedCost: 2, Name: "Vehicle 2"}},
				{Ref: "Vehicle 3", Vehicle: vrp.Vehicle{Capacity: 10, ShiftStart: eight, ShiftEnd: six, FixedCost: 2, Name: "Vehicle 3"}},
			},
		},
		"fleet with a prefix and a shift": {
			spec: v1alpha1.OptimizationSpec{Fleet: &v1alpha1.Fleet{Count: 2, Capacity: 5, NamePrefix: "Van", ShiftStart: "06:30", ShiftEnd: "14:00"}},
			want: []Vehicle{
				{Ref: "Van 1", Vehicle: vrp.Vehicle{Capacity: 5, ShiftStart: 6*3600 + 1800, ShiftEnd: 14 * 3600, Name: "Van 1"}},
				{Ref: "Van 2", Vehicle: vrp.Vehicle{Capacity: 5, ShiftStart: 6*3600 + 1800, ShiftEnd: 14 * 3600, Name: "Van 2"}},
			},
		},
		"vehicles keep their ids and drivers; an unset shift end defaults": {
			spec: v1alpha1.OptimizationSpec{Vehicles: []v1alpha1.Vehicle{
				{ID: "b", Capacity: 3, Driver: ptr.To("Anna"), ShiftStart: "09:00"},
				{ID: "a", Capacity: 4},
			}},
			want: []Vehicle{
				{Ref: "b", Driver: ptr.To("Anna"), Vehicle: vrp.Vehicle{Capacity: 3, ShiftStart: 9 * 3600, ShiftEnd: six, Name: "b"}},
				{Ref: "a", Vehicle: vrp.Vehicle{Capacity: 4, ShiftStart: eight, ShiftEnd: six, Name: "a"}},
			},
		},
		"a shift that is not HH:MM": {
			spec:    v1alpha1.OptimizationSpec{Vehicles: []v1alpha1.Vehicle{{ID: "a", Capacity: 1, ShiftEnd: "25:00"}}},
			wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Fleet(&tc.spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Fleet() error = %v, want error %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Fleet() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// square is an n×n matrix of v off the diagonal.
func square(n, v int) [][]int {
	m := make([][]int, n)
	for i := range m {
		m[i] = make([]int, n)
		for j := range m[i] {
			if i != j {
				m[i][j] = v
			}
		}
	}
	return m
}

func TestProblem(t *testing.T) {
	orders := []v1alpha1.Order{
		{ID: "defaults"},
		{ID: "dropped"},
		{ID: "given", Demand: ptr.To(2.5), ServiceMinutes: ptr.To(0.75), TimeWindowStart: ptr.To("09:00"), TimeWindowEnd: ptr.To("10:30")},
		{ID: "start only", TimeWindowStart: ptr.To("13:00")},
	}
	// Order "dropped" was not located: the problem has the other three, in spec order.
	in := &Located{Orders: []int{0, 2, 3}}
	m := &matrix.Matrix{Distance: square(4, 100), Duration: square(4, 60)}
	fleet := []Vehicle{{Ref: "v", Vehicle: vrp.Vehicle{Capacity: 10, ShiftStart: 0, ShiftEnd: 86340, Name: "v"}}}
	wantOrders := []vrp.Order{
		{Demand: 1, ServiceS: 300, WindowEnd: vrp.NoWindowEnd},
		{Demand: 2.5, ServiceS: 45, WindowStart: 9 * 3600, WindowEnd: 10*3600 + 1800},
		{Demand: 1, ServiceS: 300, WindowStart: 13 * 3600, WindowEnd: vrp.NoWindowEnd},
	}
	tests := map[string]struct {
		options *v1alpha1.Options
		want    vrp.Objective
	}{
		"no options: distance":  {nil, vrp.ObjectiveDistance},
		"objective distance":    {&v1alpha1.Options{Objective: v1alpha1.ObjectiveDistance}, vrp.ObjectiveDistance},
		"objective duration":    {&v1alpha1.Options{Objective: v1alpha1.ObjectiveDuration}, vrp.ObjectiveDuration},
		"only a strategy given": {&v1alpha1.Options{Strategy: v1alpha1.StrategyBaseline}, vrp.ObjectiveDistance},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &v1alpha1.OptimizationSpec{Orders: orders, Options: tc.options}
			p, err := Problem(spec, in, m, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if p.Objective != tc.want {
				t.Errorf("objective = %v, want %v", p.Objective, tc.want)
			}
			if !reflect.DeepEqual(p.Orders, wantOrders) {
				t.Errorf("orders = %+v, want %+v", p.Orders, wantOrders)
			}
			if len(p.Vehicles) != 1 || !reflect.DeepEqual(p.Vehicles[0], fleet[0].Vehicle) {
				t.Errorf("vehicles = %+v, want %+v", p.Vehicles, fleet[0].Vehicle)
			}
		})
	}

	t.Run("a window that is not HH:MM", func(t *testing.T) {
		spec := &v1alpha1.OptimizationSpec{Orders: []v1alpha1.Order{{ID: "x", TimeWindowEnd: ptr.To("noon")}}}
		if _, err := Problem(spec, &Located{Orders: []int{0}}, &matrix.Matrix{Distance: square(2, 1), Duration: square(2, 1)}, fleet); err == nil {
			t.Error("Problem() accepted a window end of \"noon\"")
		}
	})
}
