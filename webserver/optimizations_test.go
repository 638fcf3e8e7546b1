package webserver

import (
	"encoding/json"
	"testing"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/requests"
	rest "routeopt.io/routeopt/webserver/schema"
)

// A create stores the orders and vehicles apart from the Optimization, in
// an input document whose SHA-256 and counts the spec records; decoded
// again, it gives back exactly the request's orders and vehicles.
func TestNewOptimizationStoresTheInputApart(t *testing.T) {
	body := `{"name":"G","depot":{"label":"D<","address":"Unter den Linden 1"},"orders":[{"id":"a<\"é","address":"Alexanderplatz 1","time_window_start":"09:00","time_window_end":"10:00","notes":"x"},{"id":"b","latitude":52.5,"longitude":13.4,"demand":2.5}],"vehicles":[{"id":"v1","capacity":3,"driver":"Anna"}],"options":{"strategy":"baseline","solver_seconds":2}}`
	in, details := rest.DecodeOptimizationIn([]byte(body))
	if len(details) > 0 {
		t.Fatal(details)
	}
	opt, data, err := newOptimization("tenant-it-6e3798b6", "golden-key-0001", in)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Spec.Orders != nil || opt.Spec.Vehicles != nil {
		t.Errorf("spec lists orders or vehicles inline: %+v", opt.Spec)
	}
	ref := opt.Spec.Input
	want := v1alpha1.InputRef{Name: opt.Name + "-input", Orders: 2, Vehicles: 1, SHA256: v1alpha1.SHA256Hex(data)}
	if ref == nil || *ref != want {
		t.Fatalf("spec.input %+v, want %+v", ref, want)
	}
	if opt.Spec.OrderTotal() != 2 || opt.Spec.VehicleTotal() != 1 {
		t.Errorf("totals %d orders, %d vehicles", opt.Spec.OrderTotal(), opt.Spec.VehicleTotal())
	}
	doc, err := v1alpha1.DecodeInput(map[string][]byte{v1alpha1.InputDataKey: data}, nil, ref.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mustJSON(t, doc), mustJSON(t, InputFromRequest(in)); got != want {
		t.Errorf("decoded input\n%s\nwant\n%s", got, want)
	}
	if doc.Orders[0].ID != "a<\"é" || *doc.Orders[0].Demand != 1 || *doc.Orders[1].ServiceMinutes != 5 || doc.Vehicles[0].ShiftStart != "08:00" {
		t.Errorf("defaults or ids lost: %+v", doc)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// BenchmarkStoredSize is the cost of the input document (encoding and
// SHA-256) a create of the largest bodies pays.
func BenchmarkStoredSize(b *testing.B) {
	body, err := json.Marshal(requests.AtLimits(500, 1000, "é"))
	if err != nil {
		b.Fatal(err)
	}
	in, details := rest.DecodeOptimizationIn(body)
	if len(details) > 0 {
		b.Fatal(details)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := newOptimization("tenant-it-00000000", "bench-key-0001", in); err != nil {
			b.Fatal(err)
		}
	}
}
