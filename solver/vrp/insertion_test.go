package vrp

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestBestInsertionExactWithoutTriangleInequality: the exhaustive insertion
// (the one that decides whether an order stays unplanned) must not stop at
// a position that reaches the order too late, because with a matrix that
// breaks the triangle inequality a later position can reach it in time:
// depot -> A -> u takes 210 s but depot -> A -> B -> u only 25 s.
func TestBestInsertionExactWithoutTriangleInequality(t *testing.T) {
	const A, B, U = 0, 1, 2 // orders; locations are +1
	leg := map[[2]int]int{
		{0, 1}: 10, {1, 2}: 10, {2, 3}: 5, {1, 3}: 200, {0, 3}: 50, {3, 1}: 500,
		{3, 0}: 50, {2, 0}: 20, {1, 0}: 10, {0, 2}: 20, {3, 2}: 500, {2, 1}: 10,
	}
	p := matrixProblem(
		[]Order{{WindowEnd: 100}, {WindowEnd: 1000}, {WindowEnd: 60}},
		[]Vehicle{{Capacity: 10, ShiftEnd: 10000}},
		func(i, j int) int { return leg[[2]int{i, j}] },
	)
	s := newSolver(context.Background(), p, Options{Threads: 1}, time.Now())
	st := s.newState()
	s.setSeq(st, 0, []int{A, B})
	if v, q, _ := s.bestInsertion(st, U, 0, false); v != 0 || q != 2 {
		t.Fatalf("exact insertion of u at vehicle %d position %d, want vehicle 0 position 2", v, q)
	}
}

// TestBestInsertionDeltaIsExact: the cost change bestInsertion reports is the
// change that inserting there makes, on asymmetric matrices (which it reads
// through the transposed rows of legsIn) with both objectives, in
// hard and soft mode.
func TestBestInsertionDeltaIsExact(t *testing.T) {
	for _, obj := range []Objective{ObjectiveDistance, ObjectiveDuration} {
		for _, soft := range []bool{false, true} {
			p := genProblem(5, genConfig{orders: 60, vehicles: 6, side: 15000, windowShare: 0.6, capFactor: 1.3, objective: obj, fixedCost: 500, hetero: true, asymmetric: true})
			s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 2}, time.Now())
			if isSymmetric(p.Distance) || &s.legsIn[0] == &s.legs[0] || s.legsIn[3*s.size+7] != s.legs[7*s.size+3] || s.legsIn[7*s.size+3][legDur] != int32(p.Duration[3][7]) {
				t.Fatal("the test needs an asymmetric matrix and its transpose")
			}
			s.soft, s.twPen, s.loadPen = soft, 3, 50
			st := s.newState()
			inserted := 0
			for u := range s.n {
				v, q, delta := s.bestInsertion(st, u, 0, u%2 == 0)
				if v < 0 {
					continue
				}
				before := st.cost
				s.insert(st, u, v, q)
				inserted++
				if got := st.cost - before; math.Abs(got-delta) > 1e-6 {
					t.Fatalf("objective %v soft %v: order %d at vehicle %d position %d changed the cost by %v, bestInsertion said %v", obj, soft, u, v, q, got, delta)
				}
			}
			if inserted < s.n/2 {
				t.Fatalf("objective %v soft %v: only %d of %d orders inserted", obj, soft, inserted, s.n)
			}
		}
	}
}

// TestWindowRangeKeepsFeasiblePositions: every position where an order fits
// without time warp lies in its windowRange, on a matrix with and without
// the triangle inequality, and the range does leave positions out (else
// the test would not show anything).
func TestWindowRangeKeepsFeasiblePositions(t *testing.T) {
	for _, broken := range []bool{false, true} {
		p := genProblem(9, genConfig{orders: 80, vehicles: 5, side: 15000, windowShare: 0.7, capFactor: 2, objective: ObjectiveDistance, hetero: true, asymmetric: true})
		if broken {
			breakTriangle(p, 3, 400)
		}
		s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
		st := s.newState()
		for u := range s.n / 2 {
			if v, q, _ := s.bestInsertion(st, u, 0, false); v >= 0 {
				s.insert(st, u, v, q)
			}
		}
		feasible, outside := 0, 0
		for u := s.n / 2; u < s.n; u++ {
			for v := range st.routes {
				r := &st.routes[v]
				lo, hi := windowRange(r, &s.single[u])
				for q := 0; q <= len(r.seq); q++ {
					x := s.merge(&r.pre[q], &s.single[u])
					full := s.merge(&x, &r.tail[q])
					if full.tw == 0 {
						feasible++
						if q < lo || q > hi {
							t.Fatalf("broken %v: order %d fits vehicle %d at position %d outside its window range %d..%d", broken, u, v, q, lo, hi)
						}
					} else if q < lo || q > hi {
						outside++
					}
				}
			}
		}
		if feasible == 0 || outside == 0 {
			t.Fatalf("broken %v: %d feasible positions, %d left out by the range: the test shows nothing", broken, feasible, outside)
		}
	}
}

// TestWindowRangeMatchesLinearScan: the branch-free searches of
// windowRange return what a scan of every position returns: hi the last
// position whose prefix ends by the window's close, lo the first one up to
// hi whose tail starts late enough, on random non-decreasing scans with
// the time-warp sentinels and on routes of 0 to 20 orders.
func TestWindowRangeMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 20000 {
		k := trial % 21
		r := &route{scan: make([]scanPos, k+1)}
		ee, ls := rng.IntN(50), rng.IntN(50)
		for i := range r.scan {
			ee += rng.IntN(20)
			ls += rng.IntN(20)
			r.scan[i].ee, r.scan[i].ls = ee, ls
		}
		// prefixes with time warp end the scan, tails with it start it
		if w := rng.IntN(k + 3); w <= k {
			for i := w; i <= k; i++ {
				r.scan[i].ee = noEnd
			}
		}
		if w := rng.IntN(k + 3); w <= k {
			for i := 0; i <= w; i++ {
				r.scan[i].ls = noStart
			}
		}
		su := &seg{e: rng.IntN(400), dur: rng.IntN(30)}
		su.l = su.e + rng.IntN(200)
		wantHi := -1
		for i, p := range r.scan {
			if p.ee <= su.l {
				wantHi = i
			}
		}
		wantLo := wantHi + 1
		for i := wantHi; i >= 0; i-- {
			if r.scan[i].ls >= su.e+su.dur {
				wantLo = i
			}
		}
		if wantHi < 0 {
			wantLo = 0
		}
		if lo, hi := windowRange(r, su); lo != wantLo || hi != wantHi {
			t.Fatalf("scan %+v, order %+v: range %d..%d, want %d..%d", r.scan, *su, lo, hi, wantLo, wantHi)
		}
	}
}

// TestFastInsertionMatchesSegments: in hard mode with the distance
// objective an insertion reads only route.scan, and ruin-and-recreate does
// not even keep the segments up to date (solver.lazy). The cheapest
// insertion it finds must cost what a brute force over every position of
// every route finds with segments, on matrices with and without the
// triangle inequality, and the position it returns must be feasible at
// that cost.
func TestFastInsertionMatchesSegments(t *testing.T) {
	for _, broken := range []bool{false, true} {
		p := genProblem(21, genConfig{orders: 90, vehicles: 6, side: 15000, windowShare: 0.7, capFactor: 1.3, objective: ObjectiveDistance, fixedCost: 700, hetero: true, asymmetric: true})
		if broken {
			breakTriangle(p, 5, 600)
		}
		s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
		st := s.newState()
		s.lazy = true
		for u := range s.n * 2 / 3 {
			if v, q, _ := s.bestInsertion(st, u, 0, false); v >= 0 {
				s.insert(st, u, v, q)
			}
		}
		s.lazy = false
		s.verify(st, "lazy insertions")
		stale := 0
		for v := range st.routes {
			if st.routes[v].stale {
				stale++
			}
		}
		if stale == 0 {
			t.Fatalf("broken %v: no route left stale: the lazy refresh was not exercised", broken)
		}
		found, late := 0, 0
		for u := s.n * 2 / 3; u < s.n; u++ {
			v, q, d := s.bestInsertion(st, u, 0, false)
			want := math.Inf(1)
			for w := range st.routes {
				r := s.fresh(st, w)
				if len(r.seq) == 0 {
					continue
				}
				for k := 0; k <= len(r.seq); k++ {
					x := s.merge(&r.pre[k], &s.single[u])
					full := s.merge(&x, &r.tail[k])
					if s.feasible(w, &full) {
						want = min(want, s.cost(w, &full)-r.cost)
					} else {
						late++
					}
				}
			}
			nt := len(s.types)
			for tp, c := range s.alone[u*nt : u*nt+nt] {
				if s.firstEmpty(st, tp) >= 0 {
					want = min(want, c)
				}
			}
			if v < 0 {
				t.Fatalf("broken %v: order %d: no insertion found, brute force costs %v", broken, u, want)
			}
			if d != want {
				t.Fatalf("broken %v: order %d: insertion costs %v, brute force %v", broken, u, d, want)
			}
			r := s.fresh(st, v)
			seq := append(append(append([]int{}, r.seq[:q]...), u), r.seq[q:]...)
			full := s.evalSeq(v, seq)
			if !s.feasible(v, &full) || s.cost(v, &full)-r.cost != d {
				t.Fatalf("broken %v: order %d at vehicle %d position %d: feasible %v, cost %v, want %v", broken, u, v, q, s.feasible(v, &full), s.cost(v, &full)-r.cost, d)
			}
			found++
		}
		s.verify(st, "fresh")
		if found == 0 || late == 0 {
			t.Fatalf("broken %v: %d orders inserted, %d infeasible positions: the test shows too little", broken, found, late)
		}
	}
}
