package browser

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Coordinate-only problems (with addresses for the tables, which the solver
// does not geocode when coordinates are given), so that dev mode needs no
// geocoder.

var berlin = depot{Label: "Depot", Latitude: ptr(52.5200), Longitude: ptr(13.4050)}

// smallProblem is solved by the baseline strategy (fast and reproducible)
// into two routes, with time windows, customers, a late stop (A-4's window
// closes before the first vehicle gets there: baseline does not enforce
// windows) and an order too large for any vehicle.
func smallProblem(name string) problem {
	return problem{
		Name:  ptr(name),
		Depot: berlin,
		Orders: []order{
			{ID: "A-1", Address: "Invalidenstraße 10, 10115 Berlin", Latitude: 52.5301, Longitude: 13.3849, TimeWindowStart: "09:00", TimeWindowEnd: "12:00", Customer: "Bäckerei Weber"},
			{ID: "A-2", Address: "Wilhelmstraße 5, 10117 Berlin", Latitude: 52.5163, Longitude: 13.3777},
			{ID: "A-3", Address: "Köpenicker Straße 40, 10179 Berlin", Latitude: 52.5076, Longitude: 13.4370, Customer: "Café Nord"},
			{ID: "A-4", Address: "Oranienstraße 12, 10999 Berlin", Latitude: 52.4990, Longitude: 13.4180, TimeWindowStart: "08:00", TimeWindowEnd: "08:10"},
			{ID: "A-5", Address: "Karl-Liebknecht-Straße 3, 10178 Berlin", Latitude: 52.5250, Longitude: 13.4100},
			{ID: "A-6", Address: "Schönhauser Allee 80, 10439 Berlin", Latitude: 52.5400, Longitude: 13.4120, TimeWindowStart: "13:00", TimeWindowEnd: "16:00", Customer: "Blumen & Co <Prenzlauer Berg>"},
			{ID: "A-7", Address: "Friedrichstraße 100, 10117 Berlin", Latitude: 52.5110, Longitude: 13.3900},
			{ID: "BIG-1", Address: "Alexanderplatz 1, 10178 Berlin", Latitude: 52.5219, Longitude: 13.4132, Demand: ptr(50.0)},
		},
		Fleet:   &fleet{Count: 2, Capacity: 5},
		Options: &options{Strategy: "baseline"},
	}
}

// tinyProblem is one order, solved at once: filler for the list's pages.
func tinyProblem(name string) problem {
	return problem{
		Name:    ptr(name),
		Depot:   berlin,
		Orders:  []order{{ID: "T-1", Latitude: 52.5301, Longitude: 13.3849}},
		Fleet:   &fleet{Count: 1, Capacity: 10},
		Options: &options{Strategy: "baseline"},
	}
}

// failingProblem fails in geocoding: the depot has only an address and dev
// mode has no geocoder (error_code geocoding_unavailable), the cheapest
// real failure there is.
func failingProblem(name string) problem {
	return problem{
		Name:   ptr(name),
		Depot:  depot{Label: "Depot", Address: "Alexanderplatz 1, 10178 Berlin"},
		Orders: []order{{ID: "F-1", Latitude: 52.5301, Longitude: 13.3849}},
		Fleet:  &fleet{Count: 1, Capacity: 10},
	}
}

// slowProblem asks the solver for 30 s (the tests cancel it long before):
// it stays queued or running while the page cancels it.
func slowProblem(name string) problem {
	rng := rand.New(rand.NewPCG(7, 7))
	orders := make([]order, 150)
	for i := range orders {
		orders[i] = order{ID: fmt.Sprintf("S-%03d", i+1), Latitude: 52.45 + rng.Float64()*0.14, Longitude: 13.28 + rng.Float64()*0.25}
	}
	return problem{
		Name:    ptr(name),
		Depot:   berlin,
		Orders:  orders,
		Fleet:   &fleet{Count: 10, Capacity: 20},
		Options: &options{SolverSeconds: 30},
	}
}

// cityPlan is the README's picture: 200 orders in Berlin from a fixed
// seed, 8 vehicles of capacity 26 (7 could carry only 182, so all 8 are
// needed), a few time windows and customers.
func cityPlan() problem {
	rng := rand.New(rand.NewPCG(2026, 11))
	streets := []string{"Lindenweg", "Gartenstraße", "Schulstraße", "Bahnhofstraße", "Parkallee", "Mühlenweg", "Am Markt", "Ringstraße", "Uferweg", "Bergstraße"}
	customers := []string{"Bäckerei Weber", "Café Nord", "Apotheke am Markt", "Blumen Krause", "Buchhandlung Lenz", "Feinkost Yilmaz", "Praxis Dr. Haas", "Kiosk 24"}
	windows := [][2]string{{"08:00", "11:00"}, {"09:00", "12:00"}, {"13:00", "17:00"}}
	orders := make([]order, 200)
	for i := range orders {
		// Spread evenly over an ellipse of about 26 x 13 km around the
		// depot, the shape of the wide map.
		r := 0.1 + 0.9*math.Sqrt(rng.Float64())
		a := rng.Float64() * 2 * math.Pi
		o := order{
			ID:        fmt.Sprintf("ORD-%03d", i+1),
			Address:   fmt.Sprintf("%s %d, Berlin", streets[rng.IntN(len(streets))], 1+rng.IntN(120)),
			Latitude:  52.5200 + 0.06*r*math.Sin(a),
			Longitude: 13.4050 + 0.19*r*math.Cos(a),
		}
		if i%9 == 0 {
			w := windows[rng.IntN(len(windows))]
			o.TimeWindowStart, o.TimeWindowEnd = w[0], w[1]
		}
		if i%4 == 0 {
			o.Customer = customers[rng.IntN(len(customers))]
		}
		orders[i] = o
	}
	return problem{
		Name:    ptr("Tuesday deliveries, Berlin"),
		Depot:   depot{Label: "Depot Mitte", Latitude: ptr(52.5200), Longitude: ptr(13.4050)},
		Orders:  orders,
		Fleet:   &fleet{Count: 8, Capacity: 26},
		Options: &options{SolverSeconds: 8},
	}
}
