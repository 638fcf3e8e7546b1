package schema

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file decodes request bodies the way the original FastAPI service did:
// Starlette's request.json() is CPython's json.loads on the raw bytes. The
// scanner below follows CPython's Modules/_json.c (scan_once_unicode,
// _parse_object_unicode, _parse_array_unicode, scanstring_unicode,
// _match_number_unicode) so that the error message and the character offset
// of a json_invalid detail are the ones CPython reports, and the decoded value
// has Python's shape:
//
//   - objects keep their keys in first-seen order and the last value of a
//     duplicated key (a Python dict built from the pairs);
//   - integer literals stay exact (pyInt, decimal text), other numbers are
//     IEEE doubles (pyFloat), NaN/Infinity/-Infinity are accepted as Python does;
//   - strings are decoded, a lone UTF-16 surrogate becomes U+FFFD (Go strings
//     cannot hold one; Python would keep it).

// pyObject is a decoded JSON object, a Python dict: keys in first-seen order,
// the last value of a duplicated key wins.
type pyObject struct {
	keys []string
	vals map[string]any
}

func newPyObject() *pyObject { return &pyObject{vals: map[string]any{}} }

func (o *pyObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// MarshalJSON writes the object with its keys in insertion order, as Python's
// json.dumps does for a dict.
func (o *pyObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := MarshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := MarshalNoEscape(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pyInt is a JSON integer literal kept exactly (Python ints are unbounded),
// as canonical decimal text ("-0" is stored as "0").
type pyInt string

// MarshalJSON writes the integer as Python prints it.
func (i pyInt) MarshalJSON() ([]byte, error) { return []byte(i), nil }

// pyFloat is a JSON number with a fraction or exponent (a Python float).
type pyFloat float64

// MarshalJSON writes the float as Python's repr does (100.0, 1e+16, 1e-05).
// Python's json.dumps(allow_nan=False) would fail on NaN and infinities, and
// FastAPI would answer 500; we write them as the strings "NaN", "Infinity" and
// "-Infinity" so that a detail echoing them still serialises.
func (f pyFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return MarshalNoEscape(pyFloatRepr(v))
	}
	return []byte(pyFloatRepr(v)), nil
}

// pyFloatRepr formats f like Python's repr(float): shortest round-trip digits,
// fixed notation when -4 < decimal point position <= 16, otherwise scientific
// with a signed exponent of at least two digits; integral values get ".0".
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	e := strings.IndexByte(s, 'e')
	digits := strings.Replace(s[:e], ".", "", 1)
	exp, _ := strconv.Atoi(s[e+1:])
	decpt := exp + 1
	var out string
	switch {
	case decpt > -4 && decpt <= 16 && decpt <= 0:
		out = "0." + strings.Repeat("0", -decpt) + digits
	case decpt > -4 && decpt <= 16 && decpt >= len(digits):
		out = digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	case decpt > -4 && decpt <= 16:
		out = digits[:decpt] + "." + digits[decpt:]
	default:
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		x := decpt - 1
		esign := "+"
		if x < 0 {
			esign, x = "-", -x
		}
		out += fmt.Sprintf("e%s%02d", esign, x)
	}
	return sign + out
}

// jsonError is a failed json.loads: CPython's message and the character
// offset (a Python str index) it reports.
type jsonError struct {
	msg string
	pos int
}

// maxJSONDepth bounds nesting. CPython raises RecursionError (FastAPI then
// answers 400); we report it as json_invalid with CPython's wording.
const maxJSONDepth = 1000

// pyIntMaxDigits is CPython's default int_max_str_digits: json.loads raises
// ValueError for longer integer literals.
const pyIntMaxDigits = 4300

// loadsJSON decodes body like json.loads(bytes): an optional UTF-8 BOM is
// skipped, the rest must be UTF-8.
func loadsJSON(body []byte) (any, *jsonError) {
	s := bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	s, uerr := checkUTF8(s)
	if uerr != nil {
		return nil, uerr
	}
	sc := scanner{s: s}
	v, end, err := sc.value(sc.skipWS(0))
	if err == nil {
		if end = sc.skipWS(end); end != len(s) {
			err = &jsonError{"Extra data", end}
		}
	}
	if err != nil {
		// Positions are byte offsets while scanning; Python reports characters.
		err.pos = utf8.RuneCount(s[:err.pos])
		return nil, err
	}
	return v, nil
}

// checkUTF8 validates s as CPython's decode('utf-8', 'surrogatepass') would.
// Encoded surrogates (ED A0..BF xx), which surrogatepass lets through, are
// replaced in a copy by U+FFFD (also three bytes, so offsets do not move).
// On failure the error carries the character offset of the bad byte and a
// message shaped like Python's UnicodeDecodeError.
func checkUTF8(s []byte) ([]byte, *jsonError) {
	if utf8.Valid(s) {
		return s, nil
	}
	out := s
	copied := false
	chars := 0
	for i := 0; i < len(s); chars++ {
		b := s[i]
		if b < 0x80 {
			i++
			continue
		}
		need, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case b >= 0xC2 && b <= 0xDF:
			need = 1
		case b == 0xE0:
			need, lo = 2, 0xA0
		case b >= 0xE1 && b <= 0xEF:
			need = 2
		case b == 0xF0:
			need, lo = 3, 0x90
		case b >= 0xF1 && b <= 0xF3:
			need = 3
		case b == 0xF4:
			need, hi = 3, 0x8F
		default:
			return nil, utf8Err(b, i, i+1, "invalid start byte", chars)
		}
		for k := 1; k <= need; k++ {
			if i+k >= len(s) {
				return nil, utf8Err(b, i, len(s), "unexpected end of data", chars)
			}
			c := s[i+k]
			l, h := byte(0x80), byte(0xBF)
			if k == 1 {
				l, h = lo, hi
			}
			if c < l || c > h {
				return nil, utf8Err(b, i, i+k, "invalid continuation byte", chars)
			}
		}
		if b == 0xED && s[i+1] >= 0xA0 { // surrogatepass: an encoded surrogate
			if !copied {
				out = append([]byte(nil), s...)
				copied = true
			}
			copy(out[i:], "\xef\xbf\xbd")
		}
		i += need + 1
	}
	return out, nil
}

func utf8Err(b byte, start, end int, reason string, chars int) *jsonError {
	msg := fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", b, start, reason)
	if end-start > 1 {
		msg = fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", start, end-1, reason)
	}
	// pos is already a character offset; loadsJSON does not convert it.
	return &jsonError{msg: msg, pos: chars}
}

type scanner struct {
	s     []byte
	depth int
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

func (p *scanner) skipWS(i int) int {
	for i < len(p.s) && isJSONSpace(p.s[i]) {
		i++
	}
	return i
}

func (p *scanner) fail(msg string, pos int) (any, int, *jsonError) {
	return nil, 0, &jsonError{msg, pos}
}

// value is scan_once_unicode: one JSON term starting at idx.
func (p *scanner) value(idx int) (any, int, *jsonError) {
	s, n := p.s, len(p.s)
	if idx >= n {
		return p.fail("Expecting value", idx)
	}
	switch s[idx] {
	case '"':
		str, next, err := p.str(idx + 1)
		if err != nil {
			return nil, 0, err
		}
		return str, next, nil
	case '{', '[':
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxJSONDepth {
			what := "object"
			if s[idx] == '[' {
				what = "array"
			}
			return p.fail("maximum recursion depth exceeded while decoding a JSON "+what+" from a unicode string", idx)
		}
		if s[idx] == '{' {
			return p.object(idx + 1)
		}
		return p.array(idx + 1)
	case 'n':
		if idx+3 < n && string(s[idx:idx+4]) == "null" {
			return nil, idx + 4, nil
		}
	case 't':
		if idx+3 < n && string(s[idx:idx+4]) == "true" {
			return true, idx + 4, nil
		}
	case 'f':
		if idx+4 < n && string(s[idx:idx+5]) == "false" {
			return false, idx + 5, nil
		}
	case 'N':
		if idx+2 < n && string(s[idx:idx+3]) == "NaN" {
			return pyFloat(math.NaN()), idx + 3, nil
		}
	case 'I':
		if idx+7 < n && string(s[idx:idx+8]) == "Infinity" {
			return pyFloat(math.Inf(1)), idx + 8, nil
		}
	case '-':
		if idx+8 < n && string(s[idx:idx+9]) == "-Infinity" {
			return pyFloat(math.Inf(-1)), idx + 9, nil
		}
	}
	return p.number(idx)
}

// object is _parse_object_unicode; idx is just after '{'.
func (p *scanner) object(idx int) (any, int, *jsonError) {
	s, end := p.s, len(p.s)-1
	obj := newPyObject()
	idx = p.skipWS(idx)
	if idx > end || s[idx] != '}' {
		for {
			if idx > end || s[idx] != '"' {
				return p.fail("Expecting property name enclosed in double quotes", idx)
			}
			key, next, err := p.str(idx + 1)
			if err != nil {
				return nil, 0, err
			}
			idx = p.skipWS(next)
			if idx > end || s[idx] != ':' {
				return p.fail("Expecting ':' delimiter", idx)
			}
			idx = p.skipWS(idx + 1)
			val, next, err := p.value(idx)
			if err != nil {
				return nil, 0, err
			}
			obj.set(key, val)
			idx = p.skipWS(next)
			if idx <= end && s[idx] == '}' {
				break
			}
			if idx > end || s[idx] != ',' {
				return p.fail("Expecting ',' delimiter", idx)
			}
			comma := idx
			idx = p.skipWS(idx + 1)
			if idx <= end && s[idx] == '}' {
				return p.fail("Illegal trailing comma before end of object", comma)
			}
		}
	}
	return obj, idx + 1, nil
}

// array is _parse_array_unicode; idx is just after '['.
func (p *scanner) array(idx int) (any, int, *jsonError) {
	s, end := p.s, len(p.s)-1
	list := []any{}
	idx = p.skipWS(idx)
	if idx > end || s[idx] != ']' {
		for {
			val, next, err := p.value(idx)
			if err != nil {
				return nil, 0, err
			}
			list = append(list, val)
			idx = p.skipWS(next)
			if idx <= end && s[idx] == ']' {
				break
			}
			if idx > end || s[idx] != ',' {
				return p.fail("Expecting ',' delimiter", idx)
			}
			comma := idx
			idx = p.skipWS(idx + 1)
			if idx <= end && s[idx] == ']' {
				return p.fail("Illegal trailing comma before end of array", comma)
			}
		}
	}
	return list, idx + 1, nil
}

// number is _match_number_unicode.
func (p *scanner) number(start int) (any, int, *jsonError) {
	s, end := p.s, len(p.s)-1
	idx := start
	if s[idx] == '-' {
		idx++
		if idx > end {
			return p.fail("Expecting value", start)
		}
	}
	switch {
	case s[idx] >= '1' && s[idx] <= '9':
		idx++
		for idx <= end && isDigit(s[idx]) {
			idx++
		}
	case s[idx] == '0':
		idx++
	default:
		return p.fail("Expecting value", start)
	}
	isFloat := false
	if idx < end && s[idx] == '.' && isDigit(s[idx+1]) {
		isFloat = true
		idx += 2
		for idx <= end && isDigit(s[idx]) {
			idx++
		}
	}
	if idx < end && (s[idx] == 'e' || s[idx] == 'E') {
		eStart := idx
		idx++
		if idx < end && (s[idx] == '-' || s[idx] == '+') {
			idx++
		}
		for idx <= end && isDigit(s[idx]) {
			idx++
		}
		if isDigit(s[idx-1]) {
			isFloat = true
		} else {
			idx = eStart
		}
	}
	text := string(s[start:idx])
	if isFloat {
		f, _ := strconv.ParseFloat(text, 64) // overflow gives ±Inf, as Python's float()
		return pyFloat(f), idx, nil
	}
	digits := len(strings.TrimPrefix(text, "-"))
	if digits > pyIntMaxDigits {
		return p.fail(fmt.Sprintf("Exceeds the limit (%d digits) for integer string conversion: value has %d digits; use sys.set_int_max_str_digits() to increase the limit", pyIntMaxDigits, digits), start)
	}
	if text == "-0" {
		text = "0"
	}
	return pyInt(text), idx, nil
}

// str is scanstring_unicode (strict mode); end is just after the opening quote.
func (p *scanner) str(end int) (string, int, *jsonError) {
	s, n := p.s, len(p.s)
	begin := end - 1
	var buf []byte
	for {
		next := end
		for next < n && s[next] != '"' && s[next] != '\\' {
			if s[next] <= 0x1f {
				return "", 0, &jsonError{"Invalid control character at", next}
			}
			next++
		}
		if next >= n {
			return "", 0, &jsonError{"Unterminated string starting at", begin}
		}
		if s[next] == '"' && buf == nil {
			return string(s[end:next]), next + 1, nil
		}
		buf = append(buf, s[end:next]...)
		if s[next] == '"' {
			return string(buf), next + 1, nil
		}
		next++ // past the backslash
		if next == n {
			return "", 0, &jsonError{"Unterminated string starting at", begin}
		}
		c := s[next]
		if c != 'u' {
			end = next + 1
			var r byte
			switch c {
			case '"', '\\', '/':
				r = c
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return "", 0, &jsonError{`Invalid \escape`, end - 2}
			}
			buf = append(buf, r)
			continue
		}
		next++ // first hex digit
		end = next + 4
		if end >= n {
			return "", 0, &jsonError{`Invalid \uXXXX escape`, next - 1}
		}
		cp, ok := hex4(s[next:end])
		if !ok {
			return "", 0, &jsonError{`Invalid \uXXXX escape`, end - 5}
		}
		if cp >= 0xD800 && cp <= 0xDBFF && end+6 < n && s[end] == '\\' && s[end+1] == 'u' {
			cp2, ok := hex4(s[end+2 : end+6])
			if !ok {
				return "", 0, &jsonError{`Invalid \uXXXX escape`, end + 1}
			}
			if cp2 >= 0xDC00 && cp2 <= 0xDFFF {
				cp = 0x10000 + (cp-0xD800)<<10 + (cp2 - 0xDC00)
				end += 6
			}
		}
		buf = utf8.AppendRune(buf, rune(cp)) // a lone surrogate becomes U+FFFD
	}
}

func hex4(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= int(c - '0')
		case c >= 'a' && c <= 'f':
			v |= int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			v |= int(c-'A') + 10
		default:
			return 0, false
		}
	}
	return v, true
}
