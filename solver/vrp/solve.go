package vrp

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

const (
	defaultTimeLimit = time.Second
	neighbourCount   = 40 // nearest orders considered by moves and ruins
	progressEvery    = 100 * time.Millisecond
)

// solver holds the immutable data of one Solve call and its scratch space.
type solver struct {
	p   *Problem
	opt Options
	// genetic holds the settings of the genetic search and of the choice
	// of engine.
	genetic geneticParams
	n, m    int
	obj     Objective
	// legs holds the duration and distance of the leg from location a to
	// location b at legs[a*size+b]: both in one 8-byte entry, so that
	// merge, which needs both, reads one cache line, and half the memory
	// of two int matrices keeps more of it in cache (the local search is
	// bound by these reads).
	legs []leg
	size int // locations: depot, orders, extra locations and openLoc
	// objLeg is the leg field of the objective (legDist or legDur), also
	// the index of seg.sums that edges reads.
	objLeg   int
	capacity []float64 // per vehicle
	fixed    []float64 // per vehicle
	demand   []float64 // per order
	single   []seg     // per order: the order alone
	depot    []seg     // per vehicle: its start location with its shift
	depotEnd []seg     // per vehicle: its end location with its shift
	// startLoc and endLoc are each vehicle's start and end locations; an
	// open route ends at a location of its own (openLoc) that every leg
	// into costs nothing
	startLoc, endLoc []int
	fleet            fleetInfo
	types            [][]int   // vehicles grouped by identical capacity, shift, fixed cost and fleet constraints
	typeOf           []int     // vehicle -> type
	alone            []float64 // [order*len(types)+type]: cost of the order alone on a vehicle of that type, +Inf if infeasible
	nb               [][]int   // per order: nearest assignable orders
	depotCost        []int     // per order: cost of depot -> order -> depot (objective matrix)
	width            []int     // per order: window width
	symmetric        bool      // the objective's matrix is symmetric

	// legsIn is the transpose of legs (legs itself when both matrices
	// are symmetric), so that scanning the insertion positions of one
	// order reads the row into it and the row out of it, which stay in
	// cache, instead of one row per position.
	legsIn []leg

	pre        []*Unassigned // orders no vehicle can serve alone
	assignable []bool
	// assignableOrders lists the assignable orders in increasing order,
	// for the passes over all of them (local search, first plans,
	// broken-pairs distance, insertion of the missing ones, the averages
	// that classify the problem).
	assignableOrders []int
	totalWeight      int // of the assignable orders (fleetInfo.weight)

	rng      *rand.Rand
	ctx      context.Context
	start    time.Time
	now      time.Time
	deadline time.Time
	limit    time.Duration
	lastProg time.Time
	stopped  bool
	polls    int // calls of poll

	// Soft mode (the genetic search): routes may break windows, shifts
	// and capacity, priced by twPen per second of time warp and loadPen
	// per unit of excess load (see pcost). Hard mode keeps every route
	// feasible.
	soft           bool
	twPen, loadPen float64
	// lazy makes refresh keep only route.scan, cost and load, marking
	// the segments stale: ruin-and-recreate in hard mode with the
	// distance objective, whose insertions read scan alone, sets it
	// while it ruins and recreates (refreshing the segments was 40 % of
	// its time on r2_10_1).
	lazy bool

	// Local search bookkeeping: moves counts route changes, modified[v]
	// is its value at route v's last change and tested[u] at order u's
	// last test, so that a pass skips pairs that cannot have changed.
	moves      int
	modified   []int
	tested     []int
	skipTested bool
	// pricesRose tells the first pass of a local search that the
	// penalties are at least those of the last one (the genetic search's
	// repair). A move between two routes without time warp or excess load
	// adds no less penalty at higher prices, so the pairs of such routes
	// tested since their last change cannot improve and are skipped too.
	pricesRose bool
	// out is what relocateBetween reads of the strings leaving the order
	// improveOrder is testing; it holds for one improveOrder call.
	out outStrings
	// granular limits the local search to the first granular neighbours of
	// each order (0 = all); the genetic search widens it over the run.
	granular int
	// longRoutes, longBudget and edgeAssembly are set once by newSolver
	// (see classify); swap is the cache of RELOCATE* and SWAP*
	// (swapstar.go).
	longRoutes, longBudget, edgeAssembly bool
	swap                                 swapCache

	iterations int // ruin-and-recreate iterations done (diagnostics)
	blinkGap   int // positions left before the next blink (see blinked)

	// scratch
	bufA, bufB, bufC []int
	cands            []insertionCand
	// list holds the orders ruin removed, which recreate then reinserts
	// (it checks their count against the state's missing orders)
	list         []int
	ruined       []int
	mark         []int // per vehicle, compared with stamp
	stamp        int
	touchMark    []int // per vehicle, compared with touchStamp
	touchStamp   int
	touched      []int
	changed      []int // routes refreshed since the caller last reset it, while trackChanged
	trackChanged bool
	queue        []int
	orders       []int
	routesBuf    []int
}

// Solve returns the best plan found within opt.TimeLimit (or until ctx is
// cancelled: then it returns the best plan so far, never nil, and no error
// unless no plan at all could be built). It never plans a late stop, never
// exceeds capacity, and every route returns by its vehicle's ShiftEnd.
//
// It builds a plan with regret-2 insertion (always completed, even when ctx
// is already cancelled: about 0.1 s for 500 orders) and improves it with
// local search. When that plan serves every order that can be served at
// all, a hybrid genetic search (hgs.go) takes over; otherwise
// ruin-and-recreate with simulated annealing, whose acceptance puts served
// orders first. With Options.Threads > 1 several searches run in parallel
// and exchange their best plans (see improve).
// Only an invalid problem (or invalid settings of the genetic search)
// yields an error. For a given seed the search is
// deterministic; with Options.MaxIterations reached before the time limit
// the result is reproducible run to run, whatever the number of threads.
func Solve(ctx context.Context, p *Problem, opt Options) (*Solution, error) {
	// The limit covers the whole call: validation reads both matrices
	// (0.6 ms at 1,000 orders), and large problems are renumbered.
	start := opt.clock()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	genetic := opt.geneticParams()
	if err := genetic.validate(); err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// Large problems are solved renumbered for locality (locality.go).
	var perm []int
	q := p
	if len(p.Orders) >= localityMinOrders {
		perm = localityOrder(p)
		q = p.renumbered(perm)
	}
	s := newSolver(ctx, q, opt, start)
	s.report(0)
	st := s.newState()
	s.construct(st)
	if debugVerify {
		s.verify(st, "construct")
	}
	s.localSearch(st)
	best := s.improve(st)
	sol := s.solution(best)
	if perm != nil {
		sol.restoreNumbering(perm)
	}
	s.report(1)
	return sol, nil
}

// geneticParams is Options.genetic, or the defaults.
func (o *Options) geneticParams() geneticParams {
	if o.genetic != nil {
		return *o.genetic
	}
	return defaultGeneticParams()
}

// clock is Options.Now, or time.Now.
func (o *Options) clock() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func newSolver(ctx context.Context, p *Problem, opt Options, start time.Time) *solver {
	limit := opt.TimeLimit
	if limit <= 0 {
		limit = defaultTimeLimit
	}
	n, m := len(p.Orders), len(p.Vehicles)
	s := &solver{
		p: p, opt: opt, genetic: opt.geneticParams(), n: n, m: m, obj: p.Objective, size: n + 1 + p.ExtraLocations,
		capacity: make([]float64, m), fixed: make([]float64, m),
		demand: make([]float64, n), single: make([]seg, n), depot: make([]seg, m), depotEnd: make([]seg, m),
		startLoc: make([]int, m), endLoc: make([]int, m),
		typeOf: make([]int, m), depotCost: make([]int, n), width: make([]int, n),
		assignable: make([]bool, n),
		rng:        rand.New(rand.NewPCG(uint64(opt.Seed), 0x9e3779b97f4a7c15)),
		ctx:        ctx, start: start, now: start, deadline: start.Add(limit), limit: limit,
		lastProg: start,
		mark:     make([]int, m), touchMark: make([]int, m),
		modified: make([]int, m), tested: make([]int, n),
	}
	s.objLeg = legDist
	if s.obj == ObjectiveDuration {
		s.objLeg = legDur
	}
	openLoc := -1
	for v := range p.Vehicles {
		s.startLoc[v], s.endLoc[v] = p.Vehicles[v].Start, p.Vehicles[v].End
		if p.Vehicles[v].OpenEnd {
			if openLoc < 0 {
				openLoc = s.size
				s.size++
			}
			s.endLoc[v] = openLoc
		}
	}
	var symmetric [2]bool
	s.legs, s.legsIn, symmetric = packLegs(p.Duration, p.Distance, s.size)
	s.symmetric = symmetric[s.objLeg]
	for u, o := range p.Orders {
		s.demand[u] = o.Demand
		s.single[u] = seg{first: u + 1, last: u + 1, n: 1, dur: o.ServiceS, svc: o.ServiceS, e: o.WindowStart, l: o.WindowEnd, load: o.Demand}
		s.depotCost[u] = s.arc(0, u+1) + s.arc(u+1, 0)
		s.width[u] = o.WindowEnd - o.WindowStart
	}
	s.initFleet()
	type key struct {
		capacity, fixed float64
		start, end      int
		fleet           string // the rest of a real fleet's vehicle (vehicleKey)
	}
	typeIdx := map[key]int{}
	for v, veh := range p.Vehicles {
		s.capacity[v], s.fixed[v] = veh.Capacity, veh.FixedCost
		s.depot[v] = seg{first: s.startLoc[v], last: s.startLoc[v], e: veh.ShiftStart, l: veh.ShiftEnd}
		s.depotEnd[v] = seg{first: s.endLoc[v], last: s.endLoc[v], e: veh.ShiftStart, l: veh.ShiftEnd}
		k := key{veh.Capacity, veh.FixedCost, veh.ShiftStart, veh.ShiftEnd, vehicleKey(&veh)}
		t, ok := typeIdx[k]
		if !ok {
			t = len(s.types)
			typeIdx[k] = t
			s.types = append(s.types, nil)
		}
		s.types[t] = append(s.types[t], v)
		s.typeOf[v] = t
	}
	s.pre = precheck(p, true)
	for u := range p.Orders {
		if s.pre[u] == nil {
			s.assignable[u] = true
			s.assignableOrders = append(s.assignableOrders, u)
			s.totalWeight += s.fleet.weight[u]
		}
	}
	s.alone = make([]float64, n*len(s.types))
	for u := range n {
		for t, vs := range s.types {
			v := vs[0]
			full := s.merge3(&s.depot[v], &s.single[u], &s.depotEnd[v])
			c := math.Inf(1)
			switch {
			case !s.assignable[u] || !s.feasible(v, &full):
			case s.fleet.exact:
				if x := s.evalExact(v, []int{u}); x.feasible() {
					c = x.cost
				}
			default:
				c = s.cost(v, &full)
			}
			s.alone[u*len(s.types)+t] = c
		}
	}
	s.classify()
	s.buildNeighbours()
	return s
}

// Fields of a leg.
const (
	legDur  = 0
	legDist = 1
)

// leg is the duration (seconds) and distance (metres) of the leg between
// two locations; Validate bounds both by NoWindowEnd < 2^31.
type leg [2]int32

// packLegs returns the flat leg matrix of the duration and distance
// matrices, its transpose (the same slice when both are symmetric), and
// which of the two matrices (by leg field) is symmetric. With size above
// the matrices' the locations after theirs (where open routes end) have
// legs of 0 into and out of them.
func packLegs(dur, dist [][]int, size int) (legs, in []leg, symmetric [2]bool) {
	legs = make([]leg, size*size)
	for a := range dur {
		for b := range dur {
			legs[a*size+b] = leg{int32(dur[a][b]), int32(dist[a][b])}
		}
	}
	symmetric = [2]bool{isSymmetric(dur), isSymmetric(dist)}
	if symmetric[legDur] && symmetric[legDist] {
		return legs, legs, symmetric
	}
	in = make([]leg, size*size)
	for a := range size {
		for b := range size {
			in[b*size+a] = legs[a*size+b]
		}
	}
	return legs, in, symmetric
}

// arc is the objective's cost of the leg from location a to location b.
// The mask (objLeg is 0 or 1 anyway) lets the compiler drop the bounds
// check on the leg's field, in the local search's most frequent read.
func (s *solver) arc(a, b int) int { return int(s.legs[a*s.size+b][s.objLeg&1]) }

// arcIn is arc(a, b) read from b's row of legsIn: the local search reads
// the legs into one order from many places, and a row keeps them within a
// few cache lines where a column of legs does not (the same value).
func (s *solver) arcIn(a, b int) int { return int(s.legsIn[b*s.size+a][s.objLeg&1]) }

// travel is the duration of the leg from location a to location b.
func (s *solver) travel(a, b int) int { return int(s.legs[a*s.size+b][legDur]) }

// isSymmetric reports whether the square matrix m equals its transpose.
func isSymmetric(m [][]int) bool {
	for i, row := range m {
		for j := range i {
			if row[j] != m[j][i] {
				return false
			}
		}
	}
	return true
}

// buildNeighbours lists for every order the nearest assignable orders,
// ranking pairs that cannot follow each other in either direction because
// of their windows last. Nearness is the objective's matrix (the shorter
// direction), and where byWindows says so the time windows too.
func (s *solver) buildNeighbours() {
	s.nb = make([][]int, s.n)
	// Sort packed (key, order) integers: keys stay below 2^33 (a nearness
	// capped below 4 x NoWindowEnd plus the penalty of 4 x NoWindowEnd),
	// orders below 2^30, so the packing is exact and ties go to the lower
	// order index.
	const shift = 30
	keys := make([]uint64, 0, s.n)
	follows := func(u, w int) bool {
		return s.p.Orders[u].WindowStart+s.p.Orders[u].ServiceS+s.travel(u+1, w+1) <= s.p.Orders[w].WindowEnd
	}
	near := func(u, w int) int { return min(s.arc(u+1, w+1), s.arc(w+1, u+1)) }
	if s.byWindows() {
		perSecond := s.costPerSecond()
		near = func(u, w int) int {
			return int(min(s.windowProximity(u, w, perSecond), s.windowProximity(w, u, perSecond), 4*NoWindowEnd-1))
		}
	}
	for u := range s.n {
		keys = keys[:0]
		for w := range s.n {
			if w == u || !s.assignable[w] {
				continue
			}
			k := near(u, w)
			if !follows(u, w) && !follows(w, u) {
				k += 4 * NoWindowEnd
			}
			keys = append(keys, uint64(k)<<shift|uint64(w))
		}
		slices.Sort(keys)
		nb := make([]int, min(len(keys), neighbourCount))
		for i := range nb {
			nb[i] = int(keys[i] & (1<<shift - 1))
		}
		s.nb[u] = nb
	}
}

// windowsMaxOrders is the largest problem whose neighbours byWindows
// ranks by their windows when ruin-and-recreate runs.
const windowsMaxOrders = 450

// byWindows reports whether neighbours are ranked by windowProximity: on
// problems with short routes (s.longRoutes false, see hasLongRoutes)
// where the genetic search runs, at any size, or where ruin-and-recreate
// runs, up to windowsMaxOrders. On short routes the genetic search
// measured better with it at every size tried (200 to 500 orders), while
// on long routes edges alone did better; ruin-and-recreate measured better
// with it up to 400 orders, level at 500 and worse at 1,000
// (docs/PERFORMANCE.md). The engine is the one the limit picks
// (geneticExpected): if the first plan misses orders, ruin-and-recreate
// runs on the genetic search's ranking.
func (s *solver) byWindows() bool {
	if s.opt.Ablation.EdgeProximity || s.longRoutes {
		return false
	}
	return len(s.assignableOrders) <= windowsMaxOrders || s.geneticExpected()
}

// windowProximity is how well w can follow u (Vidal et al. 2013's
// correlation measure, with PyVRP's weights): the edge, plus a fifth of the
// least wait at w and all of the least time warp, both priced at
// perSecond. Close orders whose windows lie hours apart rank behind
// farther ones that can follow each other (see byWindows for where).
func (s *solver) windowProximity(u, w int, perSecond float64) float64 {
	ou, ow := &s.p.Orders[u], &s.p.Orders[w]
	t := s.travel(u+1, w+1)
	wait := max(0, ow.WindowStart-(ou.WindowEnd+ou.ServiceS+t))
	warp := max(0, ou.WindowStart+ou.ServiceS+t-ow.WindowEnd)
	return float64(s.arc(u+1, w+1)) + perSecond*(0.2*float64(wait)+float64(warp))
}

// costPerSecond is the objective's cost per second of travel, averaged
// over all pairs of assignable orders (1 when either sum is zero).
func (s *solver) costPerSecond() float64 {
	cost, dur := 0.0, 0.0
	for _, u := range s.assignableOrders {
		for _, w := range s.assignableOrders {
			if w != u {
				cost += float64(s.arc(u+1, w+1))
				dur += float64(s.travel(u+1, w+1))
			}
		}
	}
	if cost == 0 || dur == 0 {
		return 1
	}
	return cost / dur
}

// stop reports whether the search must end (time limit or cancellation) and
// reports progress at most every progressEvery.
func (s *solver) stop() bool {
	if s.stopped {
		return true
	}
	s.now = s.opt.clock()
	if !s.now.Before(s.deadline) || s.ctx.Err() != nil {
		s.stopped = true
		return true
	}
	if s.opt.Progress != nil && s.now.Sub(s.lastProg) >= progressEvery {
		s.lastProg = s.now
		s.report(float64(s.now.Sub(s.start)) / float64(s.limit))
	}
	return false
}

// poll is stop for the local search's loop over orders: it reads the clock
// on every 16th call only (reading it for every order took 2 to 3 % of a
// run), so the search ends at most 15 orders' tests after the limit (on
// gh400 a child of about 400 orders takes 4-5 ms, so one order's test is
// some 10 microseconds).
func (s *solver) poll() bool {
	s.polls++
	if s.polls%16 != 0 {
		return s.stopped
	}
	return s.stop()
}

func (s *solver) report(f float64) {
	if s.opt.Progress != nil {
		s.opt.Progress(min(1, max(0, f)))
	}
}

// solution turns a state into a Solution, scheduling every route with
// Schedule. As a safety net, a route that Schedule finds infeasible (which
// the segment evaluation rules out) loses stops from its end until it is
// feasible; the dropped orders are reported unassigned.
func (s *solver) solution(st *state) *Solution {
	sol := &Solution{Routes: []Route{}}
	planned := make([]bool, s.n)
	seqs := make([][]int, s.m)
	for v := range st.routes {
		seq := st.routes[v].seq
		for len(seq) > 0 {
			r := Schedule(s.p, v, seq)
			if !routeFeasible(s.p, &r) {
				if debugVerify {
					panic(fmt.Sprintf("vehicle %d: Schedule finds route %v infeasible", v, seq))
				}
				seq = seq[:len(seq)-1]
				continue
			}
			for _, stop := range r.Stops {
				planned[stop.Order] = true
			}
			seqs[v] = seq
			sol.Cost += routeCost(s.p, &r)
			sol.Routes = append(sol.Routes, r)
			break
		}
	}
	sol.Unassigned = unassignedList(s.p, planned, s.pre, seqs, true)
	return sol
}
