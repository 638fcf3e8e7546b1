package schema

import (
	"fmt"
	"net/url"
	"strings"
)

// Bounds of the Idempotency-Key header, in characters.
const (
	MinIdempotencyKey = 8
	MaxIdempotencyKey = 128
)

// ValidateIdempotencyKey checks the Idempotency-Key header of the create
// operation: required, MinIdempotencyKey to MaxIdempotencyKey characters.
// Starlette decodes header values as Latin-1, so FastAPI counts one
// character per byte; so do we, and the input echoed in a detail is the
// Latin-1 reading of the bytes, as FastAPI's.
func ValidateIdempotencyKey(v string, present bool) []Detail {
	loc := []any{"header", "idempotency-key"}
	if !present {
		return []Detail{{Loc: loc, Msg: msgMissing, Type: "missing", Input: nil}}
	}
	input := latin1(v)
	switch n := len(v); {
	case n < MinIdempotencyKey:
		return []Detail{{Loc: loc, Msg: fmt.Sprintf("String should have at least %d characters", MinIdempotencyKey), Type: "string_too_short", Input: input, Ctx: map[string]any{"min_length": MinIdempotencyKey}}}
	case n > MaxIdempotencyKey:
		return []Detail{{Loc: loc, Msg: fmt.Sprintf("String should have at most %d characters", MaxIdempotencyKey), Type: "string_too_long", Input: input, Ctx: map[string]any{"max_length": MaxIdempotencyKey}}}
	}
	return nil
}

func latin1(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// UUID parse error wording. pydantic-core reports Display of the Rust uuid
// crate's error; these follow the wording of uuid 1.2x
// ("invalid character: found `n` at 1", 1-based index of the byte). Older
// uuid releases (most FastAPI deployments in the wild) said "invalid
// character: expected an optional prefix of `urn:uuid:` followed by
// [0-9a-fA-F-], found `n` at 1"; only uuidCharError would change.
func uuidCharError(c rune, index int) string {
	return fmt.Sprintf("invalid character: found `%c` at %d", c, index)
}

// ParseUUIDParam validates a UUID path parameter as pydantic does (Rust
// uuid::Uuid::parse_str: simple, hyphenated, {braced} or urn:uuid: forms,
// any case) and returns it in canonical lowercase hyphenated form. On failure
// the detail is uuid_parsing at ["path", name] with the uuid crate's message.
func ParseUUIDParam(name, v string) (string, []Detail) {
	if hex, ok := uuidHex(v); ok {
		return hex[0:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:32], nil
	}
	msg := uuidError(v)
	return "", []Detail{{
		Loc:   []any{"path", name},
		Msg:   "Input should be a valid UUID, " + msg,
		Type:  "uuid_parsing",
		Input: v,
		Ctx:   map[string]any{"error": msg},
	}}
}

// uuidHex is uuid's try_parse: 32 hex digits, or 36 with hyphens at 8, 13,
// 18 and 23, optionally wrapped in {} or prefixed by urn:uuid:. It returns
// the 32 lowercase hex digits.
func uuidHex(s string) (string, bool) {
	switch {
	case len(s) == 32:
		return hexDigits(s)
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		s = s[1:37]
	case len(s) == 45 && strings.HasPrefix(s, "urn:uuid:"):
		s = s[9:]
	case len(s) != 36:
		return "", false
	}
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return "", false
	}
	return hexDigits(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
}

func hexDigits(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if !isHex(rune(s[i])) {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

func isHex(r rune) bool { return r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F' }

// uuidError is uuid's InvalidUuid::into_err followed by its Display.
func uuidError(input string) string {
	body, offset, simple := input, 0, true
	switch {
	case len(input) >= 2 && input[0] == '{' && input[len(input)-1] == '}':
		body, offset, simple = input[1:len(input)-1], 1, false
	case strings.HasPrefix(input, "urn:uuid:"):
		body, offset, simple = input[9:], 9, false
	}
	hyphens := 0
	var bounds [4]int
	for i, r := range body {
		switch {
		case r >= 0x80:
			return uuidCharError(r, i+offset+1)
		case r == '-':
			if hyphens < 4 {
				bounds[hyphens] = i
			}
			hyphens++
		case !isHex(r):
			return uuidCharError(r, i+offset+1)
		}
	}
	if hyphens == 0 && simple {
		return fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(input))
	}
	if hyphens != 4 {
		return fmt.Sprintf("invalid group count: expected 5, found %d", hyphens+1)
	}
	starts, lengths := [5]int{0, 9, 14, 19, 24}, [5]int{8, 4, 4, 4, 12}
	for i := range 4 {
		if bounds[i] != starts[i+1]-1 {
			return fmt.Sprintf("invalid group length in group %d: expected %d, found %d", i, lengths[i], bounds[i]-starts[i])
		}
	}
	return fmt.Sprintf("invalid group length in group 4: expected 12, found %d", len(input)-starts[4])
}

// QueryInt validates an integer query parameter as FastAPI does: absent gives
// def; otherwise the raw string is parsed by pydantic's str_as_int and must
// satisfy min <= v <= max (pass max < min for no upper bound; values beyond
// int are then clamped). On failure it returns def and the details, at
// ["query", name] with the raw string as input.
func QueryInt(name, raw string, present bool, def, min, max int) (int, []Detail) {
	if !present {
		return def, nil
	}
	e := &errs{}
	n, ok := e.intField([]any{"query", name}, raw, min, max)
	if !ok {
		return def, e.details
	}
	return n, nil
}

// QueryBool validates a boolean query parameter as FastAPI does: absent
// gives def; otherwise pydantic's str_as_bool (case-insensitive "0", "off",
// "f", "false", "n", "no" / "1", "on", "t", "true", "y", "yes", not
// trimmed). On failure it returns def and a bool_parsing detail at
// ["query", name].
func QueryBool(name, raw string, present bool, def bool) (bool, []Detail) {
	if !present {
		return def, nil
	}
	e := &errs{}
	b, ok := e.boolField([]any{"query", name}, raw)
	if !ok {
		return def, e.details
	}
	return b, nil
}

// Paging of lists (docs/API.md, "Pagination"): page counts from 1 with no
// upper bound (a page past the last one is empty), page_size from 1 to
// MaxPageSize, DefaultPageSize when absent.
const (
	DefaultPageSize = 25
	MaxPageSize     = 100
)

// PageQuery validates the page and page_size parameters of a list's query
// q, reporting the errors of both at once.
func PageQuery(q url.Values) (page, size int, details []Detail) {
	pageRaw, pagePresent := first(q, "page")
	sizeRaw, sizePresent := first(q, "page_size")
	page, details = QueryInt("page", pageRaw, pagePresent, 1, 1, 0) // no upper bound
	size, sizeDetails := QueryInt("page_size", sizeRaw, sizePresent, DefaultPageSize, 1, MaxPageSize)
	return page, size, append(details, sizeDetails...)
}

// first is the first value of query parameter name, and whether it was given.
func first(q url.Values, name string) (string, bool) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}
