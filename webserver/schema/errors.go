package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Detail is one entry of a 422 response, shaped like FastAPI's rendering of a
// pydantic v2 error. Loc elements are strings or ints. Input is always
// written (null allowed); Ctx only when set.
type Detail struct {
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Type  string         `json:"type"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// MarshalJSON writes the keys in FastAPI's order (type, loc, msg, input, ctx)
// and the ctx keys in pydantic's order, so the body matches FastAPI's byte for
// byte where Go's encoder allows it.
func (d Detail) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	loc := d.Loc
	if loc == nil {
		loc = []any{}
	}
	fields := []struct {
		key string
		val any
	}{{"type", d.Type}, {"loc", loc}, {"msg", d.Msg}, {"input", d.Input}}
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(f.key))
		b.WriteByte(':')
		v, err := MarshalNoEscape(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	if len(d.Ctx) > 0 {
		b.WriteString(`,"ctx":{`)
		for i, k := range ctxKeys(d.Ctx) {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := MarshalNoEscape(k)
			b.Write(kb)
			b.WriteByte(':')
			v, err := MarshalNoEscape(d.Ctx[k])
			if err != nil {
				return nil, err
			}
			b.Write(v)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ctxRank orders ctx keys the way pydantic-core builds its ctx dicts;
// unknown keys follow, sorted.
var ctxRank = map[string]int{"field_type": 1, "min_length": 2, "max_length": 3, "actual_length": 4, "gt": 5, "ge": 6, "lt": 7, "le": 8, "pattern": 9, "expected": 10, "error": 11}

func ctxKeys(ctx map[string]any) []string {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := ctxRank[keys[i]], ctxRank[keys[j]]
		if ri == 0 {
			ri = len(ctxRank) + 1
		}
		if rj == 0 {
			rj = len(ctxRank) + 1
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// ValidationError is the body of a 422 response: {"detail": [...]}.
type ValidationError struct {
	Detail []Detail `json:"detail"`
}

// Error summarises the details, for logs.
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Detail))
	for _, d := range e.Detail {
		loc := make([]string, len(d.Loc))
		for i, l := range d.Loc {
			loc[i] = fmt.Sprint(l)
		}
		parts = append(parts, strings.Join(loc, ".")+": "+d.Msg+" ["+d.Type+"]")
	}
	return fmt.Sprintf("%d validation error(s): %s", len(e.Detail), strings.Join(parts, "; "))
}

// IdempotencyKeyReused is the detail for a create retried with a known
// Idempotency-Key but a different payload (docs/API.md, "Idempotency"):
// the only 422 of that header that validation cannot give, as it needs
// the stored optimization.
func IdempotencyKeyReused(key string) Detail {
	return Detail{
		Loc:   []any{"header", "idempotency-key"},
		Msg:   "Idempotency-Key was already used with a different request",
		Type:  "idempotency_key_reused",
		Input: key,
	}
}

// Pydantic v2 message templates (pydantic-core src/errors/types.rs).
const (
	msgMissing        = "Field required"
	msgExtra          = "Extra inputs are not permitted"
	msgModelAttrs     = "Input should be a valid dictionary or object to extract fields from"
	msgStringType     = "Input should be a valid string"
	msgIntType        = "Input should be a valid integer"
	msgIntParsing     = "Input should be a valid integer, unable to parse string as an integer"
	msgIntFromFloat   = "Input should be a valid integer, got a number with a fractional part"
	msgIntParsingSize = "Unable to parse input string as an integer, exceeded maximum size"
	msgFloatType      = "Input should be a valid number"
	msgFloatParsing   = "Input should be a valid number, unable to parse string as a number"
	msgFiniteNumber   = "Input should be a finite number"
	msgBoolType       = "Input should be a valid boolean"
	msgBoolParsing    = "Input should be a valid boolean, unable to interpret input"
	msgListType       = "Input should be a valid list"
	msgJSONInvalid    = "JSON decode error" // FastAPI's own wording for json_invalid
)

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// errs collects details in the order pydantic reports them.
type errs struct {
	details []Detail
}

func (e *errs) add(loc []any, typ, msg string, input any, ctx map[string]any) {
	l := make([]any, len(loc))
	copy(l, loc)
	e.details = append(e.details, Detail{Loc: l, Msg: msg, Type: typ, Input: input, Ctx: ctx})
}

func (e *errs) n() int { return len(e.details) }

// ValueError is the detail a pydantic validator raising ValueError(text)
// produces at loc: type value_error, msg "Value error, <text>"; FastAPI's
// jsonable_encoder turns the exception in ctx into {}.
func ValueError(loc []any, text string, input any) Detail {
	l := make([]any, len(loc))
	copy(l, loc)
	return Detail{Loc: l, Msg: "Value error, " + text, Type: "value_error", Input: input, Ctx: map[string]any{"error": map[string]any{}}}
}

// valueError adds ValueError(loc, text, input).
func (e *errs) valueError(loc []any, text string, input any) {
	e.details = append(e.details, ValueError(loc, text, input))
}

// at returns loc extended by one element, never sharing loc's array.
func at(loc []any, k any) []any {
	l := make([]any, len(loc)+1)
	copy(l, loc)
	l[len(loc)] = k
	return l
}

// MarshalNoEscape is json.Marshal without HTML escaping: answers echo the
// client's input as FastAPI does, `<b>` rather than `\u003cb\u003e`.
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
