package vrp

import (
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

// consider makes ind the best plan when it is feasible and better.
func (h *hgs) consider(ind *individual) {
	if !ind.feasible || h.best.missing == 0 && ind.objective >= h.best.cost-improveEps {
		return
	}
	h.loadSeqs(h.best, ind.seqs)
	h.lastImprove = h.iter
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
