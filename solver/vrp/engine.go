package vrp

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"
)

// classify sets s.longRoutes, s.longBudget and s.edgeAssembly once per
// solve, before the neighbour lists are built: they decide how the
// neighbours are ranked (byWindows), which search runs (newSearch, through
// hasGeneticBudget), how wide the genetic search starts (wideFromStart),
// whether its local search runs RELOCATE* and SWAP* (intensify, read at
// every local search) and whether it uses EAX (useEAX).
func (s *solver) classify() {
	s.longRoutes, s.longBudget = s.hasLongRoutes(), s.hasLongBudget()
	s.edgeAssembly = s.useEAX()
}

// geneticExpected reports whether the genetic search is the engine for
// this problem and time limit: it is not turned off, there are two orders
// or more, and hasGeneticBudget. newSearch also needs a first plan that
// serves every order.
func (s *solver) geneticExpected() bool {
	return !s.opt.Ablation.NoGenetic && len(s.assignableOrders) > 1 && s.hasGeneticBudget()
}

// hasGeneticBudget reports whether the time limit is long enough for the
// genetic search to beat ruin-and-recreate at this problem's size and
// route length (see geneticParams.levelLimit).
func (s *solver) hasGeneticBudget() bool {
	n := float64(len(s.assignableOrders))
	g := &s.genetic
	power := g.levelPowerShort
	switch {
	case s.longRoutes:
		power = g.levelPowerLong
	case n > float64(g.levelOrders):
		power = g.levelPowerShortAbove
	}
	return s.limit.Seconds() >= g.levelLimit.Seconds()*math.Pow(n/float64(g.levelOrders), power)
}

// wideFromStart reports whether the genetic search tries all neighbours
// from its start (see geneticParams.widePerOrder): routes are long and the
// time limit is long for the problem's size. Without demands routes are
// long.
func (s *solver) wideFromStart() bool {
	return s.longBudget && s.longRoutes
}

// hasLongBudget reports whether the time limit gives at least
// geneticParams.widePerOrder per order.
func (s *solver) hasLongBudget() bool {
	return s.limit >= time.Duration(max(1, len(s.assignableOrders)))*s.genetic.widePerOrder
}

// hasLongRoutes reports whether a vehicle holds more than longRoute
// (geneticParams) average orders' demand, or there is no demand.
func (s *solver) hasLongRoutes() bool {
	demand, capacity := 0.0, 0.0
	for _, u := range s.assignableOrders {
		demand += s.demand[u]
	}
	for _, c := range s.capacity {
		capacity += c
	}
	capacity /= float64(max(1, len(s.capacity)))
	return demand == 0 || capacity > s.genetic.longRoute*demand/float64(max(1, len(s.assignableOrders)))
}

// search is one thread's improvement method: a ruin-and-recreate chain or
// a genetic search.
type search interface {
	run(until int) bool // iterate up to iteration until; false when the search is over
	epoch() int         // iterations between two exchanges of parallel searches
	result() *state     // the best plan found
	adopt(o *state)     // take o, a better plan of another thread
}

// newSearch starts a search from st: the genetic search when the first plan
// serves every assignable order (its penalties only price time and load,
// so it is not made to trade served orders against cost) and the time
// limit is long enough for the problem's size (geneticExpected); otherwise
// ruin-and-recreate, whose acceptance is lexicographic and keeps as many
// orders as possible.
func (s *solver) newSearch(st *state) search {
	if st.missing == 0 && s.geneticExpected() {
		return s.newHGS(st)
	}
	return s.newChain(st)
}

// improve runs the search from st until the time limit or the iteration
// cap and returns the best state found. With several threads, independent
// searches (own random stream each) run in parallel; after every epoch the
// searches whose best is worse than the overall best take it, so the
// search concentrates on the best region while the threads keep different
// trajectories.
func (s *solver) improve(st *state) *state {
	threads := s.opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if len(s.assignableOrders) == 0 || s.stop() {
		threads = 1
	}
	main := s.newSearch(st)
	if threads == 1 {
		main.run(math.MaxInt)
		return main.result()
	}
	searches := []search{main}
	for k := 1; k < threads; k++ {
		f := s.fork(k)
		cst := f.newState()
		cst.copyFrom(st)
		searches = append(searches, f.newSearch(cst))
	}
	alive := make([]bool, threads)
	epoch := main.epoch()
	for until := epoch; ; until += epoch {
		var wg sync.WaitGroup
		for k, c := range searches[1:] {
			wg.Go(func() { alive[k+1] = c.run(until) })
		}
		alive[0] = main.run(until) // the caller's goroutine: Progress is called from it
		wg.Wait()
		b := 0
		for k := range searches {
			if better(searches[k].result(), searches[b].result()) {
				b = k
			}
		}
		if slices.Contains(alive, false) {
			return searches[b].result()
		}
		for k, c := range searches {
			if k != b && better(searches[b].result(), c.result()) {
				c.adopt(searches[b].result())
			}
		}
	}
}

// fork returns a solver sharing s's immutable data with its own scratch
// space and random stream k, for a parallel chain. It never reports
// progress.
func (s *solver) fork(k int) *solver {
	f := *s
	f.opt.Progress = nil
	f.rng = rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x9e3779b97f4a7c15+uint64(k)))
	f.mark, f.touchMark = make([]int, s.m), make([]int, s.m)
	f.modified, f.tested, f.moves, f.skipTested = make([]int, s.m), make([]int, s.n), 0, false
	f.stamp, f.touchStamp, f.iterations, f.blinkGap, f.stopped = 0, 0, 0, 0, false
	f.bufA, f.bufB, f.list, f.ruined, f.touched, f.changed = nil, nil, nil, nil, nil, nil
	f.trackChanged, f.queue, f.orders, f.routesBuf = false, nil, nil, nil
	f.swap = swapCache{}
	f.bufC, f.cands = nil, nil
	f.fleet.timer = timer{p: s.p} // scratch of its own
	f.fleet.dimLoad = make([]float64, len(s.fleet.dimLoad))
	return &f
}
