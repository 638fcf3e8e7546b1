package vrp

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestSplitToEmptyMendsLateRoute: in soft mode a route that is late after
// its first order is split when its time warp costs more than the second
// route's extra distance (no single-order move to an empty vehicle clears
// it), and is left alone when the time warp is cheap, when its tail is
// empty, and in hard mode.
func TestSplitToEmptyMendsLateRoute(t *testing.T) {
	// Depot at 0; order 0 at 100 must start at 100 and takes 50 s; orders
	// 1 and 2 at 110 and 115 close at 120 and 130. Together: 230 m and 40 s
	// of time warp at order 1; split after order 0: 430 m, on time.
	x := []int{0, 100, 110, 115}
	p := matrixProblem([]Order{
		{Demand: 1, ServiceS: 50, WindowStart: 100, WindowEnd: 100},
		{Demand: 1, WindowEnd: 120},
		{Demand: 1, WindowEnd: 130},
	}, []Vehicle{{Capacity: 10, ShiftEnd: 1000}, {Capacity: 10, ShiftEnd: 1000}}, func(i, j int) int {
		return max(x[i]-x[j], x[j]-x[i])
	})
	p.Objective = ObjectiveDistance
	cases := []struct {
		name  string
		soft  bool
		twPen float64
		u     int
		split bool
	}{
		{"time warp dearer than the detour", true, 10, 0, true},
		{"time warp cheaper than the detour", true, 1, 0, false},
		// 230 m + 40 s x 5.1 = 434 against 430: the bounds must not
		// rule out a saving of 4; at 4.9, 426 against 430.
		{"time warp just dearer", true, 5.1, 0, true},
		{"time warp just cheaper", true, 4.9, 0, false},
		{"nothing after u", true, 10, 2, false},
		{"hard mode", false, 10, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
			s.soft, s.twPen, s.loadPen = c.soft, c.twPen, 1
			st := s.newState()
			s.setSeq(st, 0, []int{0, 1, 2})
			st.missing, st.lost = st.missing-3, st.lost-3
			if got := st.routes[0].full.tw; got != 40 {
				t.Fatalf("time warp %d, want 40", got)
			}
			before := st.cost
			if got := s.splitToEmpty(st, c.u); got != c.split {
				t.Fatalf("splitToEmpty = %v, want %v", got, c.split)
			}
			if c.soft { // hard mode keeps no late route: verify would refuse the start
				s.verify(st, "split")
			}
			if !c.split {
				if st.cost != before || len(st.routes[1].seq) != 0 {
					t.Fatalf("plan changed: cost %v -> %v, vehicle 2 %v", before, st.cost, st.routes[1].seq)
				}
				return
			}
			if !slices.Equal(st.routes[0].seq, []int{0}) || !slices.Equal(st.routes[1].seq, []int{1, 2}) {
				t.Fatalf("routes %v and %v, want [0] and [1 2]", st.routes[0].seq, st.routes[1].seq)
			}
			if st.cost != 430 {
				t.Fatalf("cost %v, want 430 (on time)", st.cost)
			}
		})
	}
}
