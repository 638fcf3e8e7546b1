package schema

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Cases from CPython's Lib/test/test_json/test_fail.py (message and char
// offset), plus string-escape and encoding cases from Modules/_json.c.
func TestLoadsJSONErrors(t *testing.T) {
	cases := []struct {
		in, msg string
		pos     int
	}{
		{``, "Expecting value", 0},
		{`[`, "Expecting value", 1},
		{`[42`, "Expecting ',' delimiter", 3},
		{`[42,`, "Expecting value", 4},
		{`["`, "Unterminated string starting at", 1},
		{`["spam`, "Unterminated string starting at", 1},
		{`["spam"`, "Expecting ',' delimiter", 7},
		{`{`, "Expecting property name enclosed in double quotes", 1},
		{`{"spam"`, "Expecting ':' delimiter", 7},
		{`{"spam":`, "Expecting value", 8},
		{`{"spam":42,`, "Expecting property name enclosed in double quotes", 11},
		{`"spam`, "Unterminated string starting at", 0},
		{`[,`, "Expecting value", 1},
		{`{"spam":[}`, "Expecting value", 9},
		{`[42:`, "Expecting ',' delimiter", 3},
		{`[42,]`, "Illegal trailing comma before end of array", 3},
		{`{"spam":[42}`, "Expecting ',' delimiter", 11},
		{`{:`, "Expecting property name enclosed in double quotes", 1},
		{`[{]`, "Expecting property name enclosed in double quotes", 2},
		{`{"spam"}`, "Expecting ':' delimiter", 7},
		{`{"spam":42 "ham"`, "Expecting ',' delimiter", 11},
		{`{"spam":42,}`, "Illegal trailing comma before end of object", 10},
		{`{"spam":42 , }`, "Illegal trailing comma before end of object", 11},
		{`[123  , ]`, "Illegal trailing comma before end of array", 6},
		{`[]]`, "Extra data", 2},
		{`42,"spam"`, "Extra data", 2},
		{`"spam",42`, "Extra data", 6},
		{"\n  \n\n     !", "Expecting value", 10},
		{`{"a":01}`, "Expecting ',' delimiter", 6},
		{`-`, "Expecting value", 0},
		{`[-a]`, "Expecting value", 1},
		{`nul`, "Expecting value", 0},
		{`1.`, "Extra data", 1},
		{`1e+`, "Extra data", 1},
		{`{"a":"\q"}`, `Invalid \escape`, 6},
		{`{"a":"\uZZZZ"}`, `Invalid \uXXXX escape`, 7},
		{`"\u12"`, `Invalid \uXXXX escape`, 2},
		{`"\u1234`, `Invalid \uXXXX escape`, 2},
		{`"\ud800\uZZZZ"`, `Invalid \uXXXX escape`, 8},
		{"{\"a\":\"a\tb\"}", "Invalid control character at", 7},
		{`"abc\`, "Unterminated string starting at", 0},
		// Offsets count characters, not bytes.
		{`["é€😀",]`, "Illegal trailing comma before end of array", 6},
		{"\xef\xbb\xbf[1,]", "Illegal trailing comma before end of array", 2},
		// Not UTF-8 (FastAPI itself would answer 400 here).
		{"[\"a\xff\"]", "'utf-8' codec can't decode byte 0xff in position 3: invalid start byte", 3},
		{"[\"\xe2\x82\"]", "'utf-8' codec can't decode bytes in position 2-3: invalid continuation byte", 2},
		{"\"\xe2", "'utf-8' codec can't decode byte 0xe2 in position 1: unexpected end of data", 1},
		{strings.Repeat("[", maxJSONDepth+1), "maximum recursion depth exceeded while decoding a JSON array from a unicode string", maxJSONDepth},
		{"[" + strings.Repeat("1", 4301) + "]", "Exceeds the limit (4300 digits) for integer string conversion: value has 4301 digits; use sys.set_int_max_str_digits() to increase the limit", 1},
	}
	for _, tc := range cases {
		_, err := loadsJSON([]byte(tc.in))
		if err == nil {
			t.Errorf("%q: no error", tc.in)
			continue
		}
		if err.msg != tc.msg || err.pos != tc.pos {
			t.Errorf("%q: got %q at %d, want %q at %d", tc.in, err.msg, err.pos, tc.msg, tc.pos)
		}
	}
}

func TestLoadsJSONValues(t *testing.T) {
	cases := []struct{ in, out string }{
		{`{"b":1,"a":2,"b":3}`, `{"b":3,"a":2}`},
		{`[1, 1.0, 1e2, -0, -0.0, 12345678901234567890123]`, `[1,1.0,100.0,0,-0.0,12345678901234567890123]`},
		{`["\u00e9\ud83d\ude00\ud800x", "a\/b\n"]`, `["é😀�x","a/b\n"]`},
		{` {"a" : [ true , false , null ] } `, `{"a":[true,false,null]}`},
		{`[NaN, Infinity, -Infinity, 1e400]`, `["NaN","Infinity","-Infinity","Infinity"]`},
		{"\"\xed\xa0\x80\"", `"�"`}, // an encoded surrogate passes (surrogatepass)
	}
	for _, tc := range cases {
		v, err := loadsJSON([]byte(tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err.msg)
			continue
		}
		b, merr := json.Marshal(v)
		if merr != nil || string(b) != tc.out {
			t.Errorf("%q: got %s (%v), want %s", tc.in, b, merr, tc.out)
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{100, "100.0"}, {2.5, "2.5"}, {-0.5, "-0.5"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1.5e300, "1.5e+300"}, {123456789012345678, "1.2345678901234568e+17"},
		{math.Copysign(0, -1), "-0.0"}, {0.1, "0.1"}, {5e-324, "5e-324"},
	}
	for _, tc := range cases {
		if got := pyFloatRepr(tc.f); got != tc.want {
			t.Errorf("pyFloatRepr(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}
