package bench

import (
	"math/rand/v2"

	"routeopt.io/routeopt/solver/vrp"
)

// RealisticFleet is Realistic with every constraint of a real fleet on:
// a 30-minute break between 11:30 and 14:00 for every vehicle; a third of
// the orders with a 2 h window get a second one three hours later; a fifth
// of the orders need a fridge (7 of the 20 vehicles have one) and one in
// twenty a tail lift (4 vehicles); weight and volume beside the demand;
// routes of at most 8 h 30 min, 45 stops and 250 km; priorities on a
// third of the orders; four drivers start from home (two extra locations,
// 1.5 km from an order each) and two end their route at the last stop.
func RealisticFleet(seed uint64) *vrp.Problem {
	p := Realistic(seed)
	rng := rand.New(rand.NewPCG(seed, 23))
	n := len(p.Orders)
	p.Dimensions = []string{"weight_kg", "volume_l"}
	p.ExtraLocations = 2
	homes := []int{1 + rng.IntN(n), 1 + rng.IntN(n)} // the orders the homes lie near
	extend := func(m [][]int, offset int) [][]int {
		size := n + 1 + len(homes)
		out := make([][]int, size)
		for a := range size {
			out[a] = make([]int, size)
			for b := range size {
				switch {
				case a == b:
				case a > n && b > n:
					out[a][b] = m[homes[a-n-1]][homes[b-n-1]] + 2*offset
				case a > n:
					out[a][b] = m[homes[a-n-1]][b] + offset
				case b > n:
					out[a][b] = m[a][homes[b-n-1]] + offset
				default:
					out[a][b] = m[a][b]
				}
			}
		}
		return out
	}
	p.Distance, p.Duration = extend(p.Distance, 1500), extend(p.Duration, 180)
	for i := range p.Orders {
		o := &p.Orders[i]
		if o.WindowEnd-o.WindowStart == 2*3600 && o.WindowStart+5*3600 <= 20*3600 && rng.IntN(3) == 0 {
			o.Windows = []vrp.Window{{Start: o.WindowStart, End: o.WindowEnd}, {Start: o.WindowStart + 3*3600, End: o.WindowEnd + 3*3600}}
			o.WindowEnd += 3 * 3600
		}
		switch x := rng.IntN(20); {
		case x < 4:
			o.Skills = []string{"fridge"}
		case x < 5:
			o.Skills = []string{"tail_lift"}
		}
		o.Loads = []float64{o.Demand*15 + float64(rng.IntN(30)), float64(20 + rng.IntN(280))}
		if rng.IntN(3) == 0 {
			o.Priority = rng.IntN(101)
		}
	}
	for v := range p.Vehicles {
		veh := &p.Vehicles[v]
		kind := v % 3
		veh.Capacities = []float64{[]float64{1500, 2500, 3500}[kind], []float64{12000, 18000, 25000}[kind]}
		if v%3 == 0 || v == 4 {
			veh.Skills = append(veh.Skills, "fridge")
		}
		if v%5 == 1 {
			veh.Skills = append(veh.Skills, "tail_lift")
		}
		veh.Breaks = []vrp.Break{{Start: 11*3600 + 1800, End: 14 * 3600, Duration: 1800}}
		veh.MaxDuration, veh.MaxStops, veh.MaxDistance = 8*3600+1800, 45, 250000
		switch v {
		case 0, 1:
			veh.Start = n + 1
		case 2, 3:
			veh.Start, veh.End = n+2, n+2
		case 4, 5:
			veh.OpenEnd = true
		}
	}
	return p
}
