package vrp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
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

// TestBaselineFirstVehicleThatFits: 150 orders in file order with mixed
// windows and 6 vehicles, where one late-evening order early in the file
// must not retire every day-shift vehicle and leave them empty. Every
// planned order must sit on the first vehicle it fitted when its turn
// came, and every unassigned order's reason is checked true by
// recomputation against the final routes.
func TestBaselineFirstVehicleThatFits(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 150))
	const n = 150
	xs, ys := make([]float64, n+1), make([]float64, n+1)
	xs[0], ys[0] = 10000, 10000
	orders := make([]Order, n)
	for i := range orders {
		xs[i+1], ys[i+1] = 5000+rng.Float64()*10000, 5000+rng.Float64()*10000
		o := Order{Demand: float64(1 + rng.IntN(3)), ServiceS: 300 + 60*rng.IntN(6), WindowEnd: NoWindowEnd}
		switch r := rng.Float64(); {
		case i == 2 || r < 0.08: // late evening
			o.WindowStart, o.WindowEnd = hm(20, 0), hm(21, 0)
		case r < 0.35:
			o.WindowStart, o.WindowEnd = hm(8, 0), hm(12, 0)
		case r < 0.6:
			o.WindowStart, o.WindowEnd = hm(13, 0), hm(17, 0)
		}
		switch i {
		case 7:
			o.Demand = 50 // too large for every vehicle
		case 9:
			o.WindowStart, o.WindowEnd = hm(23, 0), hm(23, 30) // after every shift
		}
		orders[i] = o
	}
	vehicles := []Vehicle{
		{Capacity: 10, ShiftStart: hm(8, 0), ShiftEnd: hm(17, 0)},
		{Capacity: 10, ShiftStart: hm(8, 0), ShiftEnd: hm(17, 0)},
		{Capacity: 8, ShiftStart: hm(8, 0), ShiftEnd: hm(17, 0)},
		{Capacity: 8, ShiftStart: hm(8, 0), ShiftEnd: hm(17, 0)},
		{Capacity: 12, ShiftStart: hm(9, 0), ShiftEnd: hm(18, 0)},
		{Capacity: 20, ShiftStart: hm(14, 0), ShiftEnd: hm(22, 0)},
	}
	// Euclidean at 10 m/s, rounded up: the triangle inequality holds, so a
	// route that did not fit an order cannot fit it after growing.
	p := matrixProblem(orders, vehicles, func(i, j int) int {
		return int(math.Ceil(math.Hypot(xs[i]-xs[j], ys[i]-ys[j]) / 10))
	})

	sol, err := Baseline(p)
	if err != nil {
		t.Fatal(err)
	}
	checkSolution(t, p, sol, true)
	final := make([][]int, len(vehicles))
	for _, r := range sol.Routes {
		for _, s := range r.Stops {
			final[r.Vehicle] = append(final[r.Vehicle], s.Order)
		}
	}
	fits := func(v int, seq []int, u int) bool {
		load := p.Orders[u].Demand
		for _, o := range seq {
			load += p.Orders[o].Demand
		}
		r := Schedule(p, v, append(append([]int(nil), seq...), u))
		return load <= vehicles[v].Capacity && r.Return <= vehicles[v].ShiftEnd
	}

	// Replay file order: each planned order is on the first vehicle whose
	// route so far (its orders before this one) it fits.
	vehicleOf := map[int]int{}
	for v, seq := range final {
		for _, u := range seq {
			vehicleOf[u] = v
		}
	}
	sofar := make([][]int, len(vehicles))
	for u := range orders {
		v, ok := vehicleOf[u]
		if !ok {
			continue
		}
		for w := range v {
			if fits(w, sofar[w], u) {
				t.Errorf("order %d is on vehicle %d but fitted vehicle %d first", u, v, w)
			}
		}
		if !fits(v, sofar[v], u) {
			t.Errorf("order %d does not fit vehicle %d when appended", u, v)
		}
		sofar[v] = append(sofar[v], u)
	}

	// Every unassigned order fits no vehicle's final route, for its reason.
	reasons := map[Reason]int{}
	for _, un := range sol.Unassigned {
		u, o := un.Order, p.Orders[un.Order]
		reasons[un.Reason]++
		var roomy, inShift []int
		for v := range vehicles {
			if fits(v, final[v], u) {
				t.Errorf("unassigned order %d (%s) fits vehicle %d's final route", u, un.Reason, v)
			}
			if _, ret := aloneReturn(p, v, u); ret <= vehicles[v].ShiftEnd && o.Demand <= vehicles[v].Capacity {
				inShift = append(inShift, v)
			}
		}
		for _, v := range inShift {
			load := o.Demand
			for _, x := range final[v] {
				load += p.Orders[x].Demand
			}
			if load <= vehicles[v].Capacity {
				roomy = append(roomy, v)
			}
		}
		switch un.Reason {
		case ReasonTooLarge:
			for v := range vehicles {
				if o.Demand <= vehicles[v].Capacity {
					t.Errorf("order %d too_large but fits the capacity of vehicle %d", u, v)
				}
			}
		case ReasonWindowUnreachable:
			if len(inShift) > 0 {
				t.Errorf("order %d window_unreachable but vehicles %v serve it alone within their shifts", u, inShift)
			}
		case ReasonNoCapacity:
			if len(inShift) == 0 || len(roomy) > 0 {
				t.Errorf("order %d no_capacity, but vehicles %v could serve it alone and %v have room", u, inShift, roomy)
			}
		case ReasonNoTime:
			if len(roomy) == 0 {
				t.Errorf("order %d no_time but no vehicle that could serve it has room: %s", u, un.Message)
			}
			for _, v := range roomy {
				r := Schedule(p, v, append(append([]int(nil), final[v]...), u))
				want := fmt.Sprintf("%s would be back at %s, after its shift end %s", p.vehicleName(v), clock(r.Return), clock(vehicles[v].ShiftEnd))
				if slices.Index(roomy, v) < 3 && !strings.Contains(un.Message, want) {
					t.Errorf("order %d: message %q does not say %q", u, un.Message, want)
				}
			}
		default:
			t.Errorf("order %d: unexpected reason %s", u, un.Reason)
		}
	}

	// The old rule (move on for good at the first vehicle that does not
	// fit) left vehicles empty here; the baseline uses them.
	oldAssigned, oldUsed := oldBaseline(p, fits)
	assigned := n - len(sol.Unassigned)
	t.Logf("assigned %d of %d on %d vehicles (old rule: %d on %d vehicles); unassigned by reason %v", assigned, n, len(sol.Routes), oldAssigned, oldUsed, reasons)
	if oldUsed == len(vehicles) {
		t.Fatalf("the instance does not show the old rule's empty vehicle")
	}
	if len(sol.Routes) != len(vehicles) || assigned <= oldAssigned {
		t.Errorf("baseline used %d vehicles and assigned %d; want all %d vehicles and more than the old rule's %d", len(sol.Routes), assigned, len(vehicles), oldAssigned)
	}
	// The instance exercises every reason the baseline gives.
	for _, r := range []Reason{ReasonTooLarge, ReasonWindowUnreachable, ReasonNoCapacity, ReasonNoTime} {
		if reasons[r] == 0 {
			t.Errorf("no order is unassigned for %s; the instance should show each reason", r)
		}
	}
}

// oldBaseline replays the rule Baseline must not follow: a vehicle that
// does not fit an order is never tried again. It returns the orders assigned and the
// vehicles used.
func oldBaseline(p *Problem, fits func(v int, seq []int, u int) bool) (assigned, used int) {
	seqs := make([][]int, len(p.Vehicles))
	k := 0
	for u, o := range p.Orders {
		if slices.IndexFunc(p.Vehicles, func(v Vehicle) bool { return o.Demand <= v.Capacity }) < 0 {
			continue
		}
		for k < len(seqs) && !fits(k, seqs[k], u) {
			k++
		}
		if k == len(seqs) {
			continue
		}
		seqs[k] = append(seqs[k], u)
		assigned++
	}
	for _, s := range seqs {
		if len(s) > 0 {
			used++
		}
	}
	return assigned, used
}

// TestFitsCapacity checks the relative tolerance: rounding of exact sums
// fits at any scale, a real excess does not, however small the numbers.
func TestFitsCapacity(t *testing.T) {
	tests := []struct {
		name           string
		load, capacity float64
		want           bool
	}{
		{"0.1+0.2 fits 0.3", 0.1 + 0.2, 0.3, true},
		{"exact sum at scale 1e6", (1e6 + 0.1) + 0.2, 1e6 + 0.3, true},
		{"exact sum at scale 1e-9", 1e-10 + 2e-10, 3e-10, true},
		{"two 1e-9 over capacity 1e-9", 1e-9 + 1e-9, 1e-9, false},
		{"1% over", 101, 100, false},
		{"1e-6 relative over", 100.0001, 100, false},
		{"equal", 7, 7, true},
		{"zero load", 0, 1e-12, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fitsCapacity(tc.load, tc.capacity); got != tc.want {
				t.Errorf("fitsCapacity(%v, %v) = %v, want %v", tc.load, tc.capacity, got, tc.want)
			}
		})
	}
}
