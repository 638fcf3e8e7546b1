package v1alpha1

import (
	"testing"
	"time"
)

func TestDefaultSolverSeconds(t *testing.T) {
	for orders, want := range map[int]int{0: 2, 1: 2, 49: 2, 50: 3, 250: 7, 500: 12, 650: 15, 1000: 15} {
		if got := DefaultSolverSeconds(orders); got != want {
			t.Errorf("DefaultSolverSeconds(%d) = %d, want %d", orders, got, want)
		}
	}
}

func TestSolverBudget(t *testing.T) {
	seven := int32(7)
	tests := map[string]struct {
		spec   OptimizationSpec
		orders int
		want   time.Duration
	}{
		"no options, small":       {OptimizationSpec{}, 10, 2 * time.Second},
		"no options, large":       {OptimizationSpec{}, 500, 12 * time.Second},
		"options without seconds": {OptimizationSpec{Options: &Options{Strategy: StrategyBaseline}}, 500, 12 * time.Second},
		"request's seconds win":   {OptimizationSpec{Options: &Options{SolverSeconds: &seven}}, 500, 7 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.spec.EffectiveOptions().SolverBudget(tc.orders); got != tc.want {
				t.Errorf("SolverBudget(%d) = %v, want %v", tc.orders, got, tc.want)
			}
		})
	}
}

func TestRequestDefaults(t *testing.T) {
	two, ten := 2.0, 10.0
	tests := map[string]struct {
		got, want any
	}{
		"vehicle shift unset":    {pair((&Vehicle{}).Shift()), [2]string{"08:00", "18:00"}},
		"vehicle shift given":    {pair((&Vehicle{ShiftStart: "06:00", ShiftEnd: "12:00"}).Shift()), [2]string{"06:00", "12:00"}},
		"fleet shift end unset":  {pair((&Fleet{ShiftStart: "09:00"}).Shift()), [2]string{"09:00", "18:00"}},
		"fleet prefix unset":     {(&Fleet{}).EffectiveNamePrefix(), "Vehicle"},
		"fleet prefix given":     {(&Fleet{NamePrefix: "Van"}).EffectiveNamePrefix(), "Van"},
		"order demand unset":     {(&Order{}).EffectiveDemand(), 1.0},
		"order demand given":     {(&Order{Demand: &two}).EffectiveDemand(), 2.0},
		"order service unset":    {(&Order{}).EffectiveServiceMinutes(), 5.0},
		"order service given":    {(&Order{ServiceMinutes: &ten}).EffectiveServiceMinutes(), 10.0},
		"strategy and objective": {[2]any{(&OptimizationSpec{}).EffectiveOptions().Strategy, (&OptimizationSpec{}).EffectiveOptions().Objective}, [2]any{StrategyOptimized, ObjectiveDistance}},
	}
	for name, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", name, tc.got, tc.want)
		}
	}
}

func pair(a, b string) [2]string { return [2]string{a, b} }
