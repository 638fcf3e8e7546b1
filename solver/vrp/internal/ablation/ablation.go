// Package ablation names the pieces of solver/vrp that can be switched
// off one at a time, so that the ablation table of docs/PERFORMANCE.md can
// be measured with the same binary (routeopt bench --ablate). A solve
// takes its Switches in vrp.Options.Ablation, so solves with different
// pieces off can run side by side. Only the benchmark runner and tests
// set them; the service always runs the zero value, all pieces on.
package ablation

import (
	"fmt"
	"slices"
	"strings"
)

// Switches turns pieces off; the zero value is the full solver.
type Switches struct {
	NoGenetic          bool // ruin-and-recreate chains only, no genetic search
	NoRuinMutation     bool // genetic search: every child by crossover, none by ruin and recreate
	LowTimeWarpPenalty bool // genetic search: first time-warp penalty 1, not 3, x cost per second
	RetestAll          bool // local search: every pass tests every pair, not only the changed ones
	FixedGranular      bool // genetic search: the local search always tries all 40 neighbours
	NoSwapStar         bool // genetic search: no SWAP* or RELOCATE* after the node moves
	EdgeProximity      bool // genetic search on short routes: neighbours by edges only, not also by time windows
	NoEAX              bool // genetic search on short routes: every crossover SREX, strings of at most 2 within a route
}

// piece is one switch with its --ablate name and description.
type piece struct {
	name, doc string
	set       func(*Switches)
}

var names = []piece{
	{"genetic", "no genetic search: ruin-and-recreate chains only", func(s *Switches) { s.NoGenetic = true }},
	{"ruin-mutation", "genetic search without children by ruin and recreate", func(s *Switches) { s.NoRuinMutation = true }},
	{"tw-penalty", "first time-warp penalty 1 instead of 3", func(s *Switches) { s.LowTimeWarpPenalty = true }},
	{"skip-tested", "local search re-tests unchanged pairs", func(s *Switches) { s.RetestAll = true }},
	{"granular-growth", "genetic search tries all 40 neighbours from the start, not 20 growing to 40", func(s *Switches) { s.FixedGranular = true }},
	{"swap-star", "genetic search without SWAP* and RELOCATE* between routes on short-route problems", func(s *Switches) { s.NoSwapStar = true }},
	{"eax", "genetic search on short-route problems without EAX crossovers and with strings of at most 2 orders moved within a route", func(s *Switches) { s.NoEAX = true }},
	{"window-proximity", "short-route problems of the genetic search rank neighbours by edges only, not also by how their windows follow", func(s *Switches) { s.EdgeProximity = true }},
}

// Parse returns the switches that turn off the named pieces (see Help);
// an empty list is the full solver.
func Parse(off []string) (Switches, error) {
	var s Switches
	for _, n := range off {
		i := slices.IndexFunc(names, func(x piece) bool { return x.name == n })
		if i < 0 {
			return Switches{}, fmt.Errorf("unknown piece %q; known: %s", n, strings.Join(Names(), ", "))
		}
		names[i].set(&s)
	}
	return s, nil
}

// Names lists the pieces that can be turned off.
func Names() []string {
	out := make([]string, len(names))
	for i, x := range names {
		out[i] = x.name
	}
	return out
}

// Help describes every piece, one per line.
func Help() string {
	var b strings.Builder
	for _, x := range names {
		fmt.Fprintf(&b, "%s: %s\n", x.name, x.doc)
	}
	return b.String()
}
