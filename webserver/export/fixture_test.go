package export

import (
	"fmt"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
)

// fixtureCreated is the creation time of the fixtures' optimizations.
var fixtureCreated = time.Date(2026, 11, 23, 6, 45, 0, 0, time.UTC)

// Text that looks like our users' data: several languages and scripts,
// phone numbers in international form, notes with punctuation.
var (
	firstNames = []string{"Anna", "Jürgen", "Zoë", "François", "Łukasz", "Søren", "María José", "Ayşe", "Nguyễn", "Olumide", "Chloé", "Mehmet", "Björn", "Ingrid", "Raúl"}
	lastNames  = []string{"Müller", "Dubois", "García", "Kowalski", "Øvergaard", "Yılmaz", "Okafor", "O'Brien", "Van der Berg", "Schröder", "Nowak", "Fernández"}
	companies  = []string{"Bäckerei Schmidt", "Café de l'Opéra", "Müller & Söhne GmbH", "Pharmacie \"Centrale\"", "Tienda La Esquina, S.L.", "Kiosk am Markt", "Blumen Ødegaard", "Zahnarztpraxis Dr. Weiß"}
	streets    = []string{"Hauptstraße", "Rue de la République", "Calle Mayor", "Karl-Marx-Allee", "Königsallee", "Boulevard Saint-Germain", "Friedrichstraße", "Oranienstraße"}
	cities     = []string{"10115 Berlin", "10178 Berlin", "10245 Berlin", "10997 Berlin", "12043 Berlin", "13353 Berlin"}
	notes      = []string{
		"Ring twice; deliver to the back door (yard, 2nd gate).",
		"Fragile: glassware. Keep upright!",
		"Leave with the neighbour at no. 14 if nobody answers.",
		"Call 10 min before arrival — the street is closed to trucks after 11:00.",
		"Loading ramp on the left, ask for \"Herr Özdemir\".",
		"Cash on delivery: 42,50 €\nReceipt required.",
		"Dog on premises 🐕, stay in the van until called.",
	}
)

// fixture builds a realistic optimization and its result: stops orders over
// routes vehicles that are used (driving order, arrival times, distances),
// two unused vehicles, and unassigned extra orders. Every text field is
// filled. One route runs past midnight (a night shift), so times beyond 24:00
// are exercised. The same arguments give the same fixture.
func fixture(stops, routes, unassigned int) (*v1alpha1.Optimization, *v1alpha1.Result) {
	rng := rand.New(rand.NewPCG(uint64(stops), uint64(routes)))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	name := "Tuesday deliveries"
	label := "Depot Berlin-Lichtenberg"
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "3f0c1a2e-6b1d-4d7e-9c55-0d1f2a3b4c5d",
			CreationTimestamp: metav1.NewTime(fixtureCreated),
		},
		Spec: v1alpha1.OptimizationSpec{
			Name:  &name,
			Depot: v1alpha1.Depot{Label: &label, Latitude: ptr(52.5145), Longitude: ptr(13.4993)},
		},
	}
	res := &v1alpha1.Result{
		ID:       opt.Name,
		Status:   v1alpha1.StateCompleted,
		Strategy: v1alpha1.StrategyOptimized,
	}

	vehicles := routes + 2
	for v := range vehicles {
		driver := pick(firstNames) + " " + pick(lastNames)
		opt.Spec.Vehicles = append(opt.Spec.Vehicles, v1alpha1.Vehicle{
			ID: fmt.Sprintf("Van %02d", v+1), Capacity: float64(120 + 30*(v%3)), Driver: &driver,
			ShiftStart: "07:00", ShiftEnd: "18:00",
		})
	}

	newOrder := func(i int) v1alpha1.Order {
		o := v1alpha1.Order{
			ID:             fmt.Sprintf("ORD-2026-%05d", i+1),
			Address:        ptr(fmt.Sprintf("%s %d", pick(streets), 1+rng.IntN(180))),
			City:           ptr("Berlin"),
			PostalCode:     ptr(pick(cities)[:5]),
			Country:        ptr("Germany"),
			Latitude:       ptr(52.45 + rng.Float64()*0.15),
			Longitude:      ptr(13.25 + rng.Float64()*0.35),
			Demand:         ptr(float64(1 + rng.IntN(6))),
			ServiceMinutes: ptr(float64(3 + rng.IntN(12))),
			Customer:       ptr(pick(firstNames) + " " + pick(lastNames) + " / " + pick(companies)),
			Phone:          ptr(fmt.Sprintf("+49 30 %07d", rng.IntN(10_000_000))),
			Notes:          ptr(pick(notes)),
		}
		if i%7 == 3 {
			o.ServiceMinutes = ptr(7.5) // fractional minutes round-trip as numbers
		}
		return o
	}

	res.KPIs.OrdersTotal = stops + unassigned
	res.KPIs.OrdersAssigned = stops
	res.KPIs.OrdersUnassigned = unassigned
	res.KPIs.VehiclesAvailable = vehicles
	res.KPIs.VehiclesUsed = routes
	next := 0
	for r := range routes {
		v := opt.Spec.Vehicles[r]
		n := stops / routes
		if r < stops%routes {
			n++
		}
		route := v1alpha1.Route{
			VehicleRef: v.ID, DriverName: v.Driver, DepartS: 7*3600 + rng.IntN(120)*60,
			Capacity: v.Capacity,
		}
		if r == routes-1 {
			route.DepartS = 20 * 3600 // the night shift: ends after midnight
		}
		t := route.DepartS
		for s := range n {
			o := newOrder(next)
			next++
			opt.Spec.Orders = append(opt.Spec.Orders, o)
			leg := int64(300 + rng.IntN(4000))
			travel := int(leg) * 3600 / 25000
			t += travel
			arrival := t
			wait := 0
			switch {
			case arrival >= 22*3600: // the night shift's late stops: no window
			case s%11 == 4:
				// Early: the window opens a few minutes after arrival.
				wait = 240 + rng.IntN(600)
				open := (arrival + wait) / 60
				o.TimeWindowStart = ptr(clock(open))
				o.TimeWindowEnd = ptr(clock(open + 120))
			case s%3 == 0:
				o.TimeWindowEnd = ptr(clock(arrival/3600*60 + 60 + 30*rng.IntN(3)))
			case s%3 == 1:
				from := arrival/3600*60 - 60*rng.IntN(2)
				o.TimeWindowStart = ptr(clock(from))
				o.TimeWindowEnd = ptr(clock(from + 120 + 60*rng.IntN(2)))
			}
			opt.Spec.Orders[len(opt.Spec.Orders)-1] = o
			start := arrival + wait
			depart := start + int(*o.ServiceMinutes*60)
			route.Stops = append(route.Stops, v1alpha1.Stop{
				Seq: s + 1, OrderRef: o.ID,
				Address:  *o.Address + ", " + *o.PostalCode + " " + *o.City + ", " + *o.Country,
				Latitude: *o.Latitude, Longitude: *o.Longitude,
				ArrivalS: arrival, StartS: start, DepartS: depart, WaitS: wait,
				LegDistanceM: leg, LegTravelS: travel,
				// The order's, copied as the solve copies them.
				Customer: o.Customer, TimeWindowStart: o.TimeWindowStart, TimeWindowEnd: o.TimeWindowEnd,
			})
			route.DistanceM += leg
			route.Load += *o.Demand
			t = depart
		}
		back := int64(2000 + rng.IntN(6000))
		route.DistanceM += back
		route.ReturnS = t + int(back)*3600/25000
		res.Routes = append(res.Routes, route)
		res.KPIs.DistanceM += route.DistanceM
		res.KPIs.DriveSeconds += route.DistanceM * 3600 / 25000
		res.KPIs.RouteSeconds += int64(route.ReturnS - route.DepartS)
	}
	var util float64
	for v := range vehicles {
		k := v1alpha1.VehicleKPI{VehicleRef: opt.Spec.Vehicles[v].ID, Capacity: opt.Spec.Vehicles[v].Capacity}
		if v < routes {
			r := res.Routes[v]
			k.Stops, k.DistanceM, k.Load = len(r.Stops), r.DistanceM, r.Load
			util += r.Load / r.Capacity
		}
		res.KPIs.PerVehicle = append(res.KPIs.PerVehicle, k)
	}
	if routes > 0 {
		res.KPIs.AvgUtilization = util / float64(routes)
	}
	reasons := []string{"too_large", "window_unreachable", "no_capacity", "geocode_failed", "no_time"}
	for u := range unassigned {
		o := newOrder(next)
		next++
		opt.Spec.Orders = append(opt.Spec.Orders, o)
		res.Unassigned = append(res.Unassigned, v1alpha1.Unassigned{
			OrderRef: o.ID, Reason: reasons[u%len(reasons)],
			Message: fmt.Sprintf("Order %s could not be planned: demand %g vs capacity 120 of Van 01, window %s-%s.",
				o.ID, *o.Demand, deref(o.TimeWindowStart), deref(o.TimeWindowEnd)),
		})
	}
	res.Warnings = []v1alpha1.Warning{}
	return opt, res
}

func ptr[T any](v T) *T { return &v }

// clock writes minutes since midnight as a spec time window ("HH:MM"),
// capped at 23:59 as the spec's pattern requires.
func clock(minutes int) string {
	minutes = min(minutes, 23*60+59)
	return fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
}
