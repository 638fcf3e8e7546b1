package v1alpha1

import "testing"

func TestCheckLocation(t *testing.T) {
	text := func(s string) *string { return &s }
	coord := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		name     string
		address  *string
		lat, lon *float64
		want     LocationProblem
	}{
		{"address", text("Unter den Linden 1"), nil, nil, LocationOK},
		{"coordinates", nil, coord(52.5), coord(13.4), LocationOK},
		{"both", text("Unter den Linden 1"), coord(52.5), coord(13.4), LocationOK},
		{"blank address with coordinates", text("  "), coord(0), coord(0), LocationOK},
		{"latitude alone", text("Unter den Linden 1"), coord(52.5), nil, LocationUnpaired},
		{"longitude alone", nil, nil, coord(13.4), LocationUnpaired},
		{"nothing", nil, nil, nil, LocationMissing},
		{"empty address", text(""), nil, nil, LocationMissing},
		{"blank address", text(" \t\n"), nil, nil, LocationMissing},
	} {
		if got := CheckLocation(tc.address, tc.lat, tc.lon); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
