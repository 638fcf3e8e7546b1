package vrpbrute

import (
	"math"
	"math/rand/v2"

	"routeopt.io/routeopt/solver/vrp"
)

// skillNames are the skills Random draws from.
var skillNames = []string{"cold", "lift"}

// Random makes a valid problem of the given size from seed (the same seed
// makes the same problem). Each rule of the model is in play in most
// problems, drawn independently, so that a few dozen seeds mix them all:
// several windows per order, breaks (one or two per vehicle), skills, two
// load dimensions, route limits (stops, duration, distance), priorities
// with a fleet too short to serve everything, vehicles starting and
// ending at other locations, open routes, fixed costs, the duration
// objective and asymmetric matrices. Distances are road metres in a
// 10 km square, durations seconds at 30 km/h, times seconds of a working
// day from 08:00.
func Random(seed uint64, orders, vehicles int) *vrp.Problem {
	rng := rand.New(rand.NewPCG(seed, 0x6272757465))
	on := func() bool { return rng.Float64() < 0.6 }
	f := struct{ multi, breaks, skills, loads, limits, priority, places, open, fixed, duration, asym bool }{
		on(), on(), on(), on(), on(), on(), on(), on(), on(), rng.Float64() < 0.4, rng.Float64() < 0.3,
	}
	p := &vrp.Problem{Objective: vrp.ObjectiveDistance}
	if f.duration {
		p.Objective = vrp.ObjectiveDuration
	}
	if f.places {
		p.ExtraLocations = 1 + rng.IntN(2)
	}
	size := 1 + orders + p.ExtraLocations
	xs, ys := make([]float64, size), make([]float64, size)
	xs[0], ys[0] = 5000, 5000
	for i := 1; i < size; i++ {
		xs[i], ys[i] = 10000*rng.Float64(), 10000*rng.Float64()
	}
	p.Distance, p.Duration = make([][]int, size), make([][]int, size)
	for i := range size {
		p.Distance[i], p.Duration[i] = make([]int, size), make([]int, size)
		for j := range size {
			if i == j {
				continue
			}
			d := 1.3 * math.Hypot(xs[i]-xs[j], ys[i]-ys[j])
			if f.asym {
				d *= 1 + 0.2*rng.Float64()
			}
			p.Distance[i][j] = int(math.Round(d))
			p.Duration[i][j] = int(math.Round(d / (30 / 3.6)))
		}
	}
	if f.loads {
		p.Dimensions = []string{"volume", "pallets"}
	}
	const day = 8 * 3600
	for range orders {
		o := vrp.Order{Demand: float64(1 + rng.IntN(4)), ServiceS: 300 + 60*rng.IntN(11), WindowEnd: vrp.NoWindowEnd}
		switch x := rng.Float64(); {
		case x < 0.35 && f.multi:
			// two or three windows of 20 to 60 minutes, 30 to 90 apart
			t := day + 60*rng.IntN(61)
			for range 2 + rng.IntN(2) {
				w := vrp.Window{Start: t, End: t + 60*(20+rng.IntN(41))}
				o.Windows = append(o.Windows, w)
				t = w.End + 60*(30+rng.IntN(61))
			}
			o.WindowStart, o.WindowEnd = o.Windows[0].Start, o.Windows[len(o.Windows)-1].End
		case x < 0.7:
			o.WindowStart = day + 60*rng.IntN(181)
			o.WindowEnd = o.WindowStart + 60*(60+rng.IntN(61))
		}
		if f.skills && rng.Float64() < 0.35 {
			o.Skills = []string{skillNames[rng.IntN(len(skillNames))]}
		}
		if f.loads {
			o.Loads = []float64{float64(rng.IntN(7)), float64(rng.IntN(4))}
		}
		if f.priority {
			o.Priority = rng.IntN(vrp.MaxPriority + 1)
		}
		p.Orders = append(p.Orders, o)
	}
	for range vehicles {
		v := vrp.Vehicle{Capacity: float64(6 + rng.IntN(7)), ShiftStart: day + 60*rng.IntN(31)}
		hours := 3 + 2*rng.Float64()
		if f.priority { // a short fleet: small vans on short shifts
			v.Capacity, hours = float64(4+rng.IntN(4)), 1.5+rng.Float64()
		}
		v.ShiftEnd = v.ShiftStart + int(hours*3600)
		if f.loads {
			v.Capacities = []float64{float64(6 + rng.IntN(7)), float64(2 + rng.IntN(4))}
		}
		if f.breaks && rng.Float64() < 0.7 {
			v.Breaks = breaks(rng, v.ShiftStart, v.ShiftEnd)
		}
		if f.skills {
			for _, s := range skillNames {
				if rng.Float64() < 0.5 {
					v.Skills = append(v.Skills, s)
				}
			}
		}
		if f.limits {
			if rng.Float64() < 0.5 {
				v.MaxStops = 2 + rng.IntN(3)
			}
			if rng.Float64() < 0.5 {
				v.MaxDuration = 3600 * (3 + rng.IntN(4)) / 2
			}
			if rng.Float64() < 0.5 {
				v.MaxDistance = 1000 * (8 + rng.IntN(13))
			}
		}
		if f.fixed {
			v.FixedCost = float64(1000 * (1 + rng.IntN(5)))
		}
		if f.places {
			place := func() int {
				if k := rng.IntN(p.ExtraLocations + 1); k > 0 {
					return orders + k
				}
				return 0
			}
			v.Start, v.End = place(), place()
		}
		if f.open && rng.Float64() < 0.4 {
			v.OpenEnd, v.End = true, 0
		}
		p.Vehicles = append(p.Vehicles, v)
	}
	return p
}

// breaks draws one or two breaks of 15 to 30 minutes inside the shift
// [start, end], the first an hour or two into it, each with some room.
func breaks(rng *rand.Rand, start, end int) []vrp.Break {
	var out []vrp.Break
	from, prevEnd := start+3600+60*rng.IntN(61), 0
	for range 1 + rng.IntN(2) {
		b := vrp.Break{Start: from, Duration: 60 * (15 + rng.IntN(16))}
		b.End = min(end, max(prevEnd, b.Start+b.Duration+60*(30+rng.IntN(61))))
		if b.Start+b.Duration > b.End {
			break
		}
		out = append(out, b)
		from, prevEnd = b.Start+3600, b.End
	}
	return out
}
