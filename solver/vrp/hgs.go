package vrp

import (
	"math"
	"slices"
	"time"
)

// hgs is one hybrid genetic search, one per thread (Vidal 2022, "Hybrid
// genetic search for the CVRP", with the time-warp penalties of the
// DIMACS 2021 VRPTW winner), sized for budgets of seconds. A population of
// plans, split into a feasible and an infeasible half (population.go), is
// improved by crossover (SREX, srex.go, and EAX, eax.go), by ruin and
// recreate of one parent, and by the local search in soft mode, where
// time warp and excess load are allowed at prices that adapt to how many
// children come out feasible (penalty.go). Survivors are chosen by biased
// fitness: cost rank plus diversity rank, so the population stays spread
// out while it improves. geneticParams holds its settings.
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
	h.granStart = s.genetic.granularStart
	if s.wideFromStart() {
		h.granStart = neighbourCount
	}
	s.soft = true
	s.twPen, s.loadPen = s.initialPenalties()
	h.add(h.capture(st))
	return h
}

// epoch is how many iterations parallel searches run between exchanges.
func (h *hgs) epoch() int { return h.s.genetic.exchangeEvery }

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
		if h.iter-h.lastImprove > s.genetic.restartAfter {
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
		if !s.opt.Ablation.NoRuinMutation && s.rng.Float64() < s.genetic.ruinShare {
			h.loadSeqs(h.work, a.seqs)
			s.ruin(h.work, ruinAvgRemoved)
			s.recreate(h.work, math.Inf(1))
		} else if edgeAssembled = s.edgeAssembly && s.rng.Float64() < s.genetic.eaxShare && h.eax(a, b, h.work); !edgeAssembled {
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
		if !ind.feasible && s.rng.Float64() < s.genetic.repairShare {
			tw, load := s.twPen, s.loadPen
			s.twPen, s.loadPen = tw*s.genetic.repairBoost, load*s.genetic.repairBoost
			h.reprice(h.work)
			s.pricesRose = !s.opt.Ablation.RetestAll
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
	if s.opt.Ablation.FixedGranular {
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

// initialise fills the population up to geneticParams.initialSize plans
// (see initialShare), each made by random-order cheapest insertion and the
// local search.
func (h *hgs) initialise() bool {
	s := h.s
	start := s.opt.clock()
	for made := 0; len(h.feas)+len(h.infeas) < s.genetic.initialSize; made++ {
		if s.stop() {
			return false
		}
		if s.opt.MaxIterations == 0 && made >= s.genetic.initialMin && s.now.Sub(start) >= time.Duration(s.genetic.initialShare*float64(s.limit)) {
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
	st.cost, st.missing, st.lost = 0, len(s.assignableOrders), s.totalWeight
	for v := range st.routes {
		r := &st.routes[v]
		r.seq = append(r.seq[:0], seqs[v]...)
		r.cost = 0
		s.rebuild(st, v)
		st.missing -= len(r.seq)
		for _, u := range r.seq {
			st.lost -= s.fleet.weight[u]
		}
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
// the genetic search uses EAX (short routes, at most eaxMaxOrders orders):
// always for EAX children, and for the other children when every order is
// planned and the search ends without RELOCATE* and SWAP* (intensify),
// which only the full search runs. A child there changes a few of many
// routes, and the rest are a's, already polished, so the time goes to
// more children; that measured better on Solomon's and on 200-order
// short-route problems. On long routes a child changes a larger share of
// few routes, and the full search measured better (docs/PERFORMANCE.md).
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
