package schema

import (
	"regexp"
	"strings"
)

// API keys are a routeopt extension (docs/API.md, "API keys and the
// account"); their inputs are checked
// with the same pydantic-style rules and 422 shape as every other input.

// MaxAPIKeyName bounds an API key's name, in characters.
const MaxAPIKeyName = 120

// KeyIDPattern is what an API key id is: the first 16 lower-case hex
// digits of the key's SHA-256. It is reported in string_pattern_mismatch's ctx.
const KeyIDPattern = `^[0-9a-f]{16}$`

var keyIDRe = regexp.MustCompile(KeyIDPattern)

// APIKeyIn is the body of POST /v1/api-keys.
type APIKeyIn struct {
	// Name is trimmed of surrounding white space.
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// DecodeAPIKeyIn decodes and validates the body of POST /v1/api-keys: name
// a required string of 1 to MaxAPIKeyName characters that is not blank,
// scopes a required list of 1 to len(known) distinct items of known.
// Whether the caller may grant them is checked elsewhere.
func DecodeAPIKeyIn(body []byte, known []string) (*APIKeyIn, []Detail) {
	in, d := parseBody(body, false)
	if d != nil {
		return nil, d
	}
	e := &errs{}
	loc := []any{"body"}
	f, ok := e.model(loc, in)
	if !ok {
		return nil, e.details
	}
	out := &APIKeyIn{}
	if raw, ok := f.take("name"); ok {
		if name, ok := e.str(at(loc, "name"), raw, strRule{min: 1, max: MaxAPIKeyName}); ok {
			out.Name = strings.TrimSpace(name)
			if out.Name == "" {
				e.valueError(at(loc, "name"), "name must not be blank", raw)
			}
		}
	} else {
		e.missing(loc, "name", f)
	}
	if raw, ok := f.take("scopes"); ok {
		out.Scopes, _ = e.scopes(at(loc, "scopes"), raw, known)
	} else {
		e.missing(loc, "scopes", f)
	}
	e.extras(loc, f)
	if e.n() > 0 {
		return nil, e.details
	}
	return out, nil
}

// scopes validates a list of distinct literals of known; uniqueness is
// checked only when every item is valid, as a field validator would.
func (e *errs) scopes(loc []any, in any, known []string) ([]string, bool) {
	items, ok := e.list(loc, in, 1, len(known))
	if !ok {
		return nil, false
	}
	start := e.n()
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = e.literal(at(loc, i), it, known...)
	}
	if e.n() > start {
		return nil, false
	}
	if dups := duplicates(out); dups != "" {
		e.valueError(loc, "scopes must be unique; duplicated: "+dups, in)
		return nil, false
	}
	return out, true
}

// ParseKeyIDParam validates an API key id path parameter: 16 lower-case
// hex digits, else string_pattern_mismatch at ["path", name].
func ParseKeyIDParam(name, v string) (string, []Detail) {
	if keyIDRe.MatchString(v) {
		return v, nil
	}
	return "", []Detail{{
		Loc:   []any{"path", name},
		Msg:   "String should match pattern '" + KeyIDPattern + "'",
		Type:  "string_pattern_mismatch",
		Input: v,
		Ctx:   map[string]any{"pattern": KeyIDPattern},
	}}
}
