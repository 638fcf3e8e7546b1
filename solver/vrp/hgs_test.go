package vrp

import (
	"fmt"
	"testing"
	"time"
)

// TestSearchByBudget: the genetic search runs when the time limit is long
// enough for the problem's size and route length (geneticParams.levelLimit),
// else ruin-and-recreate; orders the first plan cannot place also leave it
// to ruin-and-recreate.
func TestSearchByBudget(t *testing.T) {
	cases := []struct {
		orders, capacity int
		limit            time.Duration
		genetic          bool
	}{
		{100, 4, 1500 * time.Millisecond, true}, // Solomon's size and budget
		{200, 4, 500 * time.Millisecond, false}, // short routes: level near 0.6 s
		{200, 4, time.Second, true},
		{400, 4, 4 * time.Second, false}, // level at geneticParams.levelLimit
		{400, 4, 6 * time.Second, true},
		{450, 4, 7 * time.Second, false}, // short routes: level near 7.8 s
		{450, 4, 8 * time.Second, true},
		{500, 4, 11 * time.Second, false}, // short routes: level near 11.5 s
		{500, 4, 12 * time.Second, true},
		{500, 1000, 9 * time.Second, true},  // long routes: level near 8.7 s
		{1000, 4, 100 * time.Second, false}, // short routes: level near 155 s
		{1000, 4, 160 * time.Second, true},
		{1000, 1000, time.Minute, true}, // long routes: level near 49 s
		{1000, 1000, 30 * time.Second, false},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%d orders, capacity %d, %v", c.orders, c.capacity, c.limit)
		t.Run(name, func(t *testing.T) {
			orders := make([]Order, c.orders)
			vehicles := make([]Vehicle, c.orders)
			for i := range orders {
				orders[i] = Order{Demand: 1, WindowEnd: NoWindowEnd}
				vehicles[i] = Vehicle{Capacity: float64(c.capacity), ShiftEnd: NoWindowEnd}
			}
			p := matrixProblem(orders, vehicles, func(i, j int) int { return 10 * max(i-j, j-i) })
			solver := func() *solver {
				return newSolver(t.Context(), p, Options{Threads: 1, TimeLimit: c.limit}, time.Now())
			}
			if empty := solver(); isHGS(empty.newSearch(empty.newState())) {
				t.Error("genetic search from a plan that misses orders")
			}
			s := solver()
			st := s.newState()
			s.construct(st)
			if st.missing != 0 {
				t.Fatalf("first plan misses %d orders", st.missing)
			}
			if got := isHGS(s.newSearch(st)); got != c.genetic {
				t.Errorf("genetic search %v, want %v", got, c.genetic)
			}
		})
	}
}

func isHGS(x search) bool {
	_, ok := x.(*hgs)
	return ok
}
