// Package requests builds the optimizations that several test suites and
// benchmarks share: REST create bodies (the README's ten orders, a typical
// day's orders, requests with every text field at its maximum length) and
// the spec benchmarks store directly.
package requests

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
)

// TextLimit is an order's text field and its maximum length in characters.
type TextLimit struct {
	Name string
	Max  int
}

// OrderTextLimits are the text fields of an order with their maximum
// lengths (docs/API.md, "OrderIn"), id first.
var OrderTextLimits = []TextLimit{{"id", 80}, {"address", 300}, {"city", 100}, {"region", 100}, {"postal_code", 20}, {"country", 60}, {"customer", 200}, {"phone", 40}, {"notes", 500}}

// MaxTextPerOrder is the sum of OrderTextLimits: 1,400 characters.
const MaxTextPerOrder = 1400

// TenOrders is the README's walk-through request: 10 orders with
// coordinates around central Berlin and a fleet of 2.
func TenOrders(solverSeconds int) map[string]any {
	orders := []map[string]any{}
	coords := [][2]float64{
		{52.5301, 13.3849}, {52.5163, 13.3777}, {52.5076, 13.4370}, {52.4990, 13.4180}, {52.5250, 13.4100},
		{52.5400, 13.4120}, {52.5120, 13.3900}, {52.5050, 13.3600}, {52.5350, 13.3950}, {52.5200, 13.4400},
	}
	for i, c := range coords {
		o := map[string]any{"id": fmt.Sprintf("A-%d", i+1), "latitude": c[0], "longitude": c[1], "demand": 2}
		if i%3 == 0 {
			o["time_window_start"] = "09:00"
			o["time_window_end"] = "12:00"
		}
		orders = append(orders, o)
	}
	return map[string]any{
		"name":    "Integration run",
		"depot":   map[string]any{"label": "Depot", "latitude": 52.5200, "longitude": 13.4050},
		"orders":  orders,
		"fleet":   map[string]any{"count": 2, "capacity": 12},
		"options": map[string]any{"solver_seconds": solverSeconds},
	}
}

// AtLimits is a request of n orders with coordinates around Berlin whose
// text fields are all at their maximum length: the first wide characters of
// each order (counted over its fields in OrderTextLimits order) are
// wideChar, the rest ASCII. Ids stay unique whatever wide is.
func AtLimits(n, wide int, wideChar string) map[string]any {
	orders := make([]map[string]any, 0, n)
	for i := range n {
		o := map[string]any{
			"latitude":  52.40 + float64(i%25)*0.01,
			"longitude": 13.20 + float64(i/25)*0.01,
		}
		left := wide
		for _, f := range OrderTextLimits {
			prefix := ""
			if f.Name == "id" {
				prefix = fmt.Sprintf("%04d-", i)
			}
			free := f.Max - len(prefix)
			w := min(left, free)
			left -= w
			o[f.Name] = prefix + strings.Repeat(wideChar, w) + strings.Repeat("x", free-w)
		}
		orders = append(orders, o)
	}
	return map[string]any{
		"name":    "Limits " + strings.Repeat("n", 100),
		"depot":   map[string]any{"label": "Depot", "latitude": 52.52, "longitude": 13.405},
		"orders":  orders,
		"fleet":   map[string]any{"count": 10, "capacity": 60},
		"options": map[string]any{"solver_seconds": 1},
	}
}

// Incompressible is AtLimits(n, …) whose first random characters of each
// order (counted as AtLimits counts wide ones) are drawn at random from
// CJK Unified Ideographs, 3 bytes each in UTF-8, so that gzip can shrink
// them to about three fifths: the request whose stored input is largest
// for its length. The same n, random and seed give the same request, and
// each order's characters for random+1 start with those for random, so the
// stored size grows with random.
func Incompressible(n, random int, seed uint64) map[string]any {
	req := AtLimits(n, 0, "x")
	for i, o := range req["orders"].([]map[string]any) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		left := random
		for _, f := range OrderTextLimits {
			v := o[f.Name].(string)
			prefix := ""
			if f.Name == "id" {
				prefix = v[:5]
			}
			free := f.Max - len(prefix)
			w := min(left, free)
			left -= w
			var b strings.Builder
			b.WriteString(prefix)
			for range w {
				b.WriteRune(rune(0x4E00 + rng.IntN(0x9FFF-0x4E00)))
			}
			b.WriteString(strings.Repeat("x", free-w))
			o[f.Name] = b.String()
		}
	}
	return req
}

// Typical is a realistic request of n orders: short addresses, customer
// names and notes, coordinates given.
func Typical(n int) map[string]any {
	orders := make([]map[string]any, 0, n)
	for i := range n {
		orders = append(orders, map[string]any{
			"id":          fmt.Sprintf("ORD-2026-%05d", i),
			"address":     fmt.Sprintf("Friedrichstraße %d", i%200+1),
			"city":        "Berlin",
			"postal_code": "10117",
			"country":     "DE",
			"latitude":    52.40 + float64(i%25)*0.01,
			"longitude":   13.20 + float64(i/25)*0.01,
			"demand":      2,
			"customer":    fmt.Sprintf("Müller & Söhne GmbH %d", i),
			"phone":       "+49 30 1234567",
			"notes":       "Hintereingang, bitte klingeln",
		})
	}
	return map[string]any{
		"name":    "Typical day",
		"depot":   map[string]any{"label": "Depot", "latitude": 52.52, "longitude": 13.405},
		"orders":  orders,
		"fleet":   map[string]any{"count": 20, "capacity": 60},
		"options": map[string]any{"solver_seconds": 1},
	}
}

// Spec is an Optimization spec named name with n orders shaped like the
// REST API's (an address, coordinates, a customer and a phone, a time
// window on every third) and a fleet of 10: what benchmarks store directly
// with the Kubernetes client.
func Spec(name string, n int) v1alpha1.OptimizationSpec {
	s := v1alpha1.OptimizationSpec{
		Name:  ptr.To(name),
		Depot: v1alpha1.Depot{Label: ptr.To("Depot"), Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
		Fleet: &v1alpha1.Fleet{Count: 10, Capacity: 100, ShiftStart: "08:00", ShiftEnd: "18:00", NamePrefix: "Van"},
	}
	for i := range n {
		o := v1alpha1.Order{
			ID:             "ORD-" + strconv.Itoa(100000+i),
			Address:        ptr.To(fmt.Sprintf("Musterstraße %d", i%200+1)),
			PostalCode:     ptr.To(fmt.Sprintf("10%03d", i%1000)),
			City:           ptr.To("Berlin"),
			Country:        ptr.To("DE"),
			Latitude:       ptr.To(52.45 + float64(i%97)/1000),
			Longitude:      ptr.To(13.30 + float64(i%89)/1000),
			Demand:         ptr.To(1.0),
			ServiceMinutes: ptr.To(5.0),
			Customer:       ptr.To(fmt.Sprintf("Customer %d", i)),
			Phone:          ptr.To("+49 30 1234567"),
		}
		if i%3 == 0 {
			o.TimeWindowStart, o.TimeWindowEnd = ptr.To("09:00"), ptr.To("12:00")
		}
		s.Orders = append(s.Orders, o)
	}
	return s
}
