package bench

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"routeopt.io/routeopt/solver/vrp/bench/instances"
)

// FeatureBases are the instances every feature set derives from: the
// Solomon 100-customer classes and a 200- and a 400-customer
// Gehring–Homberger instance, as <set>/<instance>.
var FeatureBases = []string{
	"solomon/c101", "solomon/c201", "solomon/r101", "solomon/r201", "solomon/rc101", "solomon/rc201",
	"gh200-sample/rc1_2_1", "gh400-sample/r2_4_1",
}

// skillNames are the skills of the skills set.
var skillNames = []string{"refrigerated", "tail_lift", "hazmat"}

// OverlaySeed is the seed of a feature's overlay of base: a hash of the
// two, so that adding an instance or a set changes no other file.
func OverlaySeed(feature, base string) uint64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(feature + "/" + base)) // a hash never fails to write
	return uint64(h.Sum32())
}

// DeriveOverlay makes the overlay of feature for the instance in (named
// base, <set>/<instance>) from seed. Times are those of Instance.Problem:
// the horizon H is the depot's due date x 10, and a minute is H/600 (the
// horizon read as a ten-hour day). The fleet is one vehicle per customer,
// as under the DIMACS convention, except in the priority set, whose fleet
// is 3/4 of fewestRoutes, the fewest vehicles known to serve every
// customer.
func DeriveOverlay(feature, base string, in *Instance, fewestRoutes int, seed uint64) (*Overlay, error) {
	n := in.Customers()
	if n == 0 {
		return nil, errors.New("an instance without customers")
	}
	rng := rand.New(rand.NewPCG(seed, 0x666c656574))
	o := &Overlay{Format: OverlayFormat, Base: base, Feature: feature, Seed: seed, Fleet: []VehicleGroup{{Count: n}}}
	h := 10 * in.Nodes[0].Due
	minute := float64(h) / 600
	switch feature {
	case "breaks":
		o.Fleet = nil
		for range n {
			d := int(math.Round(minute * float64(30+rng.IntN(16))))
			width := int(math.Round(0.2 * float64(h)))
			start := h/2 - width/2 + int(math.Round(0.05*float64(h)*(2*rng.Float64()-1)))
			o.Fleet = append(o.Fleet, VehicleGroup{Count: 1, Breaks: [][3]int{{start, start + width, d}}})
		}
	case "windows":
		for _, nd := range in.Nodes[1:] {
			o.Orders.Windows = append(o.Orders.Windows, splitWindow(rng, 10*nd.Ready, 10*nd.Due))
		}
	case "skills":
		for range n {
			var s []string
			if rng.IntN(3) == 0 {
				s = []string{skillNames[rng.IntN(len(skillNames))]}
			}
			o.Orders.Skills = append(o.Orders.Skills, s)
		}
		o.Fleet = skilledFleet(rng, n)
	case "loads":
		o.Dimensions = []string{"volume", "pallets"}
		sumDemand, sumPallets, maxPallets := 0, 0, 0
		for _, nd := range in.Nodes[1:] {
			volume := math.Round(float64(nd.Demand) * (0.5 + rng.Float64()))
			pallets := 1 + rng.IntN(4)
			o.Orders.Loads = append(o.Orders.Loads, []float64{volume, float64(pallets)})
			sumDemand, sumPallets, maxPallets = sumDemand+nd.Demand, sumPallets+pallets, max(maxPallets, pallets)
		}
		// as tight as the demand: a full van by demand is about full by pallets
		pallets := float64(maxPallets)
		if sumDemand > 0 {
			pallets = max(pallets, math.Round(float64(in.Capacity)*float64(sumPallets)/float64(sumDemand)))
		}
		o.Fleet[0].Capacities = []float64{float64(in.Capacity), pallets}
	case "duration":
		p := in.Problem()
		limit := int(math.Round(0.5 * float64(h)))
		for i, ord := range p.Orders {
			limit = max(limit, p.Duration[0][i+1]+ord.ServiceS+p.Duration[i+1][0])
		}
		o.Fleet[0].MaxDuration = limit
	case "priority":
		for range n {
			o.Orders.Priority = append(o.Orders.Priority, rng.IntN(101))
		}
		if fewestRoutes < 1 {
			return nil, fmt.Errorf("%s: the priority set needs the fewest routes known to serve every customer", base)
		}
		o.Fleet[0].Count = max(1, 3*fewestRoutes/4)
	case "startend":
		o.ExtraLocations, o.Fleet = startEndFleet(rng, in)
	default:
		return nil, fmt.Errorf("no feature set %q", feature)
	}
	return o, nil
}

// splitWindow cuts [a, b] into two or three windows with gaps of a tenth
// to a fifth of its width between them, the first starting at a and the
// last ending at b, so that the original window is their hull; a window
// too narrow to cut stays whole.
func splitWindow(rng *rand.Rand, a, b int) [][2]int {
	k := 2 + rng.IntN(2)
	width := b - a
	gaps := make([]int, k-1)
	open := width
	for i := range gaps {
		gaps[i] = max(1, int(math.Round(float64(width)*(0.1+0.1*rng.Float64()))))
		open -= gaps[i]
	}
	if open < 2*k {
		return [][2]int{{a, b}}
	}
	weights := make([]float64, k)
	sum := 0.0
	for i := range weights {
		weights[i] = 0.5 + rng.Float64()
		sum += weights[i]
	}
	out := make([][2]int, k)
	t := a
	for i := range out {
		piece := max(1, int(math.Round(float64(open)*weights[i]/sum)))
		if i == k-1 {
			out[i] = [2]int{t, b}
			break
		}
		out[i] = [2]int{t, t + piece}
		t += piece + gaps[i]
	}
	if out[k-1][0] > out[k-1][1] { // rounding ate the last piece
		return [][2]int{{a, b}}
	}
	return out
}

// skilledFleet is n vehicles, each with each skill at odds 1 in 3 (and
// every skill on at least one vehicle), grouped by skill set.
func skilledFleet(rng *rand.Rand, n int) []VehicleGroup {
	sets := make([]int, n) // a bit per skill
	for v := range sets {
		for s := range skillNames {
			if rng.IntN(3) == 0 {
				sets[v] |= 1 << s
			}
		}
	}
	for s := range skillNames {
		if !slices.ContainsFunc(sets, func(x int) bool { return x&(1<<s) != 0 }) {
			sets[s%n] |= 1 << s
		}
	}
	counts := map[int]int{}
	for _, x := range sets {
		counts[x]++
	}
	var out []VehicleGroup
	for x := range 1 << len(skillNames) {
		if counts[x] == 0 {
			continue
		}
		g := VehicleGroup{Count: counts[x]}
		for s, name := range skillNames {
			if x&(1<<s) != 0 {
				g.Skills = append(g.Skills, name)
			}
		}
		out = append(out, g)
	}
	return out
}

// startEndFleet places three extra locations among the customers (in
// their bounding box) and draws where each of n vehicles starts and
// ends: 40 % at the depot both ways, 15 % from an extra location to the
// depot, 15 % the other way, 10 % between extra locations, and 20 % open
// (half of those from the depot). The vehicles are grouped by start and
// end.
func startEndFleet(rng *rand.Rand, in *Instance) ([][2]int, []VehicleGroup) {
	minX, minY, maxX, maxY := in.Nodes[1].X, in.Nodes[1].Y, in.Nodes[1].X, in.Nodes[1].Y
	for _, nd := range in.Nodes[1:] {
		minX, minY, maxX, maxY = min(minX, nd.X), min(minY, nd.Y), max(maxX, nd.X), max(maxY, nd.Y)
	}
	extra := make([][2]int, 3)
	for i := range extra {
		extra[i] = [2]int{minX + rng.IntN(maxX-minX+1), minY + rng.IntN(maxY-minY+1)}
	}
	place := func() int { return 1 + rng.IntN(len(extra)) }
	type ends struct {
		start, end int
		open       bool
	}
	counts := map[ends]int{}
	for range in.Customers() {
		var e ends
		switch x := rng.Float64(); {
		case x < 0.40:
		case x < 0.55:
			e.start = place()
		case x < 0.70:
			e.end = place()
		case x < 0.80:
			e.start, e.end = place(), place()
		case x < 0.90:
			e.open = true
		default:
			e.start, e.open = place(), true
		}
		counts[e]++
	}
	var out []VehicleGroup
	for e, c := range counts {
		out = append(out, VehicleGroup{Count: c, Start: e.start, End: e.end, OpenEnd: e.open})
	}
	slices.SortFunc(out, func(a, b VehicleGroup) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(boolInt(a.OpenEnd), boolInt(b.OpenEnd)))
	})
	return extra, out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// LoadFewestRoutes reads the bks.csv name of fsys for the fewest routes
// known to serve each instance: the vehicles of its hierarchical_real row
// (fewest vehicles first), else of its dimacs_int10 row.
func LoadFewestRoutes(fsys fs.FS, name string) (map[string]int, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("%s: %v", name, cmp.Or(err, errors.New("empty")))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	ci, okI := col["instance"]
	cv, okV := col["vehicles"]
	cc, okC := col["convention"]
	if !okI || !okV || !okC {
		return nil, fmt.Errorf("%s: want columns instance, vehicles and convention", name)
	}
	out := map[string]int{}
	for _, r := range rows[1:] {
		k, err := strconv.Atoi(r[cv])
		if err != nil || k < 1 {
			continue
		}
		inst := strings.ToLower(r[ci])
		if _, seen := out[inst]; !seen || r[cc] == "hierarchical_real" {
			out[inst] = k
		}
	}
	return out, nil
}

// FeatureOverlay derives the overlay of feature for base (<set>/<instance>
// of the embedded sets) with its seed, as the committed files hold it.
func FeatureOverlay(feature, base string) (*Overlay, error) {
	set, name, _ := strings.Cut(base, "/")
	fsys, err := instances.Open(set)
	if err != nil {
		return nil, err
	}
	in, err := ParseFS(fsys, name+".txt")
	if err != nil {
		return nil, err
	}
	fewest, err := LoadFewestRoutes(fsys, "bks.csv")
	if err != nil {
		return nil, err
	}
	return DeriveOverlay(feature, base, in, fewest[name], OverlaySeed(feature, base))
}
