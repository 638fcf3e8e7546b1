package vrp

import (
	"context"
	"slices"
	"testing"
	"time"
)

// lineSolver is a soft-mode solver on orders of demand 1 at positions x[1:]
// of a line (the depot at x[0] = 0), with two vehicles of capacity 3 whose
// routes are set to routes (indices into the orders).
func lineSolver(x []int, routes [2][]int) (*solver, *state) {
	orders := make([]Order, len(x)-1)
	for i := range orders {
		orders[i] = Order{Demand: 1, WindowEnd: 10000}
	}
	p := matrixProblem(orders, []Vehicle{{Capacity: 3, ShiftEnd: 10000}, {Capacity: 3, ShiftEnd: 10000}}, func(i, j int) int {
		return max(x[i]-x[j], x[j]-x[i])
	})
	p.Objective = ObjectiveDistance
	s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
	s.soft, s.twPen, s.loadPen = true, 1, 1000
	st := s.newState()
	for v, seq := range routes {
		s.setSeq(st, v, seq)
		st.missing, st.lost = st.missing-len(seq), st.lost-len(seq)
	}
	s.startSwapStar()
	return s, st
}

func TestSwapStarRepositionsBothOrders(t *testing.T) {
	// Orders on a line (depot at 0), capacity 3 for 3 orders each, so no
	// order can move alone. A = [10 50 100] (200 m), B = [20 60 95] (190 m).
	// Exchanging 100 and 20, each at its best position: A = [10 20 50]
	// (100 m), B = [60 95 100] or [60 100 95] (200 m). In each other's
	// place they would give [10 50 20] and [100 60 95]: 370 m.
	s, st := lineSolver([]int{0, 10, 50, 100, 20, 60, 95}, [2][]int{{0, 1, 2}, {3, 4, 5}})
	if st.cost != 390 {
		t.Fatalf("cost %v, want 390", st.cost)
	}
	if !s.swapStar(st, 0, 1) {
		t.Fatal("swapStar found no move")
	}
	s.verify(st, "swap*")
	// B's 100 may go before or after 95: both cost 200 m.
	if !slices.Equal(st.routes[0].seq, []int{0, 3, 1}) || slices.Sorted(slices.Values(st.routes[1].seq))[0] != 2 {
		t.Fatalf("routes %v and %v, want [0 3 1] and B with 20 exchanged for 100", st.routes[0].seq, st.routes[1].seq)
	}
	if st.cost != 300 {
		t.Fatalf("cost %v, want 300", st.cost)
	}
	// No exchange improves on that plan: nothing changes.
	if s.swapStar(st, 0, 1) || st.cost != 300 {
		t.Fatalf("a second swapStar changed the plan: cost %v", st.cost)
	}
}

func TestSwapInto(t *testing.T) {
	seq := []int{7, 8, 9}
	cases := []struct {
		i, q int
		want []int
	}{
		{1, -1, []int{7, 5, 9}}, // in 8's place
		{1, 0, []int{5, 7, 9}},
		{0, 3, []int{8, 9, 5}},
		{2, 1, []int{7, 5, 8}},
	}
	for _, c := range cases {
		if got := swapInto(nil, seq, c.i, 5, c.q); !slices.Equal(got, c.want) {
			t.Errorf("swapInto(%v, i=%d, q=%d) = %v, want %v", seq, c.i, c.q, got, c.want)
		}
	}
}

func TestRelocateStarEmptiesARoute(t *testing.T) {
	// Orders on a line (depot at 0): A = [10 100] (200 m), B = [80]
	// (160 m). Moving 80 into A between 10 and 100 leaves B empty (200 m
	// in all); moving 100 after 80 gives 220 m; moving 10 saves nothing.
	s, st := lineSolver([]int{0, 10, 100, 80}, [2][]int{{0, 1}, {2}})
	if !s.relocateStar(st, 0, 1) {
		t.Fatal("relocateStar found no move")
	}
	s.verify(st, "relocate*")
	if !slices.Equal(st.routes[0].seq, []int{0, 2, 1}) || len(st.routes[1].seq) != 0 || st.cost != 200 {
		t.Fatalf("routes %v and %v, cost %v; want [0 2 1], [] and 200", st.routes[0].seq, st.routes[1].seq, st.cost)
	}
	if s.relocateStar(st, 0, 1) {
		t.Fatal("a second relocateStar found a move")
	}
}

func TestIntensify(t *testing.T) {
	// 100 orders of demand 10: capacity 200 holds 20 average orders (short
	// routes), 300 holds 30 (long).
	problem := func(capacity float64) *Problem {
		orders := make([]Order, 100)
		for i := range orders {
			orders[i] = Order{Demand: 10, WindowEnd: 1000}
		}
		return matrixProblem(orders, []Vehicle{{Capacity: capacity, ShiftEnd: 1000}}, func(i, j int) int {
			return max(i-j, j-i)
		})
	}
	cases := []struct {
		name     string
		capacity float64
		limit    time.Duration
		soft     bool
		ablate   bool
		want     bool
	}{
		{"short routes, 60 ms per order", 200, 6 * time.Second, true, false, true},
		{"short routes, 59 ms per order", 200, 5900 * time.Millisecond, true, false, false},
		{"long routes", 300, 30 * time.Second, true, false, false},
		{"hard mode", 200, 30 * time.Second, false, false, false},
		{"ablated", 200, 30 * time.Second, true, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := Options{Threads: 1, Seed: 1, TimeLimit: c.limit}
			if c.ablate {
				opt = ablated(t, opt, "swap-star")
			}
			s := newSolver(context.Background(), problem(c.capacity), opt, time.Now())
			s.soft = c.soft
			if got := s.intensify(); got != c.want {
				t.Fatalf("intensify = %v, want %v", got, c.want)
			}
		})
	}
}
