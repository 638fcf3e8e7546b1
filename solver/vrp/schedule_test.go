package vrp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func hm(h, m int) int { return h*3600 + m*60 }

func TestSchedule(t *testing.T) {
	shift := Vehicle{Capacity: 100, ShiftStart: hm(8, 0), ShiftEnd: hm(18, 0)}
	tests := []struct {
		name       string
		orders     []Order
		travel     func(i, j int) int
		seq        []int
		wantDepart int
		wantReturn int
		wantStops  []Stop // compared on Arrival, Start, Wait, Late
	}{
		{
			name:       "empty route",
			orders:     []Order{{WindowEnd: NoWindowEnd}},
			travel:     func(i, j int) int { return 600 },
			seq:        nil,
			wantDepart: hm(8, 0), wantReturn: hm(8, 0),
		},
		{
			name:       "no waiting: leaves at shift start",
			orders:     []Order{{ServiceS: 300, WindowEnd: NoWindowEnd}},
			travel:     func(i, j int) int { return 600 },
			seq:        []int{0},
			wantDepart: hm(8, 0), wantReturn: hm(8, 25),
			wantStops: []Stop{{Arrival: hm(8, 10), Start: hm(8, 10)}},
		},
		{
			name:       "waiting removed by a later departure",
			orders:     []Order{{ServiceS: 300, WindowStart: hm(10, 0), WindowEnd: hm(11, 0)}},
			travel:     func(i, j int) int { return 1800 },
			seq:        []int{0},
			wantDepart: hm(9, 30), wantReturn: hm(10, 35),
			wantStops: []Stop{{Arrival: hm(10, 0), Start: hm(10, 0)}},
		},
		{
			name: "delay limited by an earlier window",
			orders: []Order{
				{WindowStart: hm(8, 0), WindowEnd: hm(8, 40)},
				{ServiceS: 600, WindowStart: hm(10, 0), WindowEnd: NoWindowEnd},
			},
			travel: func(i, j int) int {
				if i == 1 && j == 2 {
					return 600
				}
				return 1800
			},
			seq:        []int{0, 1},
			wantDepart: hm(8, 10), wantReturn: hm(10, 40),
			wantStops: []Stop{
				{Arrival: hm(8, 40), Start: hm(8, 40)},
				{Arrival: hm(8, 50), Start: hm(10, 0), Wait: 70 * 60},
			},
		},
		{
			name: "late stop is reported and not made later",
			orders: []Order{
				{WindowStart: hm(8, 0), WindowEnd: hm(8, 10)},
				{WindowStart: hm(12, 0), WindowEnd: NoWindowEnd},
			},
			travel:     func(i, j int) int { return 1800 },
			seq:        []int{0, 1},
			wantDepart: hm(8, 0), wantReturn: hm(12, 30),
			wantStops: []Stop{
				{Arrival: hm(8, 30), Start: hm(8, 30), Late: 20 * 60},
				{Arrival: hm(9, 0), Start: hm(12, 0), Wait: 3 * 3600},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := matrixProblem(tc.orders, []Vehicle{shift}, tc.travel)
			r := Schedule(p, 0, tc.seq)
			if r.Depart != tc.wantDepart || r.Return != tc.wantReturn {
				t.Errorf("depart %s return %s, want %s %s", clock(r.Depart), clock(r.Return), clock(tc.wantDepart), clock(tc.wantReturn))
			}
			if len(r.Stops) != len(tc.wantStops) {
				t.Fatalf("%d stops, want %d", len(r.Stops), len(tc.wantStops))
			}
			for i, w := range tc.wantStops {
				g := r.Stops[i]
				if g.Arrival != w.Arrival || g.Start != w.Start || g.Wait != w.Wait || g.Late != w.Late {
					t.Errorf("stop %d: arrival %s start %s wait %d late %d, want %s %s %d %d", i,
						clock(g.Arrival), clock(g.Start), g.Wait, g.Late, clock(w.Arrival), clock(w.Start), w.Wait, w.Late)
				}
			}
			if len(tc.seq) > 0 {
				checkSolution(t, p, &Solution{Routes: []Route{r}, Cost: routeCost(p, &r)}, true)
			}
		})
	}
}

// TestSegmentsAgreeWithSchedule checks the solver's O(1) segment evaluation
// against Schedule and against the independent simulation of the tests, on
// random sequences: same feasibility, same cost.
func TestSegmentsAgreeWithSchedule(t *testing.T) {
	for _, obj := range []Objective{ObjectiveDistance, ObjectiveDuration} {
		p := genProblem(11, genConfig{orders: 30, vehicles: 4, side: 10000, windowShare: 0.7, capFactor: 2, objective: obj, fixedCost: 100, hetero: true, asymmetric: true})
		s := newSolver(context.Background(), p, Options{}, time.Now())
		rng := rand.New(rand.NewPCG(1, 2))
		feasibleCount := 0
		for range 3000 {
			v := rng.IntN(len(p.Vehicles))
			seq := rng.Perm(len(p.Orders))[:1+rng.IntN(6)]
			full := s.evalSeq(v, seq)
			r := Schedule(p, v, seq)
			ok := s.feasible(v, &full)
			if ok != routeFeasible(p, &r) {
				t.Fatalf("%s v%d %v: segment feasible %v, schedule feasible %v", obj, v, seq, ok, routeFeasible(p, &r))
			}
			want := seqCost(p, v, seq)
			if ok != !math.IsInf(want, 1) {
				t.Fatalf("%s v%d %v: segment feasible %v, simulation cost %v", obj, v, seq, ok, want)
			}
			if !ok {
				continue
			}
			feasibleCount++
			if got, sched := s.cost(v, &full), routeCost(p, &r); got != want || sched != want {
				t.Fatalf("%s v%d %v: segment cost %v, schedule cost %v, simulation %v", obj, v, seq, got, sched, want)
			}
		}
		if feasibleCount < 300 {
			t.Errorf("%s: only %d feasible samples", obj, feasibleCount)
		}
	}
}
