package bench

import (
	"strings"
	"testing"

	"routeopt.io/routeopt/solver/vrp"
)

// checkedPlan is a small problem using every rule of the model and a plan
// that keeps them all, worked out by hand. Locations lie on a line at
// positions 0 (depot), 10, 20, 30 (orders 0, 1, 2) and 5 (an extra
// location); a unit of position is 100 m and 10 s of driving.
//
// Vehicle 0 starts at the extra location, needs skill "cold" for order 0,
// has a break of 60 s in [300, 500], at most 2 stops, 1,000 s and
// 10,000 m. It leaves at 0, drives 50 s to order 0 (served 50-100), 100 s
// to order 1 (its first window [100, 200]: served 200-250), takes its
// break at order 1 (300-360) and drives 200 s back to the depot: return
// 560, 3,500 m. Vehicle 1 is open: it leaves at 0, drives 300 s to order
// 2, served 300-320, and ends there: 3,000 m. Distance objective: 3,500 +
// 3,000 + vehicle 0's fixed cost 100 = 6,600.
func checkedPlan() (*vrp.Problem, *vrp.Solution) {
	pos := []int{0, 10, 20, 30, 5}
	p := &vrp.Problem{Objective: vrp.ObjectiveDistance, Dimensions: []string{"volume"}, ExtraLocations: 1}
	for _, a := range pos {
		var dist, dur []int
		for _, b := range pos {
			d := max(a-b, b-a)
			dist, dur = append(dist, 100*d), append(dur, 10*d)
		}
		p.Distance, p.Duration = append(p.Distance, dist), append(p.Duration, dur)
	}
	p.Orders = []vrp.Order{
		{Demand: 2, ServiceS: 50, WindowEnd: 1000, Loads: []float64{3}, Priority: 10, Skills: []string{"cold"}},
		{Demand: 3, ServiceS: 50, WindowStart: 100, WindowEnd: 500, Windows: []vrp.Window{{Start: 100, End: 200}, {Start: 400, End: 500}}, Loads: []float64{1}, Priority: 20},
		{Demand: 1, ServiceS: 20, WindowEnd: vrp.NoWindowEnd, Loads: []float64{1}, Priority: 5},
	}
	p.Vehicles = []vrp.Vehicle{
		{Capacity: 5, ShiftEnd: 2000, FixedCost: 100, Skills: []string{"cold"}, Capacities: []float64{4},
			Breaks: []vrp.Break{{Start: 300, End: 500, Duration: 60}}, MaxDuration: 1000, MaxDistance: 10000, MaxStops: 2, Start: 4},
		{Capacity: 5, ShiftEnd: 2000, Capacities: []float64{5}, OpenEnd: true},
	}
	sol := &vrp.Solution{
		Routes: []vrp.Route{
			{
				Vehicle: 0, Depart: 0, Return: 560, Distance: 3500, DriveS: 350, Load: 5, Loads: []float64{4},
				Stops: []vrp.Stop{
					{Order: 0, Arrival: 50, Start: 50, Depart: 100, LegDistance: 500, LegTravel: 50},
					{Order: 1, Arrival: 200, Start: 200, Depart: 250, LegDistance: 1000, LegTravel: 100},
				},
				Breaks: []vrp.PlannedBreak{{Break: 0, Start: 300, End: 360, AfterStop: 2}},
			},
			{
				Vehicle: 1, Depart: 0, Return: 320, Distance: 3000, DriveS: 300, Load: 1, Loads: []float64{1},
				Stops: []vrp.Stop{{Order: 2, Arrival: 300, Start: 300, Depart: 320, LegDistance: 3000, LegTravel: 300}},
			},
		},
		Unassigned: []vrp.Unassigned{},
		Cost:       6600,
	}
	return p, sol
}

// TestCheckSolutionAccepts: the hand-made plan and variants of it that
// keep the rules pass, with the figures worked out by hand.
func TestCheckSolutionAccepts(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *vrp.Problem, s *vrp.Solution)
		opt    CheckOptions
		want   Report
	}{
		{"the plan", func(*vrp.Problem, *vrp.Solution) {}, CheckOptions{},
			Report{Routes: 2, Served: 3, Priority: 35, Distance: 6500, Duration: 880, Cost: 6600}},
		{"duration objective", func(p *vrp.Problem, s *vrp.Solution) {
			p.Objective = vrp.ObjectiveDuration
			s.Cost = 560 + 100 + 320
		}, CheckOptions{}, Report{Routes: 2, Served: 3, Priority: 35, Distance: 6500, Duration: 880, Cost: 980}},
		{"an order unassigned", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Routes = s.Routes[:1]
			s.Unassigned = []vrp.Unassigned{{Order: 2, Reason: vrp.ReasonNoTime, Message: "no route has time for it"}}
			s.Cost = 3600
		}, CheckOptions{}, Report{Routes: 1, Served: 2, Priority: 30, Distance: 3500, Duration: 560, Cost: 3600}},
		{"the second window, after a break taken while waiting", func(_ *vrp.Problem, s *vrp.Solution) {
			// leave at 200, order 0 at 250-300, reach order 1 at 400, break
			// 400-460 there, serve it 460-510 in its window [400, 500]
			r := &s.Routes[0]
			r.Depart, r.Return = 200, 710
			r.Stops[0] = vrp.Stop{Order: 0, Arrival: 250, Start: 250, Depart: 300, LegDistance: 500, LegTravel: 50}
			r.Stops[1] = vrp.Stop{Order: 1, Arrival: 400, Start: 460, Depart: 510, Wait: 60, LegDistance: 1000, LegTravel: 100, Window: 1}
			r.Breaks = []vrp.PlannedBreak{{Break: 0, Start: 400, End: 460, AfterStop: 1}}
		}, CheckOptions{}, Report{Routes: 2, Served: 3, Priority: 35, Distance: 6500, Duration: 510 + 320, Cost: 6600}},
		{"a break at the start location", func(_ *vrp.Problem, s *vrp.Solution) {
			r := &s.Routes[0]
			r.Depart = 290
			r.Breaks[0] = vrp.PlannedBreak{Break: 0, Start: 300, End: 360, AfterStop: 0}
			r.Stops[0] = vrp.Stop{Order: 0, Arrival: 410, Start: 410, Depart: 460, LegDistance: 500, LegTravel: 50}
			r.Stops[1] = vrp.Stop{Order: 1, Arrival: 560, Start: 560, Depart: 610, LegDistance: 1000, LegTravel: 100, Window: 1, Late: 60}
			r.Return = 810
		}, CheckOptions{AllowLate: true}, Report{Routes: 2, Served: 3, Priority: 35, Distance: 6500, Duration: 520 + 320, Cost: 6600, Late: 1}},
		{"a break at the end location", func(p *vrp.Problem, s *vrp.Solution) {
			// leave order 1 at 250, back at the depot at 450, break
			// 450-510 there: the route ends at 510
			p.Vehicles[0].Breaks[0].End = 600
			r := &s.Routes[0]
			r.Breaks[0] = vrp.PlannedBreak{Break: 0, Start: 450, End: 510, AfterStop: 2}
			r.Return = 510
		}, CheckOptions{}, Report{Routes: 2, Served: 3, Priority: 35, Distance: 6500, Duration: 510 + 320, Cost: 6600}},
		{"an open route's trailing break", func(p *vrp.Problem, s *vrp.Solution) {
			p.Vehicles[1].Breaks = []vrp.Break{{Start: 320, End: 400, Duration: 30}}
			r := &s.Routes[1]
			r.Breaks = []vrp.PlannedBreak{{Break: 0, Start: 330, End: 360, AfterStop: 1}}
			r.Return = 360
		}, CheckOptions{}, Report{Routes: 2, Served: 3, Priority: 35, Distance: 6500, Duration: 560 + 360, Cost: 6600}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := checkedPlan()
			tt.change(p, s)
			if err := p.Validate(); err != nil {
				t.Fatalf("the problem is invalid: %v", err)
			}
			rep, err := CheckSolution(p, s, tt.opt)
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if rep != tt.want {
				t.Fatalf("report %+v, want %+v", rep, tt.want)
			}
		})
	}
}

// TestCheckSolutionRejects: each change breaks one rule of the hand-made
// plan (or of its problem), and the checker must say which.
func TestCheckSolutionRejects(t *testing.T) {
	route0 := func(s *vrp.Solution) *vrp.Route { return &s.Routes[0] }
	tests := []struct {
		name   string
		change func(p *vrp.Problem, s *vrp.Solution)
		opt    CheckOptions
		want   string
	}{
		// the plan's structure
		{"unknown vehicle", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Vehicle = 7 }, CheckOptions{}, "vehicle 7 does not exist"},
		{"one vehicle, two routes", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Vehicle = 0 }, CheckOptions{}, "comes after vehicle 0"},
		{"routes out of vehicle order", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[0], s.Routes[1] = s.Routes[1], s.Routes[0] }, CheckOptions{}, "comes after vehicle 1"},
		{"route without stops", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Stops = nil }, CheckOptions{}, "has no stops"},
		{"unknown order", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Stops[0].Order = 3 }, CheckOptions{}, "order 3 does not exist"},
		{"order served twice", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Stops[0].Order = 1 }, CheckOptions{}, "served twice"},
		{"order lost", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes, s.Cost = s.Routes[:1], 3600 }, CheckOptions{}, "order 2 is neither served nor unassigned"},
		{"served order unassigned", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Unassigned = []vrp.Unassigned{{Order: 0, Reason: vrp.ReasonNoTime, Message: "m"}}
		}, CheckOptions{}, "order 0 is served and listed as unassigned"},
		{"unassigned twice", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Routes, s.Cost = s.Routes[:1], 3600
			s.Unassigned = []vrp.Unassigned{{Order: 2, Reason: vrp.ReasonNoTime, Message: "m"}, {Order: 2, Reason: vrp.ReasonNoTime, Message: "m"}}
		}, CheckOptions{}, "order 2 is listed twice"},
		{"unassigned out of order", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Routes, s.Cost = nil, 0
			s.Unassigned = []vrp.Unassigned{{Order: 1, Reason: vrp.ReasonNoTime, Message: "m"}, {Order: 0, Reason: vrp.ReasonNoTime, Message: "m"}, {Order: 2, Reason: vrp.ReasonNoTime, Message: "m"}}
		}, CheckOptions{}, "order 0 after order 1"},
		{"unknown reason", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Routes, s.Cost = s.Routes[:1], 3600
			s.Unassigned = []vrp.Unassigned{{Order: 2, Reason: "bad_luck", Message: "m"}}
		}, CheckOptions{}, `reason "bad_luck"`},
		{"reason without message", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Routes, s.Cost = s.Routes[:1], 3600
			s.Unassigned = []vrp.Unassigned{{Order: 2, Reason: vrp.ReasonNoTime}}
		}, CheckOptions{}, `message ""`},
		// legs and times
		{"leg not from the start location", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].Start = 0 }, CheckOptions{}, "the matrices say 100 s and 1000 m from location 0"},
		{"leg travel", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Stops[1].LegTravel = 90 }, CheckOptions{}, "leg of 90 s and 1000 m"},
		{"leg distance", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Stops[0].LegDistance = 400 }, CheckOptions{}, "leg of 50 s and 400 m"},
		{"open route drives back", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Distance, s.Routes[1].DriveS = 6000, 600 }, CheckOptions{}, "legs add up to 3000 m and 300 s"},
		{"arrival before the drive ends", func(_ *vrp.Problem, s *vrp.Solution) {
			st := &route0(s).Stops[1]
			st.Arrival, st.Start, st.Depart = 190, 190, 240
		}, CheckOptions{}, "arrives at 190, before 200"},
		{"service before arrival", func(_ *vrp.Problem, s *vrp.Solution) {
			st := &s.Routes[1].Stops[0]
			st.Start, st.Depart, st.Wait = 290, 310, -10
		}, CheckOptions{}, "service starts at 290, before the arrival at 300"},
		{"service before the window opens", func(p *vrp.Problem, _ *vrp.Solution) {
			p.Orders[2].WindowStart = 305
		}, CheckOptions{}, "before its window 0 opens at 305"},
		{"service after the window closes", func(p *vrp.Problem, _ *vrp.Solution) {
			p.Orders[2].WindowEnd = 299
		}, CheckOptions{}, "after its window 0 closes at 299"},
		{"late but not said so", func(p *vrp.Problem, _ *vrp.Solution) {
			p.Orders[2].WindowEnd = 299
		}, CheckOptions{AllowLate: true}, "late 0 s, want 1"},
		{"late said where it is not", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Stops[0].Late = 5 }, CheckOptions{}, "late 5 s, want 0"},
		{"wrong window named", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Stops[1].Window = 1 }, CheckOptions{}, "before its window 1 opens at 400"},
		{"window that does not exist", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Stops[0].Window = 1 }, CheckOptions{}, "window 1 does not exist"},
		{"departure before the service ends", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Stops[0].Depart = 310 }, CheckOptions{}, "departs at 310, want start 300 + service 20 s"},
		{"wait", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Stops[0].Wait = 3 }, CheckOptions{}, "wait 3 s"},
		{"skill missing", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].Skills = []string{"Cold"} }, CheckOptions{}, `needs skill "cold"`},
		// the shift
		{"departure before the shift", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].ShiftStart = 10 }, CheckOptions{}, "departs at 0, before its shift starts at 10"},
		{"return after the shift", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].ShiftEnd = 550 }, CheckOptions{}, "after its shift ends at 550"},
		{"return before the last leg ends", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Return = 550 }, CheckOptions{}, "returns at 550: leaving the last stop at 250, the 200 s leg"},
		{"a break at the end location before the arrival", func(_ *vrp.Problem, s *vrp.Solution) {
			route0(s).Breaks[0] = vrp.PlannedBreak{Break: 0, Start: 400, End: 460, AfterStop: 2}
			route0(s).Return = 460
		}, CheckOptions{}, "the 200 s leg to location 0 does not fit between its breaks"},
		{"open route returns later", func(_ *vrp.Problem, s *vrp.Solution) { s.Routes[1].Return = 330 }, CheckOptions{}, "is open: returns at 330, want"},
		// loads
		{"capacity", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].Capacity = 4.99 }, CheckOptions{}, "carries 5, above its capacity 4.99"},
		{"load dimension", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].Capacities[0] = 3.9 }, CheckOptions{}, "carries 4 of volume, above its capacity 3.9"},
		{"load reported", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Load = 4 }, CheckOptions{}, "reports a load of 4, the demands add up to 5"},
		{"loads reported", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Loads[0] = 3 }, CheckOptions{}, "reports 3 of volume"},
		{"loads missing", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Loads = nil }, CheckOptions{}, "reports 0 loads for 1 dimensions"},
		// route limits and totals
		{"stops limit", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].MaxStops = 1 }, CheckOptions{}, "2 stops, above its limit of 1"},
		{"duration limit", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].MaxDuration = 559 }, CheckOptions{}, "lasts 560 s, above its limit of 559 s"},
		{"distance limit", func(p *vrp.Problem, _ *vrp.Solution) { p.Vehicles[0].MaxDistance = 3499 }, CheckOptions{}, "drives 3500 m, above its limit of 3499 m"},
		{"distance reported", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Distance = 1500 }, CheckOptions{}, "reports 1500 m and 350 s of driving"},
		{"driving reported", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).DriveS = 150 }, CheckOptions{}, "reports 3500 m and 150 s of driving"},
		{"cost", func(_ *vrp.Problem, s *vrp.Solution) { s.Cost = 6500 }, CheckOptions{}, "the plan's cost 6500 differs from the recomputed 6600"},
		{"cost of the duration objective", func(p *vrp.Problem, _ *vrp.Solution) { p.Objective = vrp.ObjectiveDuration }, CheckOptions{}, "recomputed 980"},
		// breaks
		{"break missing", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Breaks = nil }, CheckOptions{}, "plans 0 breaks, the vehicle must take 1"},
		{"break of a vehicle without any", func(_ *vrp.Problem, s *vrp.Solution) {
			s.Routes[1].Breaks = []vrp.PlannedBreak{{Break: 0, Start: 320, End: 380, AfterStop: 1}}
		}, CheckOptions{}, "plans 1 breaks, the vehicle must take 0"},
		{"break too short", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Breaks[0].End = 350 }, CheckOptions{}, "lasts 50 s (300 to 350), want 60 s"},
		{"break outside its window", func(_ *vrp.Problem, s *vrp.Solution) {
			route0(s).Breaks[0] = vrp.PlannedBreak{Break: 0, Start: 250, End: 310, AfterStop: 2}
		}, CheckOptions{}, "(250 to 310) is outside its window 300 to 500"},
		{"break over a drive", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Breaks[0].AfterStop = 1 }, CheckOptions{}, "after 1 stops) is not where the vehicle stands"},
		{"break over a service", func(p *vrp.Problem, s *vrp.Solution) {
			p.Vehicles[0].Breaks[0].Start = 200
			route0(s).Breaks[0] = vrp.PlannedBreak{Break: 0, Start: 230, End: 290, AfterStop: 2}
		}, CheckOptions{}, "(230 to 290, after 2 stops) is not where the vehicle stands"},
		{"break over the drive back", func(_ *vrp.Problem, s *vrp.Solution) {
			route0(s).Breaks[0] = vrp.PlannedBreak{Break: 0, Start: 420, End: 480, AfterStop: 2}
		}, CheckOptions{}, "(420 to 480, after 2 stops) is not where the vehicle stands"},
		{"break after the end of an open route", func(p *vrp.Problem, s *vrp.Solution) {
			p.Vehicles[1].Breaks = []vrp.Break{{Start: 320, End: 400, Duration: 30}}
			s.Routes[1].Breaks = []vrp.PlannedBreak{{Break: 0, Start: 330, End: 360, AfterStop: 1}}
		}, CheckOptions{}, "is open: returns at 320, want the end of its last service or trailing break, 360"},
		{"break after a stop that does not exist", func(_ *vrp.Problem, s *vrp.Solution) { route0(s).Breaks[0].AfterStop = 3 }, CheckOptions{}, "is after stop 3 of 2"},
		{"breaks out of order", func(p *vrp.Problem, s *vrp.Solution) {
			p.Vehicles[0].Breaks = append(p.Vehicles[0].Breaks, vrp.Break{Start: 300, End: 600, Duration: 30})
			r := route0(s)
			r.Breaks = []vrp.PlannedBreak{{Break: 1, Start: 260, End: 290, AfterStop: 2}, {Break: 0, Start: 300, End: 360, AfterStop: 2}}
		}, CheckOptions{}, "is the vehicle's break 1: breaks are planned in the vehicle's order"},
		{"breaks overlapping", func(p *vrp.Problem, s *vrp.Solution) {
			p.Vehicles[0].Breaks = append(p.Vehicles[0].Breaks, vrp.Break{Start: 300, End: 600, Duration: 30})
			r := route0(s)
			r.Breaks = append(r.Breaks, vrp.PlannedBreak{Break: 1, Start: 340, End: 370, AfterStop: 2})
			r.Return = 570
		}, CheckOptions{}, "starts at 340, before the previous break ends at 360"},
		{"breaks going back a stop", func(p *vrp.Problem, s *vrp.Solution) {
			p.Vehicles[0].Breaks = []vrp.Break{{Start: 0, End: 600, Duration: 20}, {Start: 0, End: 600, Duration: 10}}
			r := route0(s)
			r.Breaks = []vrp.PlannedBreak{{Break: 0, Start: 260, End: 280, AfterStop: 2}, {Break: 1, Start: 100, End: 110, AfterStop: 1}}
		}, CheckOptions{}, "is after 1 stops, the previous break after 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, s := checkedPlan()
			tt.change(p, s)
			_, err := CheckSolution(p, s, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant one saying %q", err, tt.want)
			}
		})
	}
}

// TestCheckSolutionShape: a problem whose indices would lead the checker
// out of range, or a missing plan, is an error rather than a panic.
func TestCheckSolutionShape(t *testing.T) {
	for name, change := range map[string]func(p *vrp.Problem){
		"short matrix":           func(p *vrp.Problem) { p.Distance = p.Distance[:4] },
		"ragged matrix":          func(p *vrp.Problem) { p.Duration[2] = p.Duration[2][:3] },
		"start out of range":     func(p *vrp.Problem) { p.Vehicles[0].Start = 5 },
		"capacities missing":     func(p *vrp.Problem) { p.Vehicles[1].Capacities = nil },
		"loads of another shape": func(p *vrp.Problem) { p.Orders[1].Loads = []float64{1, 2} },
	} {
		p, s := checkedPlan()
		change(p)
		if _, err := CheckSolution(p, s, CheckOptions{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	p, _ := checkedPlan()
	if _, err := CheckSolution(p, nil, CheckOptions{}); err == nil {
		t.Error("no plan: accepted")
	}
}
