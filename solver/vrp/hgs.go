package vrp

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Hybrid genetic search (Vidal 2022, "Hybrid genetic search for the CVRP";
// the time-warp penalties of the DIMACS 2021 VRPTW winner), sized for
// budgets of seconds. A population of plans, split into a feasible and an
// infeasible half, is improved by crossover (a selective route exchange
// that needs no coordinates) and by the local search in soft mode, where
// time warp and excess load are allowed at prices that adapt so that
// about two fifths of the children come out without time warp, and two
// fifths without excess load. Survivors are chosen by biased fitness: cost
// rank plus diversity rank (broken-pairs distance), so the population stays
// spread out while it improves.
const (
	hgsMu     = 25 // subpopulation size after a survivor selection
	hgsLambda = 40 // children added before the next selection
	hgsElite  = 4  // best plans protected from the diversity term
	hgsClose  = 5  // neighbours averaged for a plan's diversity
	// hgsTargetFeasible is the share of children without time warp (and,
	// apart, without excess load) that the penalties aim at: 0.4 against
	// HGS's 0.2 (PyVRP tuned 0.43) gave gh400's short-route files at 30 s
	// 0.351 % against 0.467 % (seeds 5-10, better at five of six), and
	// left Solomon at 1.5 s level (docs/PERFORMANCE.md).
	hgsTargetFeasible = 0.4
	hgsPenaltyEvery   = 100   // children between two penalty updates
	hgsPenaltyUp      = 1.2   // factor when too few children are feasible
	hgsPenaltyDown    = 0.85  // factor when too many are
	hgsRepairShare    = 0.5   // share of infeasible children repaired
	hgsRepairBoost    = 10.0  // penalty factor of the repair
	hgsStall          = 20000 // iterations without a better plan before a restart
	// hgsRuinShare of the children come from one parent by SISR's ruin and
	// recreate instead of crossover: it removes strings across
	// neighbouring routes, which empties routes that crossover and the
	// local search keep (rc102: 15 routes with crossover alone, 14 with it).
	hgsRuinShare = 0.3
	hgsInitial   = 2 * hgsMu // plans made before the first crossover
	// Without MaxIterations, making the first plans stops at
	// hgsInitialShare of the time limit once there are hgsInitialMin: at
	// 1.5 s for 100 orders the full 50 would take half the budget.
	hgsInitialShare = 0.1
	hgsInitialMin   = 4
	// The genetic search runs when the time limit is at least
	// hgsLevelLimit x (orders / hgsLevelOrders)^power, power
	// hgsLevelPowerShort on short routes (hgsLevelPowerShortAbove above
	// hgsLevelOrders) and hgsLevelPowerLong on long ones (see
	// hasLongRoutes); otherwise ruin-and-recreate runs. The population
	// needs more children to converge as plans grow, and each child's local
	// search costs more, while a ruin-and-recreate iteration stays cheap.
	// Ruin-and-recreate against the genetic search, one thread, two seeds
	// or more unless said (docs/PERFORMANCE.md, twenty-seventh and
	// twenty-eighth sessions): gh200-sample 0.83 against 1.22 % at 0.5 s,
	// 0.56 against 0.39 % at 1 s; gh400-sample 0.76 against 0.89 % at 4 s,
	// 0.71 against 0.58 % at 6 s; the 500-order city problem (long routes)
	// 944,685 against 959,966 at 7 s, 946,736 against 939,293 at 10 s; the
	// first 500 orders of gh1000's files at 12 s level on short routes
	// (the genetic search 0.009 % cheaper, seeds 1-6), 0.5-0.9 % dearer on
	// long ones; gh1000-sample's r1_10_1 and rc1_10_1 at 100 s 1.19 and
	// 1.31 % against 1.76 and 1.45 %, r1_10_1 at 200 s 0.95 against 0.98 %
	// (seed 1); r2_10_1 and rc2_10_1 at 60 s 1.28 and 1.42 % against 0.80
	// and 1.20 % (8 seeds).
	hgsLevelLimit           = 5 * time.Second
	hgsLevelOrders          = 400
	hgsLevelPowerShort      = 3.0
	hgsLevelPowerShortAbove = 3.75
	hgsLevelPowerLong       = 2.5
	// hgsGranularStart is the local search's neighbour count at the start
	// of the run (see granular).
	hgsGranularStart = 20
	// With long routes (a vehicle holds more than hgsLongRoute average
	// orders' demand, the reference solver's rule) and at least
	// hgsWidePerOrder of time limit per order (which also gates RELOCATE*
	// and SWAP* on short routes, see intensify), the local search tries all
	// neighbourCount from the start: on gh400's c2, r2 and rc2 files at
	// 30 s (75 ms per order) that gave 0.168 % against 0.239 % (8 seeds),
	// while at Solomon's 1.5 s (15 ms) and gh200's 5 s (25 ms) the
	// cheaper early children are worth more (docs/PERFORMANCE.md).
	hgsLongRoute    = 25
	hgsWidePerOrder = 60 * time.Millisecond
	hgsEpoch        = 100 // iterations between two exchanges of parallel searches
	// hgsInitialTimeWarp prices a second of time warp at this many times
	// the cost of a second of driving. The penalty adapts within a few
	// hundred children, but the first plans and children are made at this
	// price and decide where the population settles: at 10 it kept
	// c2_4_1 in a plan 0.39 % above the BKS at every seed; at 1 the mean on
	// Solomon at 1.5 s got worse. Over 3-6 seeds, 3 against 10: Solomon at
	// 1.5 s 0.088 % against 0.115 %, gh400-sample at 30 s 0.393 % against
	// 0.447 %, gh200-sample at 5 s level (docs/PERFORMANCE.md).
	hgsInitialTimeWarp = 3.0
	// hgsEAXShare of the crossovers are EAX (eax.go) where useEAX allows
	// it, the rest SREX: one vehicle type, short routes and at most
	// hgsEAXMaxOrders orders. With strings of 3 within a route
	// (maxStringWithin), all of Solomon at 1.5 s had its worst instance at
	// or under 1 % at 25 seeds of 44 against 16, its mean level (0.087 %
	// against 0.091 %), in two one-run comparisons; r108 got worse while
	// rc102 and rc103 got better. The short-route files of gh200 were level
	// at 5 s (0.055 % against 0.060 %, 12 seeds) and at 30 s (0.011 %
	// against 0.020 %, 6 seeds), those of gh400 at 30 s worse (0.510 %
	// against 0.449 %, 8 seeds), hence the limit; with the two changes
	// below they were level (0.326 % against 0.321 %). On long routes EAX
	// was worse on Solomon's R2 files. Two AB-cycles per child with only
	// the changed routes searched (see eax and searchChangedOnly) against
	// one cycle and a full search: Solomon at 1.5 s at or under 1 % at 21
	// seeds of 48 against 18 (mean 0.088 % against 0.092 %), gh200's
	// short-route files at 5 s 0.057 % against 0.062 % (20 seeds;
	// docs/PERFORMANCE.md).
	hgsEAXShare     = 0.5
	hgsEAXMaxOrders = 200
)

// individual is one plan of the population.
type individual struct {
	seqs       [][]int // per vehicle, in driving order
	routeOf    []int32 // per order: vehicle, -1 when not planned
	succ, pred []int32 // per order: next and previous location (0 = depot)
	objective  float64 // cost without penalties (fixed costs included)
	tw         int     // total time warp
	excess     float64 // total load above capacity
	feasible   bool
	pc         float64     // penalised cost at the current penalties
	prox       []proximity // the other members of its subpopulation, closest first
	fit        float64     // biased fitness, lower is better
}

type proximity struct {
	d float64
	o *individual
}

// hgs is one genetic search (one per thread).
type hgs struct {
	s           *solver
	granStart   int // neighbours tried at the start (see granular)
	work, trial *state
	best        *state // best feasible plan, lexicographic like the chains
	feas        []*individual
	infeas      []*individual
	free        []*individual
	iter        int
	lastImprove int
	started     bool // the first plans are made

	// penalty bookkeeping since the last update
	seen, twOK, loadOK int

	// scratch
	seqs    [][]int
	queue   []int
	visit   []int // per order, compared with stamp
	inA     []int
	inB     []int
	selA    []int // per vehicle
	score   []int
	routesB []int
	changed []int // see changedRoutes
	missing []int
	rank    []ranked
	stamp   int
	ex      eaxScratch
}

// ranked is a member's diversity with its cost rank, for fitness.
type ranked struct {
	div float64
	i   int
}

// newHGS starts a genetic search whose best plan is st (a feasible plan
// that serves every assignable order, polished by the local search).
func (s *solver) newHGS(st *state) *hgs {
	h := &hgs{
		s: s, work: s.newState(), trial: s.newState(), best: s.newState(),
		seqs: make([][]int, s.m), visit: make([]int, s.n), inA: make([]int, s.n), inB: make([]int, s.n),
		selA: make([]int, s.m), score: make([]int, s.m),
	}
	h.best.copyFrom(st)
	h.granStart = hgsGranularStart
	if s.wideFromStart() {
		h.granStart = neighbourCount
	}
	s.soft = true
	s.twPen, s.loadPen = s.initialPenalties()
	h.add(h.capture(st))
	return h
}

// initialPenalties prices one second of time warp at hgsInitialTimeWarp
// times the average cost per second of the neighbour edges, and one unit
// of excess load like the longest depot round trip per unit of the largest
// demand (as HGS does).
func (s *solver) initialPenalties() (tw, load float64) {
	cost, dur := 0.0, 0.0
	for u, nb := range s.nb {
		for _, w := range nb {
			cost += float64(s.arc(u+1, w+1))
			dur += float64(s.travel(u+1, w+1))
		}
	}
	tw = hgsInitialTimeWarp
	if s.ab.LowTimeWarpPenalty {
		tw = 1
	}
	if cost > 0 && dur > 0 {
		tw *= cost / dur
	}
	maxLeg, maxDemand := 1.0, 0.0
	for u := range s.n {
		maxLeg = max(maxLeg, float64(s.depotCost[u]))
		maxDemand = max(maxDemand, s.demand[u])
	}
	load = 1
	if maxDemand > 0 {
		load = maxLeg / maxDemand
	}
	return tw, load
}

// epoch is how many iterations parallel searches run between exchanges.
func (h *hgs) epoch() int { return hgsEpoch }

// result is the best feasible plan found.
func (h *hgs) result() *state { return h.best }

// adopt brings o, a better plan of another thread, into the population.
func (h *hgs) adopt(o *state) {
	h.load(h.work, o)
	ind := h.capture(h.work)
	h.add(ind)
	h.consider(ind)
}

// run iterates until h.iter reaches until; it reports false when the
// search is over (time limit, cancellation or MaxIterations).
func (h *hgs) run(until int) bool {
	s := h.s
	if !h.started {
		h.started = true
		s.granular = h.granular()
		if !h.initialise() {
			return false
		}
	}
	for ; h.iter < until; h.iter++ {
		if s.opt.MaxIterations > 0 && h.iter >= s.opt.MaxIterations || s.stop() {
			return false
		}
		s.iterations++
		s.granular = h.granular()
		if h.iter-h.lastImprove > hgsStall {
			h.restart()
			if !h.initialise() {
				return false
			}
		}
		h.fitness(h.feas)
		h.fitness(h.infeas)
		a := h.tournament()
		b := h.tournament()
		for k := 0; k < 10 && b == a; k++ {
			b = h.tournament()
		}
		edgeAssembled := false
		if !s.ab.NoRuinMutation && s.rng.Float64() < hgsRuinShare {
			h.loadSeqs(h.work, a.seqs)
			s.ruin(h.work, ruinAvgRemoved)
			s.recreate(h.work, math.Inf(1))
		} else if edgeAssembled = s.edgeAssembly && s.rng.Float64() < hgsEAXShare && h.eax(a, b, h.work); !edgeAssembled {
			h.crossover(a, b)
		}
		if h.searchChangedOnly(edgeAssembled) {
			s.localSearchRoutes(h.work, h.changedRoutes(a, h.work))
		} else {
			s.localSearch(h.work)
		}
		ind := h.capture(h.work)
		h.register(ind)
		h.add(ind)
		h.consider(ind)
		if !ind.feasible && s.rng.Float64() < hgsRepairShare {
			tw, load := s.twPen, s.loadPen
			s.twPen, s.loadPen = tw*hgsRepairBoost, load*hgsRepairBoost
			h.reprice(h.work)
			s.pricesRose = !s.ab.RetestAll
			s.localSearch(h.work)
			s.pricesRose = false
			s.twPen, s.loadPen = tw, load
			h.reprice(h.work)
			if r := h.capture(h.work); r.feasible {
				h.add(r)
				h.consider(r)
			} else {
				h.release(r)
			}
		}
	}
	return true
}

// granular is how many neighbours of each order the local search tries:
// h.granStart at first, growing with the square of the elapsed share
// of the run to all neighbourCount at its end, the share measured by
// iterations under MaxIterations, else by the clock. Few neighbours make
// the early iterations cheap; all of them reach further once the
// population has converged.
func (h *hgs) granular() int {
	s := h.s
	if s.ab.FixedGranular {
		return 0
	}
	var frac float64
	if s.opt.MaxIterations > 0 {
		frac = float64(h.iter) / float64(s.opt.MaxIterations)
	} else {
		frac = min(1, float64(s.now.Sub(s.start))/float64(s.limit))
	}
	return h.granStart + int(frac*frac*float64(neighbourCount-h.granStart))
}

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
	return !s.ab.NoGenetic && len(s.assignableOrders) > 1 && s.hasGeneticBudget()
}

// hasGeneticBudget reports whether the time limit is long enough for the
// genetic search to beat ruin-and-recreate at this problem's size and
// route length (see hgsLevelLimit).
func (s *solver) hasGeneticBudget() bool {
	n := float64(len(s.assignableOrders))
	power := hgsLevelPowerShort
	switch {
	case s.longRoutes:
		power = hgsLevelPowerLong
	case n > hgsLevelOrders:
		power = hgsLevelPowerShortAbove
	}
	return s.limit.Seconds() >= hgsLevelLimit.Seconds()*math.Pow(n/hgsLevelOrders, power)
}

// wideFromStart reports whether the genetic search tries all neighbours
// from its start (see hgsWidePerOrder): routes are long and the time limit
// is long for the problem's size. Without demands routes are long.
func (s *solver) wideFromStart() bool {
	return s.longBudget && s.longRoutes
}

// hasLongBudget reports whether the time limit gives at least
// hgsWidePerOrder per order.
func (s *solver) hasLongBudget() bool {
	return s.limit >= time.Duration(max(1, len(s.assignableOrders)))*hgsWidePerOrder
}

// hasLongRoutes reports whether a vehicle holds more than hgsLongRoute
// average orders' demand, or there is no demand.
func (s *solver) hasLongRoutes() bool {
	demand, capacity := 0.0, 0.0
	for _, u := range s.assignableOrders {
		demand += s.demand[u]
	}
	for _, c := range s.capacity {
		capacity += c
	}
	capacity /= float64(max(1, len(s.capacity)))
	return demand == 0 || capacity > hgsLongRoute*demand/float64(max(1, len(s.assignableOrders)))
}

// initialise fills the population up to hgsInitial plans (see
// hgsInitialShare), each made by random-order cheapest insertion and the
// local search.
func (h *hgs) initialise() bool {
	s := h.s
	start := s.opt.clock()
	for made := 0; len(h.feas)+len(h.infeas) < hgsInitial; made++ {
		if s.stop() {
			return false
		}
		if s.opt.MaxIterations == 0 && made >= hgsInitialMin && s.now.Sub(start) >= time.Duration(hgsInitialShare*float64(s.limit)) {
			break
		}
		h.empty(h.work)
		list := append(h.missing[:0], s.assignableOrders...)
		s.rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		for _, u := range list {
			if v, q, _ := s.bestInsertion(h.work, u, 0, false); v >= 0 {
				s.insert(h.work, u, v, q)
			}
		}
		h.missing = list
		s.localSearch(h.work)
		ind := h.capture(h.work)
		h.register(ind)
		h.add(ind)
		h.consider(ind)
	}
	return true
}

// restart empties the population after a long stall; the best plan stays.
func (h *hgs) restart() {
	for _, ind := range h.feas {
		h.release(ind)
	}
	for _, ind := range h.infeas {
		h.release(ind)
	}
	h.feas, h.infeas = h.feas[:0], h.infeas[:0]
	h.lastImprove = h.iter
	h.load(h.work, h.best)
	h.add(h.capture(h.work))
}

// empty clears st: no order planned.
func (h *hgs) empty(st *state) {
	for v := range h.seqs {
		h.seqs[v] = h.seqs[v][:0]
	}
	h.loadSeqs(st, h.seqs)
}

// load copies plan o into st under the current penalties.
func (h *hgs) load(st, o *state) {
	for v := range o.routes {
		h.seqs[v] = append(h.seqs[v][:0], o.routes[v].seq...)
	}
	h.loadSeqs(st, h.seqs)
}

// loadSeqs makes st the plan with the given sequences.
func (h *hgs) loadSeqs(st *state, seqs [][]int) {
	s := h.s
	for u := range st.routeOf {
		st.routeOf[u] = -1
	}
	st.cost, st.missing = 0, len(s.assignableOrders)
	for v := range st.routes {
		r := &st.routes[v]
		r.seq = append(r.seq[:0], seqs[v]...)
		r.cost = 0
		s.rebuild(st, v)
		st.missing -= len(r.seq)
	}
}

// reprice recomputes st's route costs after a change of the penalties.
func (h *hgs) reprice(st *state) {
	s := h.s
	st.cost = 0
	for v := range st.routes {
		r := &st.routes[v]
		r.cost = s.pcost(v, &r.full)
		st.cost += r.cost
	}
}

// capture records st as an individual.
func (h *hgs) capture(st *state) *individual {
	s := h.s
	var ind *individual
	if k := len(h.free); k > 0 {
		ind, h.free = h.free[k-1], h.free[:k-1]
	} else {
		ind = &individual{seqs: make([][]int, s.m), routeOf: make([]int32, s.n), succ: make([]int32, s.n), pred: make([]int32, s.n)}
	}
	ind.objective, ind.tw, ind.excess, ind.prox = 0, 0, 0, ind.prox[:0]
	for u := range ind.routeOf {
		ind.routeOf[u] = -1
	}
	for v := range st.routes {
		r := s.fresh(st, v)
		ind.seqs[v] = append(ind.seqs[v][:0], r.seq...)
		prev := int32(0)
		for i, u := range r.seq {
			ind.routeOf[u] = int32(v)
			ind.pred[u] = prev
			prev = int32(u + 1)
			if i > 0 {
				ind.succ[r.seq[i-1]] = prev
			}
		}
		if k := len(r.seq); k > 0 {
			ind.succ[r.seq[k-1]] = 0
			ind.objective += s.cost(v, &r.full)
			ind.tw += r.full.tw
			ind.excess += s.excess(v, r.full.load)
		}
	}
	ind.feasible = ind.tw == 0 && ind.excess == 0 && st.missing == 0
	ind.pc = h.price(ind)
	return ind
}

func (h *hgs) price(ind *individual) float64 {
	return ind.objective + h.s.twPen*float64(ind.tw) + h.s.loadPen*ind.excess
}

func (h *hgs) release(ind *individual) { h.free = append(h.free, ind) }

// consider makes ind the best plan when it is feasible and better.
func (h *hgs) consider(ind *individual) {
	if !ind.feasible || h.best.missing == 0 && ind.objective >= h.best.cost-improveEps {
		return
	}
	h.loadSeqs(h.best, ind.seqs)
	h.lastImprove = h.iter
}

// register counts a child for the penalty update and adapts the
// penalties every hgsPenaltyEvery children.
func (h *hgs) register(ind *individual) {
	h.seen++
	if ind.tw == 0 {
		h.twOK++
	}
	if ind.excess == 0 {
		h.loadOK++
	}
	if h.seen < hgsPenaltyEvery {
		return
	}
	adapt := func(pen float64, ok int) float64 {
		switch f := float64(ok) / float64(h.seen); {
		case f <= 0.01:
			return min(pen*2, 1e6)
		case f < hgsTargetFeasible-0.05:
			return min(pen*hgsPenaltyUp, 1e6)
		case f > hgsTargetFeasible+0.05:
			return max(pen*hgsPenaltyDown, 1e-3)
		}
		return pen
	}
	h.s.twPen = adapt(h.s.twPen, h.twOK)
	h.s.loadPen = adapt(h.s.loadPen, h.loadOK)
	h.seen, h.twOK, h.loadOK = 0, 0, 0
	for _, ind := range h.infeas {
		ind.pc = h.price(ind)
	}
	slices.SortStableFunc(h.infeas, func(a, b *individual) int { return cmp.Compare(a.pc, b.pc) })
}

// brokenPairs is the share of orders whose neighbours differ between a and
// b (Prins's broken-pairs distance, as HGS computes it). Every child is
// compared with every member of its half, so the loop is branch-free: on
// random differences the branches mispredicted (5 % of the genetic
// search's time, docs/PERFORMANCE.md).
func (h *hgs) brokenPairs(a, b *individual) float64 {
	diff := int32(0)
	for _, u := range h.s.assignableOrders {
		as, bs, bp := a.succ[u], b.succ[u], b.pred[u]
		diff += nonZero(as^bs)&nonZero(as^bp) + (1-nonZero(a.pred[u]))&nonZero(bp)&nonZero(bs)
	}
	return float64(diff) / float64(max(1, len(h.s.assignableOrders)))
}

// nonZero is 1 when x is not 0, else 0, without a branch.
func nonZero(x int32) int32 { return int32((uint32(x) | uint32(-x)) >> 31) }

// add puts ind into its subpopulation and selects survivors when the
// subpopulation is full.
func (h *hgs) add(ind *individual) {
	sub := &h.infeas
	if ind.feasible {
		sub = &h.feas
	}
	for _, o := range *sub {
		d := h.brokenPairs(ind, o)
		o.prox = insertProximity(o.prox, proximity{d, ind})
		ind.prox = insertProximity(ind.prox, proximity{d, o})
	}
	i, _ := slices.BinarySearchFunc(*sub, ind.pc, func(x *individual, pc float64) int { return cmp.Compare(x.pc, pc) })
	*sub = slices.Insert(*sub, i, ind)
	if len(*sub) > hgsMu+hgsLambda {
		for len(*sub) > hgsMu {
			h.removeWorst(sub)
		}
	}
}

func insertProximity(list []proximity, p proximity) []proximity {
	i, _ := slices.BinarySearchFunc(list, p.d, func(x proximity, d float64) int { return cmp.Compare(x.d, d) })
	return slices.Insert(list, i, p)
}

// removeWorst removes the member with the worst biased fitness, clones
// first; the cheapest member always stays.
func (h *hgs) removeWorst(sub *[]*individual) {
	list := *sub
	h.fitness(list)
	worst, worstClone := -1, false
	for i := 1; i < len(list); i++ {
		ind := list[i]
		clone := len(ind.prox) > 0 && ind.prox[0].d < 1e-9
		if worst < 0 || clone && !worstClone || clone == worstClone && ind.fit > list[worst].fit {
			worst, worstClone = i, clone
		}
	}
	gone := list[worst]
	*sub = slices.Delete(list, worst, worst+1)
	for _, o := range *sub {
		o.prox = slices.DeleteFunc(o.prox, func(p proximity) bool { return p.o == gone })
	}
	h.release(gone)
}

// fitness computes the biased fitness of a subpopulation sorted by cost.
func (h *hgs) fitness(list []*individual) {
	n := len(list)
	if n == 1 {
		list[0].fit = 0
	}
	if n <= 1 {
		return
	}
	rank := h.rank[:0]
	for i, ind := range list {
		k := min(hgsClose, len(ind.prox))
		d := 0.0
		for _, p := range ind.prox[:k] {
			d += p.d
		}
		if k > 0 {
			d /= float64(k)
		}
		rank = append(rank, ranked{-d, i})
	}
	h.rank = rank
	slices.SortStableFunc(rank, func(a, b ranked) int { return cmp.Compare(a.div, b.div) })
	for r, x := range rank {
		div, fit := float64(r)/float64(n-1), float64(x.i)/float64(n-1)
		if n <= hgsElite {
			list[x.i].fit = fit
		} else {
			list[x.i].fit = fit + (1-float64(hgsElite)/float64(n))*div
		}
	}
}

// tournament picks the fitter of two random members of the population.
func (h *hgs) tournament() *individual {
	pick := func() *individual {
		i := h.s.rng.IntN(len(h.feas) + len(h.infeas))
		if i < len(h.feas) {
			return h.feas[i]
		}
		return h.infeas[i-len(h.feas)]
	}
	a, b := pick(), pick()
	if b.fit < a.fit {
		return b
	}
	return a
}

// crossover builds a child of a and b in h.work by a selective route
// exchange (SREX, Nagata & Kobayashi): a few neighbouring routes of a are
// replaced by the routes of b that share most orders with them. Routes are
// chosen by the neighbour lists around a random order, not by polar angle,
// so that it works on road matrices without coordinates. Of the two
// children (b's routes trimmed to the orders of a's removed routes, or a's
// other routes trimmed of the orders b brings) the cheaper one is kept;
// orders left out are inserted at their cheapest position.
func (h *hgs) crossover(a, b *individual) {
	s := h.s
	nA, nB := 0, 0
	for v := range a.seqs {
		if len(a.seqs[v]) > 0 {
			nA++
		}
		if len(b.seqs[v]) > 0 {
			nB++
		}
	}
	if nA == 0 || nB == 0 {
		h.loadSeqs(h.work, a.seqs)
		return
	}
	nMove := 1 + s.rng.IntN(max(1, min(nA, nB)/2))

	// a's routes met first from a random order through neighbour lists.
	h.stamp++
	stamp := h.stamp
	seed := -1
	for k, start := 0, s.rng.IntN(s.n); k < s.n; k++ {
		if u := (start + k) % s.n; a.routeOf[u] >= 0 {
			seed = u
			break
		}
	}
	queue := append(h.queue[:0], seed)
	h.visit[seed] = stamp
	var selected []int
	for qi := 0; qi < len(queue) && len(selected) < nMove; qi++ {
		u := queue[qi]
		if v := int(a.routeOf[u]); v >= 0 && h.selA[v] != stamp {
			h.selA[v] = stamp
			selected = append(selected, v)
		}
		for _, w := range s.nb[u] {
			if h.visit[w] != stamp {
				h.visit[w] = stamp
				queue = append(queue, w)
			}
		}
	}
	h.queue = queue
	for _, v := range selected {
		for _, u := range a.seqs[v] {
			h.inA[u] = stamp
		}
	}

	// b's routes holding most of those orders.
	routesB := h.routesB[:0]
	for v := range b.seqs {
		h.score[v] = 0
		if len(b.seqs[v]) == 0 {
			continue
		}
		for _, u := range b.seqs[v] {
			if h.inA[u] == stamp {
				h.score[v]++
			}
		}
		routesB = append(routesB, v)
	}
	s.rng.Shuffle(len(routesB), func(i, j int) { routesB[i], routesB[j] = routesB[j], routesB[i] })
	slices.SortStableFunc(routesB, func(x, y int) int { return cmp.Compare(h.score[y], h.score[x]) })
	routesB = routesB[:min(len(selected), len(routesB))]
	h.routesB = routesB
	for _, v := range routesB {
		for _, u := range b.seqs[v] {
			h.inB[u] = stamp
		}
	}

	h.child(a, b, selected, routesB, stamp, false, h.work)
	h.child(a, b, selected, routesB, stamp, true, h.trial)
	if h.trial.cost < h.work.cost {
		h.work, h.trial = h.trial, h.work
	}
}

// child builds one SREX child into st: a without its selected routes, plus
// b's routes. With trimA, a's other routes lose the orders b's routes
// bring; without it, b's routes keep only the orders of a's selected
// routes. The orders of a's selected routes that b's routes lack are then
// inserted at their cheapest positions.
func (h *hgs) child(a, b *individual, selected, routesB []int, stamp int, trimA bool, st *state) {
	s := h.s
	for v := range h.seqs {
		h.seqs[v] = h.seqs[v][:0]
		if h.selA[v] == stamp {
			continue
		}
		for _, u := range a.seqs[v] {
			if !trimA || h.inB[u] != stamp {
				h.seqs[v] = append(h.seqs[v], u)
			}
		}
	}
	for _, vb := range routesB {
		v := vb
		if len(h.seqs[v]) > 0 {
			v = h.emptyVehicle(s.typeOf[vb])
		}
		if v < 0 {
			continue // its orders are inserted below
		}
		for _, u := range b.seqs[vb] {
			if trimA || h.inA[u] == stamp {
				h.seqs[v] = append(h.seqs[v], u)
			}
		}
	}
	h.loadSeqs(st, h.seqs)
	missing := h.missing[:0]
	for _, v := range selected {
		for _, u := range a.seqs[v] {
			if st.routeOf[u] < 0 {
				missing = append(missing, u)
			}
		}
	}
	for _, vb := range routesB {
		for _, u := range b.seqs[vb] {
			if st.routeOf[u] < 0 && (trimA || h.inA[u] == stamp) {
				missing = append(missing, u)
			}
		}
	}
	s.rng.Shuffle(len(missing), func(i, j int) { missing[i], missing[j] = missing[j], missing[i] })
	for _, u := range missing {
		if st.routeOf[u] >= 0 {
			continue
		}
		if v, q, _ := s.bestInsertion(st, u, 0, true); v >= 0 {
			s.insert(st, u, v, q)
		}
	}
	h.missing = missing
}

// searchChangedOnly reports whether the local search of the child in
// h.work, made from parent a (by EAX when edgeAssembled), polishes only its
// changed routes (changedRoutes) rather than the whole plan. It does where
// the genetic search uses EAX (short routes, at most hgsEAXMaxOrders
// orders): always for EAX children, and for the other children when every
// order is planned and the search ends without RELOCATE* and SWAP*
// (intensify), which only the full search runs. A child there changes a
// few of many routes, and the rest are a's, already polished: all of
// Solomon at 1.5 s had its worst at or under 1 % at 13 seeds of 24 against
// 8, its mean 0.074 % against 0.093 % (better at 18 seeds of 24); gh200's
// short-route files at 5 s 0.041 % against 0.053 % (12 seeds). On long
// routes a child changes a larger share of few routes, and the full search
// measured better: gh400's c2, r2 and rc2 files at 30 s 0.165 % against
// 0.226 % (6 seeds; docs/PERFORMANCE.md).
func (h *hgs) searchChangedOnly(edgeAssembled bool) bool {
	s := h.s
	return s.edgeAssembly && (edgeAssembled || h.work.missing == 0 && !s.intensify())
}

// changedRoutes lists the routes of st that are not one of a's routes on
// a vehicle of the same type: a child's local search polishes only those.
func (h *hgs) changedRoutes(a *individual, st *state) []int {
	s := h.s
	out := h.changed[:0]
	for v := range st.routes {
		seq := st.routes[v].seq
		if len(seq) == 0 {
			continue
		}
		va := int(a.routeOf[seq[0]])
		if va < 0 || s.typeOf[va] != s.typeOf[v] || !slices.Equal(seq, a.seqs[va]) {
			out = append(out, v)
		}
	}
	h.changed = out
	return out
}

// emptyVehicle is a vehicle without orders in h.seqs, of type t if there
// is one, else of any type; -1 if none.
func (h *hgs) emptyVehicle(t int) int {
	s := h.s
	for _, v := range s.types[t] {
		if len(h.seqs[v]) == 0 {
			return v
		}
	}
	for v := range h.seqs {
		if len(h.seqs[v]) == 0 {
			return v
		}
	}
	return -1
}
