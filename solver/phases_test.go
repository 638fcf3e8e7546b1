package solver

import (
	"slices"
	"testing"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/store"
)

// TestSolvePhases checks that a solve reports the stages in their documented
// order (docs/API.md, "Stages")
// with rising progress, so a record never shows progress going backwards.
func TestSolvePhases(t *testing.T) {
	var stages []v1alpha1.Stage
	last := int32(0)
	for _, ph := range solvePhases {
		stages = append(stages, ph.stage)
		if ph.progress <= last || ph.progress >= store.ProgressDone {
			t.Errorf("stage %s starts at progress %d, after %d and below %d", ph.stage, ph.progress, last, store.ProgressDone)
		}
		last = ph.progress
	}
	want := []v1alpha1.Stage{v1alpha1.StageGeocoding, v1alpha1.StageMatrix, v1alpha1.StageOptimizing, v1alpha1.StageStoring}
	if !slices.Equal(stages, want) {
		t.Errorf("stages %v, want %v", stages, want)
	}
}

// TestOptimizingProgress checks that the solver's fraction maps into the
// optimizing range, short of the storing stage's progress.
func TestOptimizingProgress(t *testing.T) {
	tests := map[float64]int32{0: progressOptimizing, 0.5: progressOptimizing + 37, 1: progressStoring - 1}
	for fraction, want := range tests {
		r := &progressReporter{latest: make(chan int32, 1)}
		r.observe(fraction)
		r.observe(fraction) // a second value replaces the first, never blocks
		if got := <-r.latest; got != want {
			t.Errorf("observe(%v) reports %d, want %d", fraction, got, want)
		}
	}
}
