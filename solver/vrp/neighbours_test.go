package vrp

import (
	"slices"
	"testing"
	"time"
)

// TestNeighboursByWindows: on short routes an order's neighbours are
// ranked by how well their windows follow as well as by the edge, so a near
// order whose window opens hours later ranks behind a farther one that can
// follow at once: at any size where the genetic search runs, up to
// windowsMaxOrders where ruin-and-recreate does. With long routes, above
// windowsMaxOrders under ruin-and-recreate, and with the piece turned off,
// the edge alone ranks them.
func TestNeighboursByWindows(t *testing.T) {
	// On a line, depot at 0: a at 100 (window 0-100), late at 110 (opens at
	// 5,000: a 4,890 s wait after a, time warp before it), next at 300
	// (200-400, follows a without waiting).
	x := []int{0, 100, 110, 300}
	build := func(fillers, capacity int, limit time.Duration) *solver {
		orders := []Order{{Demand: 1, WindowEnd: 100}, {Demand: 1, WindowStart: 5000, WindowEnd: 5100}, {Demand: 1, WindowStart: 200, WindowEnd: 400}}
		xs := slices.Clone(x)
		for i := range fillers {
			orders = append(orders, Order{Demand: 1, WindowEnd: NoWindowEnd})
			xs = append(xs, 100000+i)
		}
		p := matrixProblem(orders, []Vehicle{{Capacity: float64(capacity), ShiftEnd: NoWindowEnd}}, func(i, j int) int {
			return max(xs[i]-xs[j], xs[j]-xs[i])
		})
		p.Objective = ObjectiveDistance
		return newSolver(t.Context(), p, Options{Threads: 1, TimeLimit: limit}, time.Now())
	}
	const a, late, next = 0, 1, 2
	small := build(0, 2, time.Second) // 2 orders a vehicle: short routes
	if got := small.nb[a][:2]; !slices.Equal(got, []int{next, late}) {
		t.Errorf("3 orders: neighbours of a %v, want [next late] = %v", got, []int{next, late})
	}
	if got, want := small.windowProximity(a, late, 1), 10+0.2*4890; got != want {
		t.Errorf("windowProximity(a, late) = %v, want %v", got, want)
	}
	if got, want := small.windowProximity(late, a, 1), 10+float64(5000+10-100); got != want {
		t.Errorf("windowProximity(late, a) = %v, want %v", got, want)
	}
	small.opt.Ablation.EdgeProximity = true
	small.buildNeighbours()
	if got := small.nb[a][:2]; !slices.Equal(got, []int{late, next}) {
		t.Errorf("window-proximity turned off: neighbours of a %v, want [late next] = %v", got, []int{late, next})
	}
	for _, c := range []struct {
		name              string
		fillers, capacity int
		limit             time.Duration
		genetic           bool // the engine the limit picks
		byWindows         bool
	}{
		{"long routes", 0, 1000, time.Second, true, false},
		{"long routes above windowsMaxOrders", windowsMaxOrders, 1000, time.Minute, true, false},
		{"above windowsMaxOrders, ruin-and-recreate", windowsMaxOrders, 2, time.Second, false, false},
		{"above windowsMaxOrders, the genetic search", windowsMaxOrders, 2, 10 * time.Second, true, true},
	} {
		want := []int{late, next}
		if c.byWindows {
			want = []int{next, late}
		}
		s := build(c.fillers, c.capacity, c.limit)
		if got := s.geneticExpected(); got != c.genetic {
			t.Fatalf("%s: geneticExpected %v, want %v", c.name, got, c.genetic)
		}
		if got := s.nb[a][:2]; !slices.Equal(got, want) {
			t.Errorf("%s: neighbours of a %v, want %v", c.name, got, want)
		}
	}
}
