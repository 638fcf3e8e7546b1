package vrp

import (
	"cmp"
	"slices"
)

// localityMinOrders is the smallest problem the solver renumbers: below
// it the matrix rows of the orders near an insertion fit the core's cache
// anyway (400 orders: 1.3 MB of legs; the genetic search at 400 measured
// no faster renumbered).
const localityMinOrders = 450

// localityOrder returns a numbering of p's orders in which orders close to
// each other by the objective's matrix get close numbers: perm[i] is the
// order that becomes order i. Ruin-and-recreate spends most of its time
// reading, for each reinserted order, the matrix entries to the orders of
// the routes around it; with the file's numbering those entries are
// scattered over the order's whole matrix row (8 kB at 1,000 orders), with
// this one they share cache lines (gh1000 r1_10_1: the same 100,000
// iterations in 3.4-3.8 s against 4.4-4.9 s). The numbering is a
// recursive bisection: a group is split in two halves by which of two
// far-apart orders of the group is nearer, so it needs only the matrix,
// not coordinates.
func localityOrder(p *Problem) []int {
	n := len(p.Orders)
	m := p.Distance
	if p.Objective == ObjectiveDuration {
		m = p.Duration
	}
	d := func(a, b int) int { return m[a+1][b+1] + m[b+1][a+1] }
	perm := identity(n)
	key := make([]int, n)
	var bisect func(ids []int)
	bisect = func(ids []int) {
		if len(ids) <= 8 {
			return
		}
		farthest := func(from int) int {
			best, bestD := ids[0], d(from, ids[0])
			for _, x := range ids[1:] {
				if dx := d(from, x); dx > bestD {
					best, bestD = x, dx
				}
			}
			return best
		}
		a := farthest(ids[0])
		b := farthest(a)
		for _, x := range ids {
			key[x] = d(a, x) - d(b, x)
		}
		slices.SortFunc(ids, func(x, y int) int { return cmp.Or(cmp.Compare(key[x], key[y]), cmp.Compare(x, y)) })
		h := len(ids) / 2
		bisect(ids[:h])
		bisect(ids[h:])
	}
	bisect(perm)
	return perm
}

// identity is the numbering 0, 1, ..., n-1.
func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// renumbered returns a copy of p whose order i is p's order perm[i], with
// the matrices permuted alike (the depot and the extra locations keep
// their numbers).
func (p *Problem) renumbered(perm []int) *Problem {
	loc := identity(len(perm) + 1 + p.ExtraLocations) // new location -> old location
	for i, o := range perm {
		loc[i+1] = o + 1
	}
	permute := func(m [][]int) [][]int {
		out := make([][]int, len(m))
		for a := range out {
			row, src := make([]int, len(m)), m[loc[a]]
			for b := range row {
				row[b] = src[loc[b]]
			}
			out[a] = row
		}
		return out
	}
	q := *p
	q.Orders = make([]Order, len(perm))
	for i, o := range perm {
		q.Orders[i] = p.Orders[o]
	}
	q.Distance = permute(p.Distance)
	q.Duration = q.Distance
	if !sameMatrix(p.Duration, p.Distance) {
		q.Duration = permute(p.Duration)
	}
	return &q
}

// sameMatrix reports whether a and b are the same rows (the benchmark
// instances pass one matrix for both).
func sameMatrix(a, b [][]int) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// restoreNumbering maps a solution of p.renumbered(perm) back to p's
// order numbers.
func (sol *Solution) restoreNumbering(perm []int) {
	for r := range sol.Routes {
		for k := range sol.Routes[r].Stops {
			sol.Routes[r].Stops[k].Order = perm[sol.Routes[r].Stops[k].Order]
		}
	}
	for k := range sol.Unassigned {
		sol.Unassigned[k].Order = perm[sol.Unassigned[k].Order]
	}
	slices.SortFunc(sol.Unassigned, func(a, b Unassigned) int { return cmp.Compare(a.Order, b.Order) })
}
