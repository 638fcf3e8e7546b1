package vrp

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// geneticParams are the settings of the hybrid genetic search and of the
// rule that picks it over ruin-and-recreate. defaultGeneticParams holds
// the values the service runs; Solve validates the set it uses once,
// before it starts. The defaults were chosen on the Solomon and
// Gehring–Homberger benchmarks at the time limits the service is given
// (seconds to a few minutes); docs/PERFORMANCE.md has the measurements.
type geneticParams struct {
	// Population (Vidal's HGS, sized for budgets of seconds).

	// popSize is the number of plans each subpopulation (feasible and
	// infeasible) keeps after a survivor selection; HGS's default.
	popSize int
	// generation is how many children a subpopulation takes beyond
	// popSize before the next survivor selection, which sorts and updates
	// diversities, so it runs in batches; HGS's default.
	generation int
	// elite is the number of cheapest plans whose fitness barely weighs
	// diversity, so that a selection keeps the best ones even when they
	// are alike; HGS's default.
	elite int
	// diversityNeighbours is how many of its closest members a plan's
	// diversity (broken-pairs distance) is averaged over; HGS's default.
	diversityNeighbours int
	// initialSize is how many plans, made by random-order insertion and
	// the local search, fill the population before the first crossover:
	// twice popSize, where HGS makes four times, because at budgets of
	// seconds the time goes to children sooner.
	initialSize int
	// initialShare and initialMin cut the making of the first plans short
	// when there is no MaxIterations: it stops at initialShare of the time
	// limit once there are initialMin plans, since at a second or two the
	// full initialSize would take half the budget.
	initialShare float64
	initialMin   int
	// restartAfter is how many iterations without a better plan empty the
	// population (the best plan stays), so that a converged population
	// starts over; HGS's default.
	restartAfter int
	// exchangeEvery is the number of iterations parallel genetic searches
	// run between two exchanges of their best plans. It is counted, not
	// timed, so that a run with MaxIterations is reproducible for any
	// number of threads.
	exchangeEvery int

	// Children.

	// ruinShare of the children come from one parent by ruin and recreate
	// (SISR) instead of crossover: it removes strings across neighbouring
	// routes, which empties routes that crossover and the local search
	// keep.
	ruinShare float64
	// eaxShare of the crossovers are EAX where useEAX allows it, the rest
	// SREX: EAX changes a few edges across many routes, which plans near
	// the best differ in on short routes, while SREX moves whole routes.
	eaxShare float64
	// eaxMaxOrders is the largest problem that uses EAX: on 400-order
	// short-route problems EAX measured no better than SREX alone.
	eaxMaxOrders int
	// granularStart is how many nearest neighbours of each order the
	// local search tries at the start of the run; it grows to
	// neighbourCount by the end (see granular). Few neighbours make the
	// early children cheap; all of them reach further once the population
	// has converged.
	granularStart int

	// Penalties of time warp and excess load (soft mode).

	// initialTimeWarp prices a second of time warp at this many times the
	// average cost of a second of driving. The price adapts within a few
	// hundred children, but the first plans are made at this one and
	// decide where the population settles: at 10 it stayed in a poor plan
	// on some problems, at 1 the mean on Solomon's got worse.
	initialTimeWarp float64
	// targetFeasibleLow and targetFeasibleHigh bound the share of
	// children without time warp (and, counted apart, without excess
	// load) at which the prices hold still: below the band they rise,
	// above it they fall. A band around 40 %, where HGS aims at 20 %,
	// measured better on 400-order short-route problems and level on
	// Solomon's.
	targetFeasibleLow, targetFeasibleHigh float64
	// penaltyUpdateEvery is how many children are counted between two
	// price updates.
	penaltyUpdateEvery int
	// penaltyUp and penaltyDown multiply a price when too few and too
	// many children are feasible.
	penaltyUp, penaltyDown float64
	// When at most scarceFeasible of the children are feasible, a price
	// is multiplied by penaltyUpScarce instead of penaltyUp, so that a
	// price far too low recovers within a few updates.
	scarceFeasible, penaltyUpScarce float64
	// minPenalty and maxPenalty bound the prices, so that they neither
	// vanish nor overflow whatever the children do.
	minPenalty, maxPenalty float64
	// repairShare of the infeasible children get a second local search at
	// prices repairBoost times higher, which makes many of them feasible
	// (HGS's repair, with its defaults).
	repairShare, repairBoost float64

	// Choice of the engine (see hasGeneticBudget and wideFromStart).

	// The genetic search runs when the time limit is at least
	// levelLimit x (orders / levelOrders)^power, power levelPowerShort on
	// short routes (levelPowerShortAbove above levelOrders orders) and
	// levelPowerLong on long ones; otherwise ruin-and-recreate runs. The
	// population needs more children to converge as plans grow, and each
	// child's local search costs more, while a ruin-and-recreate step
	// stays cheap: the rule follows the limits at which both engines
	// measured level.
	levelLimit                                            time.Duration
	levelOrders                                           int
	levelPowerShort, levelPowerShortAbove, levelPowerLong float64
	// longRoute is the number of average orders' demand above which a
	// vehicle's capacity makes routes long (see hasLongRoutes).
	longRoute float64
	// widePerOrder is the time limit per order from which the search may
	// spend more per child: on long routes its local search tries all
	// neighbours from the start, and on short routes it adds RELOCATE* and
	// SWAP* (see intensify). Below it cheaper children are worth more.
	widePerOrder time.Duration
}

// defaultGeneticParams returns the settings the service runs.
func defaultGeneticParams() geneticParams {
	return geneticParams{
		popSize:             25,
		generation:          40,
		elite:               4,
		diversityNeighbours: 5,
		initialSize:         50,
		initialShare:        0.1,
		initialMin:          4,
		restartAfter:        20000,
		exchangeEvery:       100,

		ruinShare:     0.3,
		eaxShare:      0.5,
		eaxMaxOrders:  200,
		granularStart: 20,

		initialTimeWarp:    3,
		targetFeasibleLow:  0.35,
		targetFeasibleHigh: 0.45,
		penaltyUpdateEvery: 100,
		penaltyUp:          1.2,
		penaltyDown:        0.85,
		scarceFeasible:     0.01,
		penaltyUpScarce:    2,
		minPenalty:         1e-3,
		maxPenalty:         1e6,
		repairShare:        0.5,
		repairBoost:        10,

		levelLimit:           5 * time.Second,
		levelOrders:          400,
		levelPowerShort:      3,
		levelPowerShortAbove: 3.75,
		levelPowerLong:       2.5,
		longRoute:            25,
		widePerOrder:         60 * time.Millisecond,
	}
}

// validate reports every setting outside the range in which the search is
// well defined.
func (p *geneticParams) validate() error {
	var errs []error
	atLeast := func(name string, v, lo int) {
		if v < lo {
			errs = append(errs, fmt.Errorf("%s is %d, want at least %d", name, v, lo))
		}
	}
	// in checks lo <= v <= hi (NaN is outside every range).
	in := func(name string, v, lo, hi float64) {
		if !(v >= lo && v <= hi) {
			errs = append(errs, fmt.Errorf("%s is %v, want %v to %v", name, v, lo, hi))
		}
	}
	above := func(name string, v, lo float64) {
		if !(v > lo) || math.IsInf(v, 1) {
			errs = append(errs, fmt.Errorf("%s is %v, want a finite number above %v", name, v, lo))
		}
	}
	atLeast("popSize", p.popSize, 1)
	atLeast("generation", p.generation, 1)
	atLeast("elite", p.elite, 0)
	atLeast("diversityNeighbours", p.diversityNeighbours, 1)
	atLeast("initialSize", p.initialSize, 1)
	in("initialShare", p.initialShare, 0, 1)
	atLeast("initialMin", p.initialMin, 1)
	atLeast("restartAfter", p.restartAfter, 1)
	atLeast("exchangeEvery", p.exchangeEvery, 1)

	in("ruinShare", p.ruinShare, 0, 1)
	in("eaxShare", p.eaxShare, 0, 1)
	atLeast("eaxMaxOrders", p.eaxMaxOrders, 0)
	if p.granularStart < 1 || p.granularStart > neighbourCount {
		errs = append(errs, fmt.Errorf("granularStart is %d, want 1 to %d", p.granularStart, neighbourCount))
	}

	above("initialTimeWarp", p.initialTimeWarp, 0)
	in("targetFeasibleLow", p.targetFeasibleLow, 0, 1)
	in("targetFeasibleHigh", p.targetFeasibleHigh, p.targetFeasibleLow, 1)
	in("scarceFeasible", p.scarceFeasible, 0, p.targetFeasibleLow)
	atLeast("penaltyUpdateEvery", p.penaltyUpdateEvery, 1)
	above("penaltyUp", p.penaltyUp, 1)
	above("penaltyUpScarce", p.penaltyUpScarce, 1)
	if !(p.penaltyDown > 0 && p.penaltyDown < 1) {
		errs = append(errs, fmt.Errorf("penaltyDown is %v, want above 0 and below 1", p.penaltyDown))
	}
	above("minPenalty", p.minPenalty, 0)
	above("maxPenalty", p.maxPenalty, p.minPenalty)
	in("repairShare", p.repairShare, 0, 1)
	above("repairBoost", p.repairBoost, 1)

	if p.levelLimit <= 0 {
		errs = append(errs, fmt.Errorf("levelLimit is %v, want above 0", p.levelLimit))
	}
	atLeast("levelOrders", p.levelOrders, 1)
	above("levelPowerShort", p.levelPowerShort, 0)
	above("levelPowerShortAbove", p.levelPowerShortAbove, 0)
	above("levelPowerLong", p.levelPowerLong, 0)
	above("longRoute", p.longRoute, 0)
	if p.widePerOrder <= 0 {
		errs = append(errs, fmt.Errorf("widePerOrder is %v, want above 0", p.widePerOrder))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("genetic search parameters: %w", err)
	}
	return nil
}
