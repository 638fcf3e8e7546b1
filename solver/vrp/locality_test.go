package vrp

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestLocalityOrder: the numbering is a permutation, and an order's nearest
// neighbours get numbers close to its own (the point of it), where the
// generator's numbering scatters them over the whole range.
func TestLocalityOrder(t *testing.T) {
	for _, c := range []genConfig{
		{orders: 600, vehicles: 20, side: 30000, capFactor: 1.2, objective: ObjectiveDistance},
		{orders: 300, vehicles: 10, side: 20000, capFactor: 1.2, objective: ObjectiveDuration, asymmetric: true},
	} {
		p := genProblem(5, c)
		perm := localityOrder(p)
		if got := slices.Sorted(slices.Values(perm)); !slices.Equal(got, identity(len(p.Orders))) {
			t.Fatalf("%d orders: not a permutation", c.orders)
		}
		newNumber := make([]int, len(perm))
		for i, o := range perm {
			newNumber[o] = i
		}
		s := newSolver(t.Context(), p, Options{}, time.Now())
		spread := func(number func(int) int) float64 {
			sum, k := 0, 0
			for u := range s.n {
				for _, w := range s.nb[u][:10] {
					sum += abs(number(u) - number(w))
					k++
				}
			}
			return float64(sum) / float64(k)
		}
		file := spread(func(u int) int { return u })
		renumbered := spread(func(u int) int { return newNumber[u] })
		t.Logf("%d orders: mean number gap to the 10 nearest: %.1f renumbered, %.1f in file order", c.orders, renumbered, file)
		if renumbered*3 > file {
			t.Errorf("%d orders: mean number gap to the 10 nearest %.1f renumbered, want under a third of the file order's %.1f", c.orders, renumbered, file)
		}
	}
}

// TestRestoreNumbering: a plan of the renumbered problem, mapped back,
// is a valid plan of the original at the same cost, with every order
// (routed or unassigned) under its original number.
func TestRestoreNumbering(t *testing.T) {
	p := genProblem(11, genConfig{orders: 80, vehicles: 5, side: 20000, windowShare: 0.7, capFactor: 0.7,
		objective: ObjectiveDuration, fixedCost: 900, hetero: true, asymmetric: true})
	perm := identity(len(p.Orders))
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	q := p.renumbered(perm)
	for i, o := range perm {
		if !reflect.DeepEqual(q.Orders[i], p.Orders[o]) || q.Distance[i+1][0] != p.Distance[o+1][0] || q.Duration[0][i+1] != p.Duration[0][o+1] {
			t.Fatalf("renumbered order %d is not order %d", i, o)
		}
	}
	sol, err := Solve(t.Context(), q, Options{TimeLimit: 10 * time.Second, Seed: 1, MaxIterations: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(sol.Unassigned) == 0 {
		t.Fatal("want orders left out, to check their numbers too")
	}
	cost := sol.Cost
	sol.restoreNumbering(perm)
	checkSolution(t, p, sol, false)
	if sol.Cost != cost {
		t.Errorf("cost %v after restoring, %v before", sol.Cost, cost)
	}
}

func abs(x int) int { return max(x, -x) }
