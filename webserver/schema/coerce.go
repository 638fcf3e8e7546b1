package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is pydantic v2's lax mode for the Python values json.loads gives
// (pydantic-core src/input/input_python.rs and src/input/shared.rs), plus the
// constraint checks of its constrained str/int/float validators.

// TimePattern is the pattern of every HH:MM field (24-hour, zero-padded,
// 00:00 to 23:59). It is reported in string_pattern_mismatch's ctx.
const TimePattern = `^([01][0-9]|2[0-3]):[0-5][0-9]$`

func isHHMM(s string) bool {
	if len(s) != 5 || s[2] != ':' {
		return false
	}
	h0, h1, m0, m1 := s[0], s[1], s[3], s[4]
	hourOK := (h0 == '0' || h0 == '1') && isDigit(h1) || h0 == '2' && h1 >= '0' && h1 <= '3'
	return hourOK && m0 >= '0' && m0 <= '5' && isDigit(m1)
}

// strRule holds the constraints of a str field; zero values mean none.
type strRule struct {
	min, max int
	hhmm     bool
}

// str validates a str field: only Python str is accepted (lax mode does not
// turn numbers into strings), lengths count code points.
func (e *errs) str(loc []any, in any, r strRule) (string, bool) {
	s, ok := in.(string)
	if !ok {
		e.add(loc, "string_type", msgStringType, in, nil)
		return "", false
	}
	n := utf8.RuneCountInString(s)
	switch {
	case r.min > 0 && n < r.min:
		e.add(loc, "string_too_short", fmt.Sprintf("String should have at least %d character%s", r.min, plural(r.min)), in, map[string]any{"min_length": r.min})
		return "", false
	case r.max > 0 && n > r.max:
		e.add(loc, "string_too_long", fmt.Sprintf("String should have at most %d character%s", r.max, plural(r.max)), in, map[string]any{"max_length": r.max})
		return "", false
	case r.hhmm && !isHHMM(s):
		e.add(loc, "string_pattern_mismatch", "String should match pattern '"+TimePattern+"'", in, map[string]any{"pattern": TimePattern})
		return "", false
	}
	return s, true
}

// optStr validates a `str | None` field.
func (e *errs) optStr(loc []any, in any, r strRule) (*string, bool) {
	if in == nil {
		return nil, true
	}
	s, ok := e.str(loc, in, r)
	if !ok {
		return nil, false
	}
	return &s, true
}

// literal validates a Literal[...] of strings.
func (e *errs) literal(loc []any, in any, choices ...string) (string, bool) {
	if s, ok := in.(string); ok {
		for _, c := range choices {
			if s == c {
				return s, true
			}
		}
	}
	expected := literalExpected(choices)
	e.add(loc, "literal_error", "Input should be "+expected, in, map[string]any{"expected": expected})
	return "", false
}

// literalExpected renders the choices as pydantic does: 'a', 'b' or 'c'.
func literalExpected(choices []string) string {
	q := make([]string, len(choices))
	for i, c := range choices {
		q[i] = "'" + c + "'"
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// fRange holds the bounds of a float field: min <= v (min < v when exclMin)
// and v <= max.
type fRange struct {
	min     float64
	exclMin bool
	max     float64
}

// float validates a float field with bounds. pydantic checks le, then ge/gt;
// ctx carries the bound as a float (90.0), the message prints it as Rust
// does (90).
func (e *errs) float(loc []any, in any, r fRange) (float64, bool) {
	f, typ := coerceFloat(in)
	switch typ {
	case "":
	case "float_type":
		e.add(loc, typ, msgFloatType, in, nil)
		return 0, false
	default:
		e.add(loc, typ, msgFloatParsing, in, nil)
		return 0, false
	}
	switch {
	case math.IsNaN(f):
		// pydantic lets NaN through every bound (all comparisons are false);
		// we refuse it: it can neither be solved nor hashed as JSON.
		e.add(loc, "finite_number", msgFiniteNumber, in, nil)
		return 0, false
	case f > r.max:
		e.add(loc, "less_than_equal", "Input should be less than or equal to "+rustFloat(r.max), in, map[string]any{"le": pyFloat(r.max)})
		return 0, false
	case r.exclMin && f <= r.min:
		e.add(loc, "greater_than", "Input should be greater than "+rustFloat(r.min), in, map[string]any{"gt": pyFloat(r.min)})
		return 0, false
	case !r.exclMin && f < r.min:
		e.add(loc, "greater_than_equal", "Input should be greater than or equal to "+rustFloat(r.min), in, map[string]any{"ge": pyFloat(r.min)})
		return 0, false
	}
	if f == 0 {
		f = 0 // no negative zero in decoded values
	}
	return f, true
}

// optFloat validates a `float | None` field.
func (e *errs) optFloat(loc []any, in any, r fRange) (*float64, bool) {
	if in == nil {
		return nil, true
	}
	f, ok := e.float(loc, in, r)
	if !ok {
		return nil, false
	}
	return &f, true
}

// rustFloat prints a float as Rust's Display does (no exponent, no ".0").
func rustFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// coerceFloat is validate_float in lax mode for a Python value: float as is,
// str parsed, int/bool converted (an int too large for a double is refused
// with float_type, as Python's float(int) overflows). It returns the error
// type, or "" when the value is accepted.
func coerceFloat(in any) (float64, string) {
	switch v := in.(type) {
	case pyFloat:
		return float64(v), ""
	case string:
		if f, ok := strAsFloat(v); ok {
			return f, ""
		}
		return 0, "float_parsing"
	case pyInt:
		f, _ := strconv.ParseFloat(string(v), 64)
		if math.IsInf(f, 0) {
			return 0, "float_type"
		}
		return f, ""
	case bool:
		if v {
			return 1, ""
		}
		return 0, ""
	}
	return 0, "float_type"
}

// strAsFloat is pydantic-core's str_as_float: Rust's f64::from_str on the
// trimmed string, else once more with the underscores removed (untrimmed).
func strAsFloat(s string) (float64, bool) {
	if f, ok := rustParseFloat(strings.TrimFunc(s, unicode.IsSpace)); ok {
		return f, true
	}
	if st, ok := stripUnderscores(s); ok {
		return rustParseFloat(st)
	}
	return 0, false
}

// rustParseFloat accepts what Rust's f64::from_str does:
// [+-]? (inf | infinity | nan | (d+ | d+.d* | d*.d+) ([eE][+-]?d+)?),
// the words case-insensitively.
func rustParseFloat(s string) (float64, bool) {
	body := s
	neg := false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch asciiLower(body) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	i, intDigits, fracDigits := 0, 0, 0
	for i < len(body) && isDigit(body[i]) {
		i, intDigits = i+1, intDigits+1
	}
	if i < len(body) && body[i] == '.' {
		i++
		for i < len(body) && isDigit(body[i]) {
			i, fracDigits = i+1, fracDigits+1
		}
	}
	if intDigits+fracDigits == 0 {
		return 0, false
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		expDigits := 0
		for i < len(body) && isDigit(body[i]) {
			i, expDigits = i+1, expDigits+1
		}
		if expDigits == 0 {
			return 0, false
		}
	}
	if i != len(body) {
		return 0, false
	}
	f, _ := strconv.ParseFloat(s, 64) // overflow gives ±Inf, as in Rust
	return f, true
}

// asciiLower lowercases ASCII letters only (Rust's eq_ignore_ascii_case).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// stripUnderscores is pydantic-core's strip_underscores: "1_000" -> "1000";
// leading, trailing or doubled underscores make the string invalid.
func stripUnderscores(s string) (string, bool) {
	if strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || !strings.Contains(s, "_") || strings.Contains(s, "__") {
		return "", false
	}
	return strings.ReplaceAll(s, "_", ""), true
}

// pyInteger is a validated Python int: its value when it fits an int64,
// otherwise only its sign matters (every bound here is small).
type pyInteger struct {
	v   int64
	big bool
}

// parseJSONInt reads a strict JSON integer (-?(0|[1-9][0-9]*)), as jiter's
// NumberInt does. tooLong reports more than 4300 digits.
func parseJSONInt(s string) (n pyInteger, ok, tooLong bool) {
	d := strings.TrimPrefix(s, "-")
	if d == "" || !isDigit(d[0]) || (d[0] == '0' && len(d) > 1) {
		return pyInteger{}, false, false
	}
	for i := 0; i < len(d); i++ {
		if !isDigit(d[i]) {
			return pyInteger{}, false, false
		}
	}
	if len(d) > pyIntMaxDigits {
		return pyInteger{}, false, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil { // out of range: keep the sign only
		if s[0] == '-' {
			return pyInteger{v: math.MinInt64, big: true}, true, false
		}
		return pyInteger{v: math.MaxInt64, big: true}, true, false
	}
	return pyInteger{v: v}, true, false
}

// strAsInt is pydantic-core's str_as_int. It returns the error type, or ""
// when the string is an integer.
func strAsInt(s string) (pyInteger, string) {
	n, ok, tooLong := parseJSONInt(s)
	if ok {
		return n, ""
	}
	if tooLong {
		return n, "int_parsing_size"
	}
	cleaned, ok := cleanIntStr(s)
	if !ok {
		return n, "int_parsing"
	}
	if n, ok, _ = parseJSONInt(cleaned); ok {
		return n, ""
	}
	return n, "int_parsing"
}

// cleanIntStr is pydantic-core's clean_int_str: trims whitespace, a leading
// '+', leading zeros, a ".000" fraction and underscores; it fails when
// nothing changed.
func cleanIntStr(s string) (string, bool) {
	lenBefore := len(s)
	s = strings.TrimFunc(s, unicode.IsSpace)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		if strings.HasPrefix(rest, "-") {
			return "", false
		}
		s = rest
	}
	neg := false
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
			return "", false
		}
		neg, s = true, rest
	}
	s, ok := stripLeadingZeros(s)
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if dec := s[i+1:]; dec != "" && strings.Trim(dec, "0") == "" {
			s = s[:i]
		}
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if st, ok := stripUnderscores(s); ok {
		return sign + st, true
	}
	if lenBefore == len(s) {
		return "", false
	}
	return sign + s, true
}

// stripLeadingZeros is pydantic-core's strip_leading_zeros.
func stripLeadingZeros(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	switch c := s[0]; {
	case c == '0':
	case c >= '1' && c <= '9' || c == '-':
		return s, true
	default:
		return "", false
	}
	for i, c := range s[1:] {
		i++
		switch {
		case c == '0' || c == '_':
		case c >= '1' && c <= '9' || c == '-':
			return s[i:], true
		case c == '.':
			return s[i-1:], true
		default:
			return "", false
		}
	}
	return s[len(s)-1:], true
}

// floatAsInt is pydantic-core's float_as_int.
func floatAsInt(f float64) (pyInteger, string) {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return pyInteger{}, "finite_number"
	case math.Mod(f, 1) != 0:
		return pyInteger{}, "int_from_float"
	case float64(math.MinInt64) < f && f < float64(math.MaxInt64):
		return pyInteger{v: int64(f)}, ""
	}
	return pyInteger{}, "int_parsing_size"
}

// coerceInt is validate_int in lax mode for a Python value. It returns the
// error type, or "" when the value is accepted.
func coerceInt(in any) (pyInteger, string) {
	switch v := in.(type) {
	case pyInt:
		n, _, _ := parseJSONInt(string(v))
		return n, ""
	case bool:
		if v {
			return pyInteger{v: 1}, ""
		}
		return pyInteger{}, ""
	case string:
		return strAsInt(v)
	case pyFloat:
		return floatAsInt(float64(v))
	}
	return pyInteger{}, "int_type"
}

var intMsgs = map[string]string{
	"int_type":         msgIntType,
	"int_parsing":      msgIntParsing,
	"int_from_float":   msgIntFromFloat,
	"int_parsing_size": msgIntParsingSize,
	"finite_number":    msgFiniteNumber,
}

// intField validates an int field with min <= v <= max (checked le first,
// like pydantic). A max below min means no upper bound; values beyond int64
// are then clamped.
func (e *errs) intField(loc []any, in any, min, max int) (int, bool) {
	n, typ := coerceInt(in)
	if typ != "" {
		e.add(loc, typ, intMsgs[typ], in, nil)
		return 0, false
	}
	if max >= min && (n.big && n.v > 0 || n.v > int64(max)) {
		e.add(loc, "less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", max), in, map[string]any{"le": max})
		return 0, false
	}
	if n.big && n.v < 0 || n.v < int64(min) {
		e.add(loc, "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min), in, map[string]any{"ge": min})
		return 0, false
	}
	if n.v > math.MaxInt {
		return math.MaxInt, true
	}
	return int(n.v), true
}

// coerceBool is validate_bool in lax mode for a Python value. It returns the
// error type, or "" when the value is accepted.
func coerceBool(in any) (bool, string) {
	switch v := in.(type) {
	case bool:
		return v, ""
	case string:
		return strAsBool(v)
	case pyInt:
		n, _, _ := parseJSONInt(string(v))
		if n.big {
			return false, "bool_type"
		}
		switch n.v {
		case 0:
			return false, ""
		case 1:
			return true, ""
		}
		return false, "bool_parsing"
	case pyFloat:
		n, typ := floatAsInt(float64(v))
		if typ != "" {
			return false, "bool_type"
		}
		switch n.v {
		case 0:
			return false, ""
		case 1:
			return true, ""
		}
		return false, "bool_parsing"
	}
	return false, "bool_type"
}

// strAsBool is pydantic-core's str_as_bool (no trimming).
func strAsBool(s string) (bool, string) {
	switch asciiLower(s) {
	case "0", "f", "n", "no", "off", "false":
		return false, ""
	case "1", "t", "y", "on", "yes", "true":
		return true, ""
	}
	return false, "bool_parsing"
}

// boolField validates a bool field.
func (e *errs) boolField(loc []any, in any) (bool, bool) {
	b, typ := coerceBool(in)
	switch typ {
	case "":
		return b, true
	case "bool_parsing":
		e.add(loc, typ, msgBoolParsing, in, nil)
	default:
		e.add(loc, typ, msgBoolType, in, nil)
	}
	return false, false
}
