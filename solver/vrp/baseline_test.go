package vrp

import (
	"reflect"
	"testing"
)

func routeOrders(sol *Solution) map[int][]int {
	out := map[int][]int{}
	for _, r := range sol.Routes {
		for _, s := range r.Stops {
			out[r.Vehicle] = append(out[r.Vehicle], s.Order)
		}
	}
	return out
}

func TestBaseline(t *testing.T) {
	veh := func(capacity float64, start, end int) Vehicle {
		return Vehicle{Capacity: capacity, ShiftStart: start, ShiftEnd: end}
	}
	o := func(demand float64, service, ws, we int) Order {
		return Order{Demand: demand, ServiceS: service, WindowStart: ws, WindowEnd: we}
	}
	tests := []struct {
		name       string
		orders     []Order
		vehicles   []Vehicle
		travel     int
		wantRoutes map[int][]int
		wantUnassn map[int]Reason
		wantLate   map[int]int // order -> late seconds
	}{
		{
			name:       "file order until capacity",
			orders:     []Order{o(40, 60, 0, NoWindowEnd), o(40, 60, 0, NoWindowEnd), o(40, 60, 0, NoWindowEnd), o(40, 60, 0, NoWindowEnd), o(40, 60, 0, NoWindowEnd)},
			vehicles:   []Vehicle{veh(100, hm(8, 0), hm(18, 0)), veh(100, hm(8, 0), hm(18, 0))},
			travel:     600,
			wantRoutes: map[int][]int{0: {0, 1}, 1: {2, 3}},
			wantUnassn: map[int]Reason{4: ReasonNoCapacity},
		},
		{
			name:       "shift end moves on to the next vehicle",
			orders:     []Order{o(1, 600, 0, NoWindowEnd), o(1, 600, 0, NoWindowEnd), o(1, 600, 0, NoWindowEnd)},
			vehicles:   []Vehicle{veh(100, hm(8, 0), hm(9, 0)), veh(100, hm(8, 0), hm(18, 0))},
			travel:     1200,
			wantRoutes: map[int][]int{0: {0}, 1: {1, 2}},
		},
		{
			name:       "windows not enforced: lateness reported",
			orders:     []Order{o(1, 60, hm(8, 0), hm(8, 10)), o(1, 60, hm(9, 0), hm(9, 30))},
			vehicles:   []Vehicle{veh(100, hm(8, 0), hm(18, 0))},
			travel:     1800,
			wantRoutes: map[int][]int{0: {0, 1}},
			wantLate:   map[int]int{0: 20 * 60},
		},
		{
			name:       "too large and outside every shift",
			orders:     []Order{o(500, 60, 0, NoWindowEnd), o(1, 60, hm(20, 0), NoWindowEnd), o(1, 60, 0, NoWindowEnd)},
			vehicles:   []Vehicle{veh(100, hm(8, 0), hm(18, 0))},
			travel:     600,
			wantRoutes: map[int][]int{0: {2}},
			wantUnassn: map[int]Reason{0: ReasonTooLarge, 1: ReasonWindowUnreachable},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := matrixProblem(tc.orders, tc.vehicles, func(i, j int) int { return tc.travel })
			sol, err := Baseline(p)
			if err != nil {
				t.Fatal(err)
			}
			checkSolution(t, p, sol, true)
			if got := routeOrders(sol); !reflect.DeepEqual(got, tc.wantRoutes) {
				t.Errorf("routes %v, want %v", got, tc.wantRoutes)
			}
			gotU := map[int]Reason{}
			for _, u := range sol.Unassigned {
				gotU[u.Order] = u.Reason
				t.Logf("order %d %s: %s", u.Order, u.Reason, u.Message)
			}
			if len(gotU) != len(tc.wantUnassn) || (len(gotU) > 0 && !reflect.DeepEqual(gotU, tc.wantUnassn)) {
				t.Errorf("unassigned %v, want %v", gotU, tc.wantUnassn)
			}
			for _, r := range sol.Routes {
				for _, s := range r.Stops {
					if s.Late != tc.wantLate[s.Order] {
						t.Errorf("order %d late %d, want %d", s.Order, s.Late, tc.wantLate[s.Order])
					}
				}
			}
		})
	}
}
