package vrp

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

// TestGeneticParamsValidate: the defaults pass, and each setting outside
// its range is reported by name.
func TestGeneticParamsValidate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(p *geneticParams)
		wants []string // substrings of the error; none: valid
	}{
		{"defaults", func(*geneticParams) {}, nil},
		{"no elite", func(p *geneticParams) { p.elite = 0 }, nil},
		{"band of one point", func(p *geneticParams) { p.targetFeasibleHigh = p.targetFeasibleLow }, nil},
		{"empty population", func(p *geneticParams) { p.popSize = 0 }, []string{"popSize is 0"}},
		{"no generation", func(p *geneticParams) { p.generation = 0 }, []string{"generation"}},
		{"negative elite", func(p *geneticParams) { p.elite = -1 }, []string{"elite"}},
		{"no diversity neighbours", func(p *geneticParams) { p.diversityNeighbours = 0 }, []string{"diversityNeighbours"}},
		{"no first plans", func(p *geneticParams) { p.initialSize = 0 }, []string{"initialSize"}},
		{"initial share above 1", func(p *geneticParams) { p.initialShare = 1.5 }, []string{"initialShare is 1.5"}},
		{"no initial minimum", func(p *geneticParams) { p.initialMin = 0 }, []string{"initialMin"}},
		{"no restart", func(p *geneticParams) { p.restartAfter = 0 }, []string{"restartAfter"}},
		{"no exchange", func(p *geneticParams) { p.exchangeEvery = 0 }, []string{"exchangeEvery"}},
		{"negative ruin share", func(p *geneticParams) { p.ruinShare = -0.1 }, []string{"ruinShare"}},
		{"EAX share NaN", func(p *geneticParams) { p.eaxShare = math.NaN() }, []string{"eaxShare is NaN"}},
		{"negative EAX size", func(p *geneticParams) { p.eaxMaxOrders = -1 }, []string{"eaxMaxOrders"}},
		{"granular start 0", func(p *geneticParams) { p.granularStart = 0 }, []string{"granularStart is 0"}},
		{"granular start above the neighbours", func(p *geneticParams) { p.granularStart = neighbourCount + 1 }, []string{"granularStart"}},
		{"free time warp", func(p *geneticParams) { p.initialTimeWarp = 0 }, []string{"initialTimeWarp"}},
		{"infinite time warp", func(p *geneticParams) { p.initialTimeWarp = math.Inf(1) }, []string{"initialTimeWarp"}},
		{"band reversed", func(p *geneticParams) { p.targetFeasibleHigh = 0.3 }, []string{"targetFeasibleHigh"}},
		{"band above 1", func(p *geneticParams) { p.targetFeasibleLow, p.targetFeasibleHigh = 1.2, 1.3 }, []string{"targetFeasibleLow", "targetFeasibleHigh"}},
		{"scarce above the band", func(p *geneticParams) { p.scarceFeasible = 0.5 }, []string{"scarceFeasible"}},
		{"no update", func(p *geneticParams) { p.penaltyUpdateEvery = 0 }, []string{"penaltyUpdateEvery"}},
		{"increase that lowers", func(p *geneticParams) { p.penaltyUp = 0.9 }, []string{"penaltyUp is 0.9"}},
		{"scarce increase of 1", func(p *geneticParams) { p.penaltyUpScarce = 1 }, []string{"penaltyUpScarce"}},
		{"decrease that raises", func(p *geneticParams) { p.penaltyDown = 1.1 }, []string{"penaltyDown"}},
		{"zero minimum price", func(p *geneticParams) { p.minPenalty = 0 }, []string{"minPenalty"}},
		{"maximum under the minimum", func(p *geneticParams) { p.maxPenalty = p.minPenalty / 2 }, []string{"maxPenalty"}},
		{"repair share above 1", func(p *geneticParams) { p.repairShare = 2 }, []string{"repairShare"}},
		{"repair that lowers prices", func(p *geneticParams) { p.repairBoost = 0.5 }, []string{"repairBoost"}},
		{"no level limit", func(p *geneticParams) { p.levelLimit = 0 }, []string{"levelLimit"}},
		{"no level size", func(p *geneticParams) { p.levelOrders = 0 }, []string{"levelOrders"}},
		{"powers not positive", func(p *geneticParams) {
			p.levelPowerShort, p.levelPowerShortAbove, p.levelPowerLong = 0, -1, math.NaN()
		},
			[]string{"levelPowerShort is 0", "levelPowerShortAbove", "levelPowerLong"}},
		{"no long route", func(p *geneticParams) { p.longRoute = 0 }, []string{"longRoute"}},
		{"no wide budget", func(p *geneticParams) { p.widePerOrder = -time.Millisecond }, []string{"widePerOrder"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := defaultGeneticParams()
			c.edit(&p)
			err := p.validate()
			if len(c.wants) == 0 {
				if err != nil {
					t.Fatalf("valid settings rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestSolveRejectsInvalidGeneticParams: Solve validates the settings
// before it starts, and reports them instead of searching with them.
func TestSolveRejectsInvalidGeneticParams(t *testing.T) {
	p := genProblem(1, genConfig{orders: 10, vehicles: 2, side: 5000, windowShare: 0.5, capFactor: 1.5, objective: ObjectiveDistance})
	bad := defaultGeneticParams()
	bad.popSize = 0
	sol, err := Solve(context.Background(), p, Options{TimeLimit: time.Second, MaxIterations: 10, genetic: &bad})
	if err == nil || sol != nil || !strings.Contains(err.Error(), "popSize") {
		t.Fatalf("Solve = %v, %v; want an error about popSize", sol, err)
	}
	good := defaultGeneticParams()
	if _, err := Solve(context.Background(), p, Options{TimeLimit: time.Second, MaxIterations: 10, genetic: &good}); err != nil {
		t.Fatalf("defaults set explicitly: %v", err)
	}
}
