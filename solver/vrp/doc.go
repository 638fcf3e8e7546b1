// Package vrp solves vehicle-routing problems with capacities and time
// windows (VRPTW) for a depot and a heterogeneous fleet, with what real
// fleets add: several windows per order, breaks, skills, load dimensions,
// route limits, priorities, and vehicles that start and end elsewhere or
// end at their last stop.
//
// The priority is lexicographic: serve the largest total priority, then as
// many orders as possible, then minimise the objective (distance or route
// duration) plus the fixed costs of the vehicles used.
//
// Solve builds a first plan by regret insertion and improves it with one
// of two engines: a hybrid genetic search when the first plan serves every
// order and the time limit is long enough for the problem's size, else
// ruin-and-recreate with simulated annealing. Both rely on the same local
// search, evaluated in O(1) per move from cached time-window segments.
//
// Files:
//
//	doc.go          this overview
//	model.go        public types (Problem, Options, Solution), Validate
//	solve.go        Solve: set-up, neighbour lists, time limit, progress
//	engine.go       which engine runs, and the parallel searches
//	params.go       settings of the genetic search and of the engine choice
//	schedule.go     Schedule: the one function that turns a sequence into a Route
//	segment.go      time-window segments that price a move in O(1)
//	timing.go       exact timing of a route: several windows, breaks, start and end
//	fleet.go        real fleets in the search: exact evaluation of the moves kept
//	state.go        the solver's plan and its incremental refresh
//	insertion.go    the cheapest feasible insertion of an order, window-pruned
//	construct.go    regret-2 insertion: the first plan
//	localsearch.go  the local search's driver: passes, pair filter, move order
//	relocate.go     relocate and or-opt, between routes and within one
//	swap.go         swap of two orders, between routes and within one
//	twooptstar.go   2-opt*: exchange of two routes' tails
//	twoopt.go       2-opt: reversal of a path within a route
//	emptyvehicle.go moves of an order or a route's tail to an empty vehicle
//	swapstar.go     RELOCATE* and SWAP* between neighbouring routes
//	hgs.go          the genetic search's loop: first plans, children, restarts
//	population.go   individuals, broken-pairs diversity, survivor selection
//	penalty.go      prices of time warp and excess load, and their adaptation
//	srex.go         SREX crossover (selective route exchange)
//	eax.go          EAX crossover (edge assembly)
//	ruin.go         ruin-and-recreate (SISR) with simulated annealing
//	unassigned.go   reasons and messages for orders that are not planned
//	reasons.go      the same for real fleets: skills, dimensions, route limits
//	baseline.go     the baseline strategy's plan, in file order
//	locality.go     the renumbering of large problems for cache locality
//	bench/          Solomon / Gehring–Homberger benchmark runner and checker
//	internal/       ablation: names of the pieces a benchmark can switch off
package vrp
