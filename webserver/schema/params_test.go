package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestDecodeExportIn(t *testing.T) {
	valid := []struct {
		body   string
		format string
		driver bool
	}{
		{``, "xlsx", true},
		{`null`, "xlsx", true},
		{`{}`, "xlsx", true},
		{`{"format":"csv"}`, "csv", true},
		{`{"format":"xlsx","include_driver_instructions":false}`, "xlsx", false},
		{`{"include_driver_instructions":"no"}`, "xlsx", false},
		{`{"include_driver_instructions":0}`, "xlsx", false},
	}
	for _, tc := range valid {
		got, d := DecodeExportIn([]byte(tc.body))
		if len(d) > 0 || got == nil || got.Format != tc.format || got.IncludeDriverInstructions != tc.driver {
			t.Errorf("%q: got %+v %v", tc.body, got, d)
		}
	}
	invalid := []struct {
		body  string
		wants []want
	}{
		{`{"format":"pdf"}`, []want{{`["body","format"]`, "literal_error", "Input should be 'xlsx' or 'csv'", `{"expected":"'xlsx' or 'csv'"}`, `"pdf"`}}},
		{`{"format":"CSV","include_driver_instructions":"maybe"}`, []want{
			{`["body","format"]`, "literal_error", "Input should be 'xlsx' or 'csv'", `{"expected":"'xlsx' or 'csv'"}`, `"CSV"`},
			{`["body","include_driver_instructions"]`, "bool_parsing", "Input should be a valid boolean, unable to interpret input", "", `"maybe"`},
		}},
		{`{"include_driver_instructions":null}`, []want{{`["body","include_driver_instructions"]`, "bool_type", "Input should be a valid boolean", "", `null`}}},
		{`{"include_driver_instructions":2}`, []want{{`["body","include_driver_instructions"]`, "bool_parsing", "Input should be a valid boolean, unable to interpret input", "", `2`}}},
		{`{"format":null}`, []want{{`["body","format"]`, "literal_error", "Input should be 'xlsx' or 'csv'", `{"expected":"'xlsx' or 'csv'"}`, `null`}}},
		{`{"fmt":"csv"}`, []want{{`["body","fmt"]`, "extra_forbidden", "Extra inputs are not permitted", "", `"csv"`}}},
		{`[]`, []want{{`["body"]`, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", "", `[]`}}},
		{`{"format":`, []want{{`["body",10]`, "json_invalid", "JSON decode error", `{"error":"Expecting value"}`, `{}`}}},
	}
	for _, tc := range invalid {
		t.Run(tc.body, func(t *testing.T) {
			got, d := DecodeExportIn([]byte(tc.body))
			if got != nil {
				t.Errorf("value along with errors")
			}
			checkDetails(t, d, tc.wants)
		})
	}
}

func TestDecodeWebhookIn(t *testing.T) {
	url500 := "https://example.com/" + strings.Repeat("é", 480)
	for _, body := range []string{`{"url":"https://hooks.example.com/x"}`, `{"url":"` + url500 + `"}`, `{"url":""}`} {
		got, d := DecodeWebhookIn([]byte(body))
		if len(d) > 0 || got == nil {
			t.Errorf("%.40q: %v", body, d)
		}
	}
	invalid := []struct {
		body  string
		wants []want
	}{
		{``, []want{{`["body"]`, "missing", "Field required", "", `null`}}},
		{`null`, []want{{`["body"]`, "missing", "Field required", "", `null`}}},
		{`{}`, []want{{`["body","url"]`, "missing", "Field required", "", `{}`}}},
		{`{"url":"` + url500 + `x"}`, []want{{`["body","url"]`, "string_too_long", "String should have at most 500 characters", `{"max_length":500}`, ""}}},
		{`{"url":42,"secret":"s"}`, []want{
			{`["body","url"]`, "string_type", "Input should be a valid string", "", `42`},
			{`["body","secret"]`, "extra_forbidden", "Extra inputs are not permitted", "", `"s"`},
		}},
		{`"https://x"`, []want{{`["body"]`, "model_attributes_type", "Input should be a valid dictionary or object to extract fields from", "", `"https://x"`}}},
	}
	for _, tc := range invalid {
		t.Run(tc.body, func(t *testing.T) {
			got, d := DecodeWebhookIn([]byte(tc.body))
			if got != nil {
				t.Errorf("value along with errors")
			}
			checkDetails(t, d, tc.wants)
		})
	}
}

func TestValidateIdempotencyKey(t *testing.T) {
	loc := `["header","idempotency-key"]`
	cases := []struct {
		v       string
		present bool
		wants   []want
	}{
		{"12345678", true, nil},
		{strings.Repeat("k", 128), true, nil},
		{"", false, []want{{loc, "missing", "Field required", "", `null`}}},
		{"", true, []want{{loc, "string_too_short", "String should have at least 8 characters", `{"min_length":8}`, `""`}}},
		{"1234567", true, []want{{loc, "string_too_short", "String should have at least 8 characters", `{"min_length":8}`, `"1234567"`}}},
		{strings.Repeat("k", 129), true, []want{{loc, "string_too_long", "String should have at most 128 characters", `{"max_length":128}`, ""}}},
		// Starlette reads headers as Latin-1: 4 × "é" is 8 bytes, 8 characters.
		{"éééé", true, nil},
		{"ééé", true, []want{{loc, "string_too_short", "String should have at least 8 characters", `{"min_length":8}`, `"Ã©Ã©Ã©"`}}},
	}
	for _, tc := range cases {
		checkDetails(t, ValidateIdempotencyKey(tc.v, tc.present), tc.wants)
	}
}

func TestParseUUIDParam(t *testing.T) {
	const canon = "0f8e6a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b"
	for _, v := range []string{canon, strings.ToUpper(canon), "0f8e6a2c1b3d4e5f8a9b0c1d2e3f4a5b", "{" + canon + "}", "urn:uuid:" + canon} {
		got, d := ParseUUIDParam("optimization_id", v)
		if len(d) > 0 || got != canon {
			t.Errorf("%q: got %q %v", v, got, d)
		}
	}
	cases := []struct{ v, err string }{
		{"not-a-uuid", "invalid character: found `n` at 1"},
		{"123", "invalid length: expected length 32 for simple format, found 3"},
		{"", "invalid length: expected length 32 for simple format, found 0"},
		{"0f8e6a2c1b3d4e5f8a9b0c1d2e3f4a5", "invalid length: expected length 32 for simple format, found 31"},
		{"0f8e6a2c-1b3d-4e5f-8a9b", "invalid group count: expected 5, found 4"},
		{"0f8e6a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5", "invalid group length in group 4: expected 12, found 11"},
		{"0f8e6a2-c1b3d-4e5f-8a9b-0c1d2e3f4a5b", "invalid group length in group 0: expected 8, found 7"},
		{"0f8e6a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5g", "invalid character: found `g` at 36"},
		{"{0f8e6a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5x}", "invalid character: found `x` at 37"},
		{"urn:uuid:zz", "invalid character: found `z` at 10"},
		{"0f8é", "invalid character: found `é` at 4"},
		{"{0f8e6a2c1b3d4e5f8a9b0c1d2e3f4a5b}", "invalid group count: expected 5, found 1"},
	}
	for _, tc := range cases {
		got, d := ParseUUIDParam("webhook_id", tc.v)
		if got != "" {
			t.Errorf("%q: value %q", tc.v, got)
		}
		ctx, _ := json.Marshal(map[string]string{"error": tc.err})
		input, _ := json.Marshal(tc.v)
		checkDetails(t, d, []want{{`["path","webhook_id"]`, "uuid_parsing", "Input should be a valid UUID, " + tc.err, string(ctx), string(input)}})
	}
}

func TestQueryInt(t *testing.T) {
	cases := []struct {
		raw      string
		present  bool
		min, max int
		want     int
		wants    []want
	}{
		{"", false, 1, 100, 25, nil},
		{"7", true, 1, 100, 7, nil},
		{" 100 ", true, 1, 100, 100, nil},
		{"3.0", true, 1, 100, 3, nil},
		{"100000000000000000000000", true, 1, 0, int(^uint(0) >> 1), nil}, // no upper bound: clamped
		{"0", true, 1, 100, 25, []want{{`["query","page_size"]`, "greater_than_equal", "Input should be greater than or equal to 1", `{"ge":1}`, `"0"`}}},
		{"101", true, 1, 100, 25, []want{{`["query","page_size"]`, "less_than_equal", "Input should be less than or equal to 100", `{"le":100}`, `"101"`}}},
		{"abc", true, 1, 100, 25, []want{{`["query","page_size"]`, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", "", `"abc"`}}},
		{"", true, 1, 100, 25, []want{{`["query","page_size"]`, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", "", `""`}}},
		{"2.5", true, 1, 100, 25, []want{{`["query","page_size"]`, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", "", `"2.5"`}}},
		{strings.Repeat("9", 4301), true, 1, 100, 25, []want{{`["query","page_size"]`, "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", "", ""}}},
	}
	for _, tc := range cases {
		got, d := QueryInt("page_size", tc.raw, tc.present, 25, tc.min, tc.max)
		if got != tc.want {
			t.Errorf("%q: got %d, want %d", tc.raw, got, tc.want)
		}
		checkDetails(t, d, tc.wants)
	}
}

func TestQueryBool(t *testing.T) {
	for raw, want := range map[string]bool{"true": true, "1": true, "yes": true, "On": true, "t": true, "y": true, "false": false, "0": false, "off": false, "NO": false, "f": false, "n": false} {
		got, d := QueryBool("include_path", raw, true, !want)
		if len(d) > 0 || got != want {
			t.Errorf("%q: got %v %v", raw, got, d)
		}
	}
	if got, d := QueryBool("include_path", "", false, false); got || d != nil {
		t.Errorf("absent: %v %v", got, d)
	}
	for _, raw := range []string{"maybe", "", "2", " true"} {
		got, d := QueryBool("include_path", raw, true, false)
		input, _ := json.Marshal(raw)
		if got {
			t.Errorf("%q: true", raw)
		}
		checkDetails(t, d, []want{{`["query","include_path"]`, "bool_parsing", "Input should be a valid boolean, unable to interpret input", "", string(input)}})
	}
}

// The 422 body has FastAPI's key order and pydantic's ctx order.
func TestDetailJSON(t *testing.T) {
	_, d := DecodeOptimizationIn([]byte(withOrders(`[]`)))
	b, err := json.Marshal(ValidationError{Detail: d})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"detail":[{"type":"too_short","loc":["body","orders"],"msg":"List should have at least 1 item after validation, not 0","input":[],"ctx":{"field_type":"List","min_length":1,"actual_length":0}}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	var back ValidationError
	if err := json.Unmarshal(b, &back); err != nil || len(back.Detail) != 1 || back.Detail[0].Type != "too_short" {
		t.Errorf("round trip: %+v %v", back, err)
	}
	if msg := (&ValidationError{Detail: d}).Error(); !strings.Contains(msg, "body.orders") {
		t.Errorf("Error(): %s", msg)
	}
	r, _ := json.Marshal(IdempotencyKeyReused("abcdefgh"))
	if want := `{"type":"idempotency_key_reused","loc":["header","idempotency-key"],"msg":"Idempotency-Key was already used with a different request","input":"abcdefgh"}`; string(r) != want {
		t.Errorf("reused: %s\nwant    %s", r, want)
	}
}

func TestCanonicalJSON(t *testing.T) {
	a := `{"depot":{"address":"1 Main Street"},"orders":[{"id":"o1","address":"10 Elm Street","demand":2}],"fleet":{"count":3,"capacity":10}}`
	variants := []string{
		a,
		// other key order, whitespace, coercions, explicit defaults, duplicate keys
		"{\n  \"fleet\": {\"capacity\": \"10\", \"count\": 3.0, \"shift_start\": \"08:00\", \"name_prefix\": \"Vehicle\"},\n" +
			"  \"orders\": [ {\"demand\": \"2\", \"address\": \"10 Elm Street\", \"id\": \"o1\", \"service_minutes\": 5} ],\n" +
			"  \"options\": {\"strategy\": \"optimized\", \"solver_seconds\": null}, \"vehicles\": null, \"name\": null,\n" +
			"  \"depot\": {\"address\": \"x\", \"address\": \"1 Main Street\", \"latitude\": null}\n}",
		`{"orders":[{"id":"o1","address":"10 Elm Street","demand":2.0}],"fleet":{"count":"3","capacity":1e1,"fixed_cost":false},"depot":{"address":"1 Main Street"}}`,
	}
	var first []byte
	for i, v := range variants {
		o, d := DecodeOptimizationIn([]byte(v))
		if len(d) > 0 {
			t.Fatalf("variant %d: %v", i, d)
		}
		c := o.CanonicalJSON()
		if !json.Valid(c) {
			t.Fatalf("variant %d: invalid JSON %s", i, c)
		}
		if i == 0 {
			first = c
			continue
		}
		if string(c) != string(first) {
			t.Errorf("variant %d:\n got  %s\n want %s", i, c, first)
		}
	}
	// A real difference changes the bytes.
	o, _ := DecodeOptimizationIn([]byte(strings.Replace(a, `"demand":2`, `"demand":2.5`, 1)))
	if string(o.CanonicalJSON()) == string(first) {
		t.Error("different demand, same canonical JSON")
	}
	want := `{"name":null,"depot":{"label":null,"address":"1 Main Street","latitude":null,"longitude":null},"orders":[{"id":"o1","address":"10 Elm Street","city":null,"region":null,"postal_code":null,"country":null,"latitude":null,"longitude":null,"demand":2,"service_minutes":5,"time_window_start":null,"time_window_end":null,"customer":null,"phone":null,"notes":null}],"vehicles":null,"fleet":{"count":3,"capacity":10,"shift_start":"08:00","shift_end":"18:00","fixed_cost":0,"name_prefix":"Vehicle"},"options":{"strategy":"optimized","objective":"distance","solver_seconds":null}}`
	if string(first) != want {
		t.Errorf("canonical form:\n got  %s\n want %s", first, want)
	}
}

func TestPageQuery(t *testing.T) {
	for _, tc := range []struct {
		query      string
		page, size int
		locs       []string // the details' ["query", name], in order
	}{
		{"", 1, DefaultPageSize, nil},
		{"page=3&page_size=100", 3, MaxPageSize, nil},
		{"page_size=1&page=99999999999999999999999", math.MaxInt, 1, nil},
		{"page=2&page=x", 2, DefaultPageSize, nil}, // the first value counts
		{"page_size=101&page=0", 1, DefaultPageSize, []string{"page", "page_size"}},
		{"page_size=", 1, DefaultPageSize, []string{"page_size"}},
	} {
		q, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		page, size, details := PageQuery(q)
		var locs []string
		for _, d := range details {
			locs = append(locs, fmt.Sprint(d.Loc[1]))
		}
		if page != tc.page || size != tc.size || !slices.Equal(locs, tc.locs) {
			t.Errorf("%q: page %d, size %d, details at %v; want %d, %d, %v", tc.query, page, size, locs, tc.page, tc.size, tc.locs)
		}
	}
}
