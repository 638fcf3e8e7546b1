package vrp

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestPairWarpBoundsIntraMoves: relocateWithin skips a relocation within a
// route when the time warp of the pair the string forms with its new
// neighbour, added to that of the parts the move keeps, already rules it
// out. That sum must never exceed the moved route's time warp, whatever
// the windows and even without the triangle inequality.
func TestPairWarpBoundsIntraMoves(t *testing.T) {
	for _, broken := range []bool{false, true} {
		p := genProblem(41, genConfig{orders: 60, vehicles: 5, side: 20000, windowShare: 0.9, capFactor: 1.5, objective: ObjectiveDuration, hetero: true, asymmetric: true})
		if broken {
			breakTriangle(p, 3, 400)
		}
		s := newSolver(context.Background(), p, Options{Threads: 1, Seed: 1}, time.Now())
		st := s.newState()
		// Orders in random routes and a random order: plenty of time warp.
		rng := rand.New(rand.NewPCG(9, 9))
		seqs := make([][]int, s.m)
		for _, u := range rng.Perm(s.n) {
			v := rng.IntN(s.m)
			seqs[v] = append(seqs[v], u)
		}
		for v, seq := range seqs {
			s.setSeq(st, v, seq)
		}
		checked, ruled := 0, 0
		for v := range st.routes {
			r := &st.routes[v]
			k := len(r.seq)
			for i := range k {
				for L := 1; L <= 3 && i+L <= k; L++ {
					for q := 0; q <= k; q++ {
						if q >= i && q <= i+L {
							continue
						}
						for _, rev := range []bool{false, true} {
							str := append([]int(nil), r.seq[i:i+L]...)
							if rev {
								reverse(str)
							}
							var moved []int
							var lo, hi, pair int
							if q > i+L {
								moved = append(append(append(append([]int(nil), r.seq[:i]...), r.seq[i+L:q]...), str...), r.seq[q:]...)
								lo, hi, pair = i, q-1, s.pairWarp(r.seq[q-1]+1, str[0]+1)
							} else {
								moved = append(append(append(append([]int(nil), r.seq[:q]...), str...), r.seq[q:i]...), r.seq[i+L:]...)
								lo, hi, pair = q, i+L-1, s.pairWarp(str[L-1]+1, r.seq[q]+1)
							}
							full := s.evalSeq(v, moved)
							if lb := r.pre[lo].tw + r.tail[hi+1].tw + pair; full.tw < lb {
								t.Fatalf("broken %v, vehicle %d, string %d+%d to %d (reversed %v): time warp %d below the bound %d", broken, v, i, L, q, rev, full.tw, lb)
							}
							checked++
							if pair > 0 {
								ruled++
							}
						}
					}
				}
			}
		}
		if ruled == 0 || ruled == checked {
			t.Fatalf("broken %v: %d of %d moves with pair time warp: the bound was not exercised", broken, ruled, checked)
		}
		t.Logf("broken %v: %d moves checked, %d with pair time warp", broken, checked, ruled)
	}
}

// TestSkippedPairsCannotImprove: the local search skips the pairs of orders
// it tested since their routes last changed, and in the genetic search's
// repair, whose prices are higher, also those whose routes are both free of
// time warp and excess load (pricesRose). Neither can skip an improving
// move, so re-testing every pair (the skip-tested ablation) must give the
// same plans at the same seed and iteration count.
func TestSkippedPairsCannotImprove(t *testing.T) {
	cases := []genConfig{
		// short routes: EAX and the changed-route search of children
		{orders: 80, vehicles: 12, side: 15000, windowShare: 0.8, capFactor: 1.1, objective: ObjectiveDistance},
		// long routes, duration objective, mixed fleet: the full search
		{orders: 120, vehicles: 4, side: 20000, windowShare: 0.5, capFactor: 3, objective: ObjectiveDuration, fixedCost: 900, hetero: true, asymmetric: true},
	}
	for i, c := range cases {
		p := genProblem(uint64(31+i), c)
		t.Run(fmt.Sprintf("n%d_m%d_%s", c.orders, c.vehicles, c.objective), func(t *testing.T) {
			opt := raceBudget(Options{TimeLimit: time.Minute, Seed: 5, MaxIterations: 300})
			skipping, err := Solve(context.Background(), p, opt)
			if err != nil {
				t.Fatal(err)
			}
			all, err := Solve(context.Background(), p, ablated(t, opt, "skip-tested"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(skipping, all) {
				t.Errorf("skipping tested pairs changed the plan: cost %v, re-testing all %v", skipping.Cost, all.Cost)
			}
		})
	}
}
