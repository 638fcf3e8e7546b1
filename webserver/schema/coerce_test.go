package schema

import (
	"math"
	"testing"
)

// Lax-mode coercions of strings, as pydantic-core's str_as_int,
// str_as_float and str_as_bool.
func TestStrAsInt(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		typ  string
	}{
		{"2", 2, ""}, {"-7", -7, ""}, {" 5 ", 5, ""}, {"+5", 5, ""}, {"007", 7, ""}, {"2.0", 2, ""}, {"2.000", 2, ""},
		{"1_000", 1000, ""}, {"0.0", 0, ""}, {"-0", 0, ""},
		{"2.5", 0, "int_parsing"}, {"two", 0, "int_parsing"}, {"", 0, "int_parsing"}, {"2.", 0, "int_parsing"},
		{"1e3", 0, "int_parsing"}, {"+-1", 0, "int_parsing"}, {"--1", 0, "int_parsing"}, {"1__0", 0, "int_parsing"},
		{"_1", 0, "int_parsing"}, {"0x10", 0, "int_parsing"}, {"٣", 0, "int_parsing"},
	}
	for _, tc := range cases {
		n, typ := strAsInt(tc.in)
		if typ != tc.typ || (typ == "" && n.v != tc.want) {
			t.Errorf("strAsInt(%q) = %d %q, want %d %q", tc.in, n.v, typ, tc.want, tc.typ)
		}
	}
	if n, typ := strAsInt("99999999999999999999999"); typ != "" || !n.big || n.v <= 0 {
		t.Errorf("big int: %+v %q", n, typ)
	}
}

func TestStrAsFloat(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5", 5, true}, {" 5 ", 5, true}, {"-2.5", -2.5, true}, {"+.5", 0.5, true}, {"5.", 5, true}, {"1e3", 1000, true},
		{"1E-2", 0.01, true}, {"1_000.5", 1000.5, true}, {"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true},
		{"north", 0, false}, {"", 0, false}, {".", 0, false}, {"1e", 0, false}, {"0x10", 0, false}, {"1__0", 0, false},
		{" 1_0", 0, false}, {"1,5", 0, false},
	}
	for _, tc := range cases {
		f, ok := strAsFloat(tc.in)
		if ok != tc.ok || (ok && f != tc.want) {
			t.Errorf("strAsFloat(%q) = %v %v, want %v %v", tc.in, f, ok, tc.want, tc.ok)
		}
	}
	if f, ok := strAsFloat("NaN"); !ok || !math.IsNaN(f) {
		t.Errorf("NaN: %v %v", f, ok)
	}
}

func TestCoerceBool(t *testing.T) {
	cases := []struct {
		in   any
		want bool
		typ  string
	}{
		{true, true, ""}, {"yes", true, ""}, {"ON", true, ""}, {"t", true, ""}, {"1", true, ""}, {"Y", true, ""},
		{"no", false, ""}, {"off", false, ""}, {"F", false, ""}, {"0", false, ""}, {"FALSE", false, ""},
		{pyInt("0"), false, ""}, {pyInt("1"), true, ""}, {pyFloat(1), true, ""},
		{"maybe", false, "bool_parsing"}, {" true", false, "bool_parsing"}, {"", false, "bool_parsing"},
		{pyInt("2"), false, "bool_parsing"}, {pyFloat(2), false, "bool_parsing"},
		{pyFloat(0.5), false, "bool_type"}, {nil, false, "bool_type"}, {[]any{}, false, "bool_type"},
		{pyInt("100000000000000000000"), false, "bool_type"},
	}
	for _, tc := range cases {
		b, typ := coerceBool(tc.in)
		if typ != tc.typ || (typ == "" && b != tc.want) {
			t.Errorf("coerceBool(%#v) = %v %q, want %v %q", tc.in, b, typ, tc.want, tc.typ)
		}
	}
}
