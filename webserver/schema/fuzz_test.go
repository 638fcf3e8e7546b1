package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
)

// checkFuzzDetails asserts what every 422 detail must be: a non-empty loc
// starting with where, a type and a message, and a body that serialises.
func checkFuzzDetails(t *testing.T, details []Detail, where string) {
	t.Helper()
	if len(details) == 0 {
		t.Fatal("neither a value nor details")
	}
	for _, d := range details {
		if len(d.Loc) == 0 || d.Loc[0] != where || d.Type == "" || d.Msg == "" {
			t.Fatalf("detail %+v is not at %q with a type and a message", d, where)
		}
	}
	b, err := json.Marshal(ValidationError{Detail: details})
	if err != nil || !json.Valid(b) {
		t.Fatalf("details do not marshal: %v", err)
	}
}

// FuzzDecodeOptimizationIn checks that any body yields either a value and no
// details, or details that all sit under "body", have a type and a message,
// and serialise. A value's canonical JSON (what the idempotency hash is
// taken of) is valid JSON, decodes again, and is a fixed point: the same
// request always hashes the same.
func FuzzDecodeOptimizationIn(f *testing.F) {
	seeds := []string{
		``, `null`, `[]`, `{}`, `"x"`, `{"a":1,}`, `[1e400, NaN]`, "\xff", `"\ud800"`,
		withTop(""), withVehicle(vehOK), withTop(`,"vehicles":[` + vehOK + `]`),
		withOrder(`{"id":"o","address":"x","time_window_start":"17:00","time_window_end":"09:00"}`),
		withFleet(`{"count":"2.0","capacity":"1_000","name_prefix":"é"}`),
		withOptions(`{"strategy":"baseline","solver_seconds":"60"}`),
		withDepot(`{"latitude":-0.0,"longitude":"inf"}`),
		withOrders(`[{"id":"a","latitude":1,"longitude":2},{"id":"a","address":"x"}]`),
		withFleetOrders(`[{"id":"o","address":"x","time_windows":[{"start":"09:00","end":"10:00"},{"start":"10:00","end":"11:00"}],"loads":{"kg":"1","":2},"priority":"7"}]`,
			`{"count":1,"capacity":1,"capacities":{"kg":1},"breaks":[{"start":"12:00","end":"12:20","minutes":30}],"end":{"latitude":1},"open_end":true}`),
		withVehicleOrders(`[{"id":"o","address":"x","skills":["fridge"],"loads":{"kg":1}}]`,
			`[{"id":"v","capacity":1,"skills":["fridge"],"capacities":{"l":1},"max_distance_km":"0","max_stops":501,"start":{}}]`),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, details := DecodeOptimizationIn(body)
		if o == nil {
			checkFuzzDetails(t, details, "body")
			return
		}
		if len(details) > 0 {
			t.Fatalf("value and %d details", len(details))
		}
		c := o.CanonicalJSON()
		if !json.Valid(c) {
			t.Fatalf("invalid canonical JSON %s", c)
		}
		again, details := DecodeOptimizationIn(c)
		if again == nil {
			t.Fatalf("canonical JSON %s does not decode: %+v", c, details)
		}
		if c2 := again.CanonicalJSON(); !bytes.Equal(c, c2) {
			t.Fatalf("canonical JSON is not a fixed point:\n%s\n%s", c, c2)
		}
	})
}

// FuzzDecodeExportIn: the optional export body gives a known format and
// flag, and the value written back as JSON decodes to itself.
func FuzzDecodeExportIn(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"format":"csv"}`, `{"format":"xlsx","include_driver_instructions":false}`,
		`{"format":"CSV"}`, `{"include_driver_instructions":"off"}`, `{"include_driver_instructions":2}`,
		`{"format":"pdf","extra":1}`, `[]`, `"csv"`, `{"format":null}`, "\xef\xbb\xbf{}", `{"format":"csv"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, details := DecodeExportIn(body)
		if in == nil {
			checkFuzzDetails(t, details, "body")
			return
		}
		if len(details) > 0 || (in.Format != "xlsx" && in.Format != "csv") {
			t.Fatalf("accepted %+v with %d details", in, len(details))
		}
		b, _ := json.Marshal(in)
		again, details := DecodeExportIn(b)
		if again == nil || *again != *in {
			t.Fatalf("%s decodes to %+v, %+v; want %+v", b, again, details, in)
		}
	})
}

// FuzzDecodeWebhookIn: a webhook body gives a URL of at most 500
// characters, and the value written back as JSON decodes to itself.
func FuzzDecodeWebhookIn(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"url":"https://hooks.example.com/x"}`, `{"url":""}`, `{"url":1}`,
		`{"url":"https://example.com/` + strings.Repeat("a", 480) + `"}`, `{"url":"x","secret":"y"}`,
		`{"url":"\u0000\ud83d\ude00"}`, `{"url":"\ud800"}`, `[{"url":"x"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, details := DecodeWebhookIn(body)
		if in == nil {
			checkFuzzDetails(t, details, "body")
			return
		}
		if len(details) > 0 || utf8.RuneCountInString(in.URL) > 500 {
			t.Fatalf("accepted %q with %d details", in.URL, len(details))
		}
		if !utf8.ValidString(in.URL) {
			return // a lone surrogate: Python keeps it, JSON cannot write it back
		}
		b, _ := json.Marshal(in)
		again, details := DecodeWebhookIn(b)
		if again == nil || *again != *in {
			t.Fatalf("%s decodes to %+v, %+v; want %+v", b, again, details, in)
		}
	})
}

// FuzzDecodeAPIKeyIn: an accepted key request has a trimmed, non-blank name
// of at most MaxAPIKeyName characters and distinct known scopes, and the
// value written back as JSON decodes to itself.
func FuzzDecodeAPIKeyIn(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{}`, `{"name":"dispatch","scopes":["optimizations:read"]}`,
		`{"name":"  x  ","scopes":["keys:write","exports:write"]}`, `{"name":" ","scopes":["keys:write"]}`,
		`{"name":"x","scopes":[]}`, `{"name":"x","scopes":["keys:write","keys:write"]}`,
		`{"name":"x","scopes":["admin"]}`, `{"name":1,"scopes":"keys:write"}`,
		`{"name":"` + strings.Repeat("é", 121) + `","scopes":["keys:write"]}`, `{"name":"\u2003x\u00a0","scopes":["keys:write"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, details := DecodeAPIKeyIn(body, testScopes)
		if in == nil {
			checkFuzzDetails(t, details, "body")
			return
		}
		if len(details) > 0 || in.Name == "" || in.Name != strings.TrimSpace(in.Name) || utf8.RuneCountInString(in.Name) > MaxAPIKeyName {
			t.Fatalf("accepted name %q with %d details", in.Name, len(details))
		}
		if len(in.Scopes) == 0 || len(in.Scopes) > len(testScopes) {
			t.Fatalf("accepted %d scopes", len(in.Scopes))
		}
		for i, s := range in.Scopes {
			if !slices.Contains(testScopes, s) || slices.Contains(in.Scopes[:i], s) {
				t.Fatalf("accepted scopes %q", in.Scopes)
			}
		}
		if !utf8.ValidString(in.Name) {
			return // a lone surrogate: Python keeps it, JSON cannot write it back
		}
		b, _ := json.Marshal(in)
		again, details := DecodeAPIKeyIn(b, testScopes)
		if again == nil || again.Name != in.Name || !slices.Equal(again.Scopes, in.Scopes) {
			t.Fatalf("%s decodes to %+v, %+v; want %+v", b, again, details, in)
		}
	})
}

// FuzzValidateIdempotencyKey: a key is accepted exactly when present with
// 8 to 128 bytes; a refusal is one detail at the header whose input is
// the Latin-1 reading of the bytes (valid UTF-8, one character per byte).
func FuzzValidateIdempotencyKey(f *testing.F) {
	for _, s := range []string{"", "short", "readme-walkthrough-1", strings.Repeat("k", 128), strings.Repeat("k", 129), "ключ-ключ", "\xff\xfe\x00\x01abcdefgh"} {
		f.Add(s, true)
	}
	f.Add("", false)
	f.Fuzz(func(t *testing.T, key string, present bool) {
		details := ValidateIdempotencyKey(key, present)
		if ok := present && len(key) >= 8 && len(key) <= 128; ok != (len(details) == 0) {
			t.Fatalf("key of %d bytes (present %v): %d details", len(key), present, len(details))
		}
		if len(details) == 0 {
			return
		}
		checkFuzzDetails(t, details, "header")
		if len(details) != 1 || details[0].Loc[1] != "idempotency-key" {
			t.Fatalf("details %+v", details)
		}
		if !present {
			return
		}
		in, _ := details[0].Input.(string)
		if !utf8.ValidString(in) || utf8.RuneCountInString(in) != len(key) {
			t.Fatalf("input %q does not read the %d bytes of %q one character each", in, len(key), key)
		}
	})
}

// FuzzParseUUIDParam: a path id is accepted exactly when the uuid crate
// (as pydantic) would parse it, checked against github.com/google/uuid,
// which reads the same four forms (more leniently: its urn: prefix is
// case-insensitive and it does not read the braces). An accepted id comes back canonical, which parses
// to itself; a refusal is one uuid_parsing detail whose message carries
// ctx's error.
func FuzzParseUUIDParam(f *testing.F) {
	for _, s := range []string{
		"74664201-cd11-59b0-af6c-dddd4df97de2", "74664201CD1159B0AF6CDDDD4DF97DE2", "{74664201-cd11-59b0-af6c-dddd4df97de2}",
		"urn:uuid:74664201-cd11-59b0-af6c-dddd4df97de2", "URN:UUID:74664201-cd11-59b0-af6c-dddd4df97de2", "not-a-uuid",
		"74664201-cd11-59b0-af6c-dddd4df97de", "74664201-cd1159b0-af6c-dddd4df97de2x", "7466420é-cd11-59b0-af6c-dddd4df97de2",
		"{}", "{", "urn:uuid:", "", "----", "74664201_cd11_59b0_af6c_dddd4df97de2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id, details := ParseUUIDParam("optimization_id", v)
		ref, refErr := uuid.Parse(v)
		switch {
		case refErr == nil && len(v) == 45 && !strings.HasPrefix(v, "urn:uuid:"):
			refErr = errors.New("urn: prefix not in lower case") // the crate's is case-sensitive
		case refErr == nil && len(v) == 38 && (v[0] != '{' || v[37] != '}'):
			refErr = errors.New("not in braces") // google/uuid skips the outer bytes unread
		}
		if (len(details) == 0) != (refErr == nil) {
			t.Fatalf("ParseUUIDParam(%q) = %q, %+v; google/uuid: %v", v, id, details, refErr)
		}
		if len(details) == 0 {
			if id != ref.String() {
				t.Fatalf("ParseUUIDParam(%q) = %q, want %q", v, id, ref)
			}
			if again, d := ParseUUIDParam("optimization_id", id); again != id || d != nil {
				t.Fatalf("canonical %q parses to %q, %+v", id, again, d)
			}
			return
		}
		checkFuzzDetails(t, details, "path")
		d := details[0]
		msg, _ := d.Ctx["error"].(string)
		if len(details) != 1 || id != "" || d.Type != "uuid_parsing" || d.Loc[1] != "optimization_id" || msg == "" || d.Msg != "Input should be a valid UUID, "+msg || d.Input != v {
			t.Fatalf("ParseUUIDParam(%q) = %q, %+v", v, id, details)
		}
	})
}

// FuzzParseKeyIDParam: a key id is accepted exactly when it is 16
// lower-case hex digits, and comes back unchanged.
func FuzzParseKeyIDParam(f *testing.F) {
	for _, s := range []string{"0123456789abcdef", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "0123456789abcdef\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		id, details := ParseKeyIDParam("key_id", v)
		want := len(v) == 16 && strings.Trim(v, "0123456789abcdef") == ""
		if want != (len(details) == 0) {
			t.Fatalf("ParseKeyIDParam(%q) = %q, %+v", v, id, details)
		}
		if want {
			if id != v {
				t.Fatalf("ParseKeyIDParam(%q) = %q", v, id)
			}
			return
		}
		checkFuzzDetails(t, details, "path")
		if id != "" || details[0].Type != "string_pattern_mismatch" || details[0].Input != v {
			t.Fatalf("ParseKeyIDParam(%q) = %q, %+v", v, id, details)
		}
	})
}

// FuzzQueryParams checks page, page_size and include_path as the list and
// result endpoints read them: an accepted value is within its bounds, a
// plain decimal in range is always accepted as itself, the value written
// back parses to itself, and a refusal gives the default and details at
// ["query", name] echoing the raw text.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"1", "25", "100", "101", "0", "-1", " 7 ", "+3", "1_0", "1.0", "1.5", "1e2", "", "０１", "99999999999999999999999", "true", "Off", "yes "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, q := range []struct {
			name          string
			def, min, max int
		}{{"page", 1, 1, 0}, {"page_size", DefaultPageSize, 1, MaxPageSize}} {
			n, details := QueryInt(q.name, raw, true, q.def, q.min, q.max)
			plain, err := strconv.Atoi(raw)
			if err == nil && strconv.Itoa(plain) == raw && plain >= q.min && (q.max < q.min || plain <= q.max) && (details != nil || n != plain) {
				t.Fatalf("%s=%q = %d, %+v; want %d", q.name, raw, n, details, plain)
			}
			if details != nil {
				checkFuzzDetails(t, details, "query")
				if n != q.def || details[0].Loc[1] != q.name || details[0].Input != raw {
					t.Fatalf("%s=%q = %d, %+v", q.name, raw, n, details)
				}
				continue
			}
			if n < q.min || (q.max >= q.min && n > q.max) {
				t.Fatalf("%s=%q = %d, out of bounds", q.name, raw, n)
			}
			if again, d := QueryInt(q.name, strconv.Itoa(n), true, q.def, q.min, q.max); again != n || d != nil {
				t.Fatalf("%s=%d reads back as %d, %+v", q.name, n, again, d)
			}
		}
		b, details := QueryBool("include_path", raw, true, false)
		if details != nil {
			checkFuzzDetails(t, details, "query")
			if b || details[0].Type != "bool_parsing" || details[0].Input != raw {
				t.Fatalf("include_path=%q = %v, %+v", raw, b, details)
			}
			return
		}
		if again, d := QueryBool("include_path", strconv.FormatBool(b), true, !b); again != b || d != nil {
			t.Fatalf("include_path=%v reads back as %v, %+v", b, again, d)
		}
	})
}
