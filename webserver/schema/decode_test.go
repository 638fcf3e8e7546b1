package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// want is one expected detail. loc and ctx are JSON text (ctx "" = absent);
// input is JSON text too, or "" to leave it unchecked.
type want struct {
	loc, typ, msg, ctx, input string
}

const (
	depotOK = `{"address":"1 Main Street"}`
	orderOK = `{"id":"o1","address":"10 Elm Street"}`
	fleetOK = `{"count":2,"capacity":10}`
	vehOK   = `{"id":"v1","capacity":10}`
)

// Request builders: each puts its argument in an otherwise valid request.
func withTop(fields string) string {
	return `{"depot":` + depotOK + `,"orders":[` + orderOK + `],"fleet":` + fleetOK + fields + `}`
}
func withDepot(d string) string {
	return `{"depot":` + d + `,"orders":[` + orderOK + `],"fleet":` + fleetOK + `}`
}
func withOrders(o string) string {
	return `{"depot":` + depotOK + `,"orders":` + o + `,"fleet":` + fleetOK + `}`
}
func withOrder(o string) string { return withOrders("[" + o + "]") }
func withFleet(f string) string {
	return `{"depot":` + depotOK + `,"orders":[` + orderOK + `],"fleet":` + f + `}`
}
func withVehicles(v string) string {
	return `{"depot":` + depotOK + `,"orders":[` + orderOK + `],"vehicles":` + v + `}`
}
func withVehicle(v string) string { return withVehicles("[" + v + "]") }
func withOptions(o string) string { return withTop(`,"options":` + o) }

// repeatJSON joins n copies of item (with %d replaced by the index) as a JSON array.
func repeatJSON(item string, n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strings.ReplaceAll(item, "%d", fmt.Sprint(i))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// checkDetails compares details with the expected list, entry by entry.
func checkDetails(t *testing.T, got []Detail, wants []want) {
	t.Helper()
	type shape struct {
		Loc   json.RawMessage `json:"loc"`
		Type  string          `json:"type"`
		Msg   string          `json:"msg"`
		Input json.RawMessage `json:"input"`
		Ctx   json.RawMessage `json:"ctx"`
	}
	if len(got) != len(wants) {
		all, _ := json.Marshal(got)
		t.Fatalf("got %d details, want %d: %s", len(got), len(wants), all)
	}
	for i, w := range wants {
		raw, err := json.Marshal(got[i])
		if err != nil {
			t.Fatalf("detail %d does not marshal: %v", i, err)
		}
		var s shape
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		if string(s.Loc) != w.loc || s.Type != w.typ || s.Msg != w.msg || string(s.Ctx) != w.ctx {
			t.Errorf("detail %d:\n got  loc=%s type=%s msg=%q ctx=%s\n want loc=%s type=%s msg=%q ctx=%s",
				i, s.Loc, s.Type, s.Msg, s.Ctx, w.loc, w.typ, w.msg, w.ctx)
		}
		if w.input != "" && string(s.Input) != w.input {
			t.Errorf("detail %d: input %s, want %s", i, s.Input, w.input)
		}
		if !bytes.Contains(raw, []byte(`"input":`)) {
			t.Errorf("detail %d: input key missing in %s", i, raw)
		}
	}
}

func TestDecodeOptimizationIn(t *testing.T) {
	e80, e81 := strings.Repeat("é", 80), strings.Repeat("é", 81)
	s := strings.Repeat
	var (
		missing     = "Field required"
		extra       = "Extra inputs are not permitted"
		strType     = "Input should be a valid string"
		floatType   = "Input should be a valid number"
		floatParse  = "Input should be a valid number, unable to parse string as a number"
		intType     = "Input should be a valid integer"
		intParse    = "Input should be a valid integer, unable to parse string as an integer"
		intFrac     = "Input should be a valid integer, got a number with a fractional part"
		modelAttrs  = "Input should be a valid dictionary or object to extract fields from"
		listType    = "Input should be a valid list"
		pattern     = "String should match pattern '^([01][0-9]|2[0-3]):[0-5][0-9]$'"
		patternCtx  = `{"pattern":"^([01][0-9]|2[0-3]):[0-5][0-9]$"}`
		valueErrCtx = `{"error":{}}`
		strategyErr = want{`["body","options","strategy"]`, "literal_error", "Input should be 'optimized' or 'baseline'", `{"expected":"'optimized' or 'baseline'"}`, ""}
	)
	tooLong := func(loc string, n int) want {
		return want{loc, "string_too_long", fmt.Sprintf("String should have at most %d characters", n), fmt.Sprintf(`{"max_length":%d}`, n), ""}
	}
	cases := []struct {
		name  string
		body  string
		wants []want                      // nil: the body is valid
		check func(*OptimizationIn) error // optional, for valid bodies
	}{
		// Valid requests, bounds just inside, coercions.
		{name: "minimal with fleet", body: withTop(""), check: func(o *OptimizationIn) error {
			if o.Fleet == nil || o.Fleet.Count != 2 || o.Fleet.ShiftStart != "08:00" || o.Fleet.ShiftEnd != "18:00" || o.Fleet.NamePrefix != "Vehicle" || o.Vehicles != nil {
				return fmt.Errorf("fleet defaults: %+v", o.Fleet)
			}
			if o.Orders[0].Demand != 1 || o.Orders[0].ServiceMinutes != 5 || o.Options.Strategy != "optimized" || o.Options.Objective != "distance" || o.Options.SolverSeconds != nil {
				return fmt.Errorf("order/options defaults: %+v %+v", o.Orders[0], o.Options)
			}
			return nil
		}},
		{name: "vehicles with defaults", body: withVehicle(vehOK), check: func(o *OptimizationIn) error {
			if len(o.Vehicles) != 1 || o.Fleet != nil || o.Vehicles[0].ShiftStart != "08:00" || o.Vehicles[0].ShiftEnd != "18:00" || o.Vehicles[0].FixedCost != 0 {
				return fmt.Errorf("%+v", o.Vehicles)
			}
			return nil
		}},
		{name: "null vehicles count as absent", body: withTop(`,"vehicles":null`)},
		{name: "name 120 chars", body: withTop(`,"name":"` + s("n", 120) + `"`)},
		{name: "depot bounds inside", body: withDepot(`{"label":"` + s("l", 120) + `","address":"` + s("a", 300) + `","latitude":-90,"longitude":180}`)},
		{name: "depot coordinates only", body: withDepot(`{"latitude":90.0,"longitude":-180}`)},
		{name: "depot address 5 chars", body: withDepot(`{"address":"abcde"}`)},
		{name: "order id 80 x é", body: withOrder(`{"id":"` + e80 + `","address":"x"}`)},
		{name: "order text bounds inside", body: withOrder(`{"id":"o","address":"` + s("a", 300) + `","city":"` + s("c", 100) + `","region":"` + s("r", 100) + `","postal_code":"` + s("p", 20) + `","country":"` + s("c", 60) + `","customer":"` + s("c", 200) + `","phone":"` + s("p", 40) + `","notes":"` + s("n", 500) + `"}`)},
		{name: "order quantities at bounds", body: withOrders(`[{"id":"a","address":"x","demand":0,"service_minutes":0},{"id":"b","address":"x","demand":1000000,"service_minutes":1440}]`)},
		{name: "time window full day", body: withOrder(`{"id":"o","address":"x","time_window_start":"00:00","time_window_end":"23:59"}`)},
		{name: "empty address with coordinates", body: withOrder(`{"id":"o","address":"","latitude":1,"longitude":2}`)},
		{name: "coercions accepted", body: withFleet(`{"count":"2","capacity":"1e3","fixed_cost":true}`), check: func(o *OptimizationIn) error {
			if o.Fleet.Count != 2 || o.Fleet.Capacity != 1000 || o.Fleet.FixedCost != 1 {
				return fmt.Errorf("%+v", o.Fleet)
			}
			return nil
		}},
		{name: "int from 2.0 and true", body: withFleet(`{"count":2.0,"capacity":10}`)},
		{name: "int from true", body: withFleet(`{"count":true,"capacity":10}`), check: func(o *OptimizationIn) error {
			if o.Fleet.Count != 1 {
				return fmt.Errorf("count %d", o.Fleet.Count)
			}
			return nil
		}},
		{name: "float from padded string and bool", body: withOrder(`{"id":"o","address":"x","demand":" 5 ","service_minutes":false}`), check: func(o *OptimizationIn) error {
			if o.Orders[0].Demand != 5 || o.Orders[0].ServiceMinutes != 0 {
				return fmt.Errorf("%+v", o.Orders[0])
			}
			return nil
		}},
		{name: "500 orders", body: withOrders(repeatJSON(`{"id":"o%d","address":"x"}`, 500))},
		{name: "100 vehicles", body: withVehicles(repeatJSON(`{"id":"v%d","capacity":1}`, 100))},
		{name: "options at bounds", body: withOptions(`{"strategy":"baseline","objective":"duration","solver_seconds":60}`), check: func(o *OptimizationIn) error {
			if o.Options.SolverSeconds == nil || *o.Options.SolverSeconds != 60 || o.Options.Strategy != "baseline" {
				return fmt.Errorf("%+v", o.Options)
			}
			return nil
		}},
		{name: "solver_seconds null", body: withOptions(`{"solver_seconds":null}`)},
		{name: "duplicate key last wins", body: withTop(`,"name":5,"name":"ok"`), check: func(o *OptimizationIn) error {
			if o.Name == nil || *o.Name != "ok" {
				return fmt.Errorf("name %v", o.Name)
			}
			return nil
		}},

		// Whole body.
		{name: "empty body", body: ``, wants: []want{{`["body"]`, "missing", missing, "", `null`}}},
		{name: "null body", body: ` null `, wants: []want{{`["body"]`, "missing", missing, "", `null`}}},
		{name: "array body", body: `[1,2.50]`, wants: []want{{`["body"]`, "model_attributes_type", modelAttrs, "", `[1,2.5]`}}},
		{name: "string body", body: `"x"`, wants: []want{{`["body"]`, "model_attributes_type", modelAttrs, "", `"x"`}}},
		{name: "number body", body: `1e2`, wants: []want{{`["body"]`, "model_attributes_type", modelAttrs, "", `100.0`}}},
		{name: "invalid JSON", body: `{"depot":}`, wants: []want{{`["body",9]`, "json_invalid", "JSON decode error", `{"error":"Expecting value"}`, `{}`}}},
		{name: "invalid JSON char offset", body: `{"name":"ééé",}`, wants: []want{{`["body",13]`, "json_invalid", "JSON decode error", `{"error":"Illegal trailing comma before end of object"}`, `{}`}}},
		{name: "whitespace body", body: `   `, wants: []want{{`["body",3]`, "json_invalid", "JSON decode error", `{"error":"Expecting value"}`, `{}`}}},
		{name: "empty object", body: `{}`, wants: []want{
			{`["body","depot"]`, "missing", missing, "", `{}`},
			{`["body","orders"]`, "missing", missing, "", `{}`},
		}},

		// Top-level fields.
		{name: "name too long", body: withTop(`,"name":"` + s("n", 121) + `"`), wants: []want{tooLong(`["body","name"]`, 120)}},
		{name: "name not a string", body: withTop(`,"name":true`), wants: []want{{`["body","name"]`, "string_type", strType, "", `true`}}},
		{name: "unknown top-level field", body: withTop(`,"vehicle":[]`), wants: []want{{`["body","vehicle"]`, "extra_forbidden", extra, "", `[]`}}},
		{name: "both vehicles and fleet", body: withTop(`,"vehicles":[` + vehOK + `]`), wants: []want{{`["body"]`, "value_error", "Value error, give either vehicles or fleet, not both", valueErrCtx, ""}}},
		{name: "neither vehicles nor fleet", body: `{"depot":` + depotOK + `,"orders":[` + orderOK + `],"fleet":null}`, wants: []want{{`["body"]`, "value_error", "Value error, either vehicles or fleet is required", valueErrCtx, `{"depot":{"address":"1 Main Street"},"orders":[{"id":"o1","address":"10 Elm Street"}],"fleet":null}`}}},
		{name: "cross-field rule skipped when a field fails", body: withTop(`,"vehicles":[` + vehOK + `],"name":1`), wants: []want{{`["body","name"]`, "string_type", strType, "", ""}}},
		{name: "field errors in declaration order, extras last", body: `{"zz":1,"options":{"strategy":"x"},"name":2,"orders":{},"depot":null}`, wants: []want{
			{`["body","name"]`, "string_type", strType, "", `2`},
			{`["body","depot"]`, "model_attributes_type", modelAttrs, "", `null`},
			{`["body","orders"]`, "list_type", listType, "", `{}`},
			strategyErr,
			{`["body","zz"]`, "extra_forbidden", extra, "", `1`},
		}},

		// Depot.
		{name: "depot label too long", body: withDepot(`{"label":"` + s("l", 121) + `","address":"1 Main Street"}`), wants: []want{tooLong(`["body","depot","label"]`, 120)}},
		{name: "depot address too short", body: withDepot(`{"address":"abcd"}`), wants: []want{{`["body","depot","address"]`, "string_too_short", "String should have at least 5 characters", `{"min_length":5}`, `"abcd"`}}},
		{name: "depot address too long", body: withDepot(`{"address":"` + s("a", 301) + `"}`), wants: []want{tooLong(`["body","depot","address"]`, 300)}},
		{name: "depot latitude above 90", body: withDepot(`{"latitude":90.5,"longitude":0}`), wants: []want{{`["body","depot","latitude"]`, "less_than_equal", "Input should be less than or equal to 90", `{"le":90.0}`, `90.5`}}},
		{name: "depot latitude below -90", body: withDepot(`{"latitude":-90.000001,"longitude":0}`), wants: []want{{`["body","depot","latitude"]`, "greater_than_equal", "Input should be greater than or equal to -90", `{"ge":-90.0}`, ""}}},
		{name: "depot longitude out of range", body: withDepot(`{"latitude":0,"longitude":-181}`), wants: []want{{`["body","depot","longitude"]`, "greater_than_equal", "Input should be greater than or equal to -180", `{"ge":-180.0}`, `-181`}}},
		{name: "depot longitude above 180 as string", body: withDepot(`{"latitude":0,"longitude":"180.1"}`), wants: []want{{`["body","depot","longitude"]`, "less_than_equal", "Input should be less than or equal to 180", `{"le":180.0}`, `"180.1"`}}},
		{name: "depot latitude not a number", body: withDepot(`{"latitude":"north","longitude":0}`), wants: []want{{`["body","depot","latitude"]`, "float_parsing", floatParse, "", `"north"`}}},
		{name: "depot latitude without longitude", body: withDepot(`{"latitude":1}`), wants: []want{{`["body","depot"]`, "value_error", "Value error, latitude and longitude must be given together", valueErrCtx, `{"latitude":1}`}}},
		{name: "depot without location", body: withDepot(`{"label":"HQ","address":null}`), wants: []want{{`["body","depot"]`, "value_error", "Value error, depot needs an address or both latitude and longitude", valueErrCtx, ""}}},
		{name: "depot null", body: withDepot(`null`), wants: []want{{`["body","depot"]`, "model_attributes_type", modelAttrs, "", `null`}}},
		{name: "depot unknown field", body: withDepot(`{"address":"1 Main Street","zip":"x"}`), wants: []want{{`["body","depot","zip"]`, "extra_forbidden", extra, "", `"x"`}}},

		// Orders list.
		{name: "orders missing", body: `{"depot":` + depotOK + `,"fleet":` + fleetOK + `}`, wants: []want{{`["body","orders"]`, "missing", missing, "", ""}}},
		{name: "orders empty", body: withOrders(`[]`), wants: []want{{`["body","orders"]`, "too_short", "List should have at least 1 item after validation, not 0", `{"field_type":"List","min_length":1,"actual_length":0}`, `[]`}}},
		{name: "orders not a list", body: withOrders(`"o1"`), wants: []want{{`["body","orders"]`, "list_type", listType, "", `"o1"`}}},
		{name: "501 orders, items not validated", body: withOrders(strings.Replace(repeatJSON(`{"id":"o%d","address":"x"}`, 501), `"o0"`, `0`, 1)), wants: []want{
			{`["body","orders"]`, "too_long", "List should have at most 500 items after validation, not 501", `{"field_type":"List","max_length":500,"actual_length":501}`, ""}}},
		{name: "order not an object", body: withOrder(`"o1"`), wants: []want{{`["body","orders",0]`, "model_attributes_type", modelAttrs, "", `"o1"`}}},
		{name: "duplicate order ids", body: withOrders(`[{"id":"a","address":"x"},{"id":"b","address":"x"},{"id":"a","address":"y"}]`), wants: []want{{`["body","orders"]`, "value_error", `Value error, order ids must be unique; duplicated: "a"`, valueErrCtx, ""}}},
		{name: "errors of several orders", body: withOrders(`[{"address":"x"},` + orderOK + `,{"id":"c","address":"x","demand":-1}]`), wants: []want{
			{`["body","orders",0,"id"]`, "missing", missing, "", `{"address":"x"}`},
			{`["body","orders",2,"demand"]`, "greater_than_equal", "Input should be greater than or equal to 0", `{"ge":0.0}`, `-1`},
		}},

		// Order fields.
		{name: "order id empty", body: withOrder(`{"id":"","address":"x"}`), wants: []want{{`["body","orders",0,"id"]`, "string_too_short", "String should have at least 1 character", `{"min_length":1}`, `""`}}},
		{name: "order id 81 x é", body: withOrder(`{"id":"` + e81 + `","address":"x"}`), wants: []want{tooLong(`["body","orders",0,"id"]`, 80)}},
		{name: "order id a number", body: withOrder(`{"id":5,"address":"x"}`), wants: []want{{`["body","orders",0,"id"]`, "string_type", strType, "", `5`}}},
		{name: "order texts too long, in field order", body: withOrder(`{"notes":"` + s("n", 501) + `","phone":"` + s("p", 41) + `","customer":"` + s("c", 201) + `","country":"` + s("c", 61) + `","postal_code":"` + s("p", 21) + `","region":"` + s("r", 101) + `","city":"` + s("c", 101) + `","address":"` + s("a", 301) + `","id":"o"}`), wants: []want{
			tooLong(`["body","orders",0,"address"]`, 300),
			tooLong(`["body","orders",0,"city"]`, 100),
			tooLong(`["body","orders",0,"region"]`, 100),
			tooLong(`["body","orders",0,"postal_code"]`, 20),
			tooLong(`["body","orders",0,"country"]`, 60),
			tooLong(`["body","orders",0,"customer"]`, 200),
			tooLong(`["body","orders",0,"phone"]`, 40),
			tooLong(`["body","orders",0,"notes"]`, 500),
		}},
		{name: "order demand above max", body: withOrder(`{"id":"o","address":"x","demand":1000000.5}`), wants: []want{{`["body","orders",0,"demand"]`, "less_than_equal", "Input should be less than or equal to 1000000", `{"le":1000000.0}`, `1000000.5`}}},
		{name: "order demand null", body: withOrder(`{"id":"o","address":"x","demand":null}`), wants: []want{{`["body","orders",0,"demand"]`, "float_type", floatType, "", `null`}}},
		{name: "order demand list", body: withOrder(`{"id":"o","address":"x","demand":[1]}`), wants: []want{{`["body","orders",0,"demand"]`, "float_type", floatType, "", `[1]`}}},
		{name: "order demand word", body: withOrder(`{"id":"o","address":"x","demand":"lots"}`), wants: []want{{`["body","orders",0,"demand"]`, "float_parsing", floatParse, "", `"lots"`}}},
		{name: "order demand NaN", body: withOrder(`{"id":"o","address":"x","demand":NaN}`), wants: []want{{`["body","orders",0,"demand"]`, "finite_number", "Input should be a finite number", "", `"NaN"`}}},
		{name: "order demand Infinity", body: withOrder(`{"id":"o","address":"x","demand":Infinity}`), wants: []want{{`["body","orders",0,"demand"]`, "less_than_equal", "Input should be less than or equal to 1000000", `{"le":1000000.0}`, `"Infinity"`}}},
		{name: "service minutes above a day", body: withOrder(`{"id":"o","address":"x","service_minutes":1441}`), wants: []want{{`["body","orders",0,"service_minutes"]`, "less_than_equal", "Input should be less than or equal to 1440", `{"le":1440.0}`, `1441`}}},
		{name: "bad time windows", body: withOrder(`{"id":"o","address":"x","time_window_start":"8:00","time_window_end":"24:00"}`), wants: []want{
			{`["body","orders",0,"time_window_start"]`, "string_pattern_mismatch", pattern, patternCtx, `"8:00"`},
			{`["body","orders",0,"time_window_end"]`, "string_pattern_mismatch", pattern, patternCtx, `"24:00"`},
		}},
		{name: "time window minutes 60 and number", body: withOrder(`{"id":"o","address":"x","time_window_start":"12:60","time_window_end":1200}`), wants: []want{
			{`["body","orders",0,"time_window_start"]`, "string_pattern_mismatch", pattern, patternCtx, ""},
			{`["body","orders",0,"time_window_end"]`, "string_type", strType, "", `1200`},
		}},
		{name: "time window reversed", body: withOrder(`{"id":"o","address":"x","time_window_start":"17:00","time_window_end":"09:00"}`), wants: []want{{`["body","orders",0]`, "value_error", "Value error, time_window_start must not be after time_window_end", valueErrCtx, ""}}},
		{name: "order without location", body: withOrder(`{"id":"o","city":"Springfield"}`), wants: []want{{`["body","orders",0]`, "value_error", "Value error, order needs an address or both latitude and longitude", valueErrCtx, `{"id":"o","city":"Springfield"}`}}},
		{name: "order empty address is no address", body: withOrder(`{"id":"o","address":""}`), wants: []want{{`["body","orders",0]`, "value_error", "Value error, order needs an address or both latitude and longitude", valueErrCtx, ""}}},
		{name: "order longitude without latitude", body: withOrder(`{"id":"o","address":"x","longitude":3}`), wants: []want{{`["body","orders",0]`, "value_error", "Value error, latitude and longitude must be given together", valueErrCtx, ""}}},
		{name: "order unknown field", body: withOrder(`{"id":"o","address":"x","qty":3}`), wants: []want{{`["body","orders",0,"qty"]`, "extra_forbidden", extra, "", `3`}}},

		// Vehicles.
		{name: "vehicles empty", body: withVehicles(`[]`), wants: []want{{`["body","vehicles"]`, "too_short", "List should have at least 1 item after validation, not 0", `{"field_type":"List","min_length":1,"actual_length":0}`, ""}}},
		{name: "101 vehicles", body: withVehicles(repeatJSON(`{"id":"v%d","capacity":1}`, 101)), wants: []want{{`["body","vehicles"]`, "too_long", "List should have at most 100 items after validation, not 101", `{"field_type":"List","max_length":100,"actual_length":101}`, ""}}},
		{name: "vehicles an object", body: withVehicles(vehOK), wants: []want{{`["body","vehicles"]`, "list_type", listType, "", ""}}},
		{name: "vehicle capacity zero", body: withVehicle(`{"id":"v","capacity":0}`), wants: []want{{`["body","vehicles",0,"capacity"]`, "greater_than", "Input should be greater than 0", `{"gt":0.0}`, `0`}}},
		{name: "vehicle capacity above max", body: withVehicle(`{"id":"v","capacity":1000000.01}`), wants: []want{{`["body","vehicles",0,"capacity"]`, "less_than_equal", "Input should be less than or equal to 1000000", `{"le":1000000.0}`, ""}}},
		{name: "vehicle missing fields", body: withVehicle(`{"driver":null}`), wants: []want{
			{`["body","vehicles",0,"id"]`, "missing", missing, "", `{"driver":null}`},
			{`["body","vehicles",0,"capacity"]`, "missing", missing, "", `{"driver":null}`},
		}},
		{name: "vehicle shifts", body: withVehicle(`{"id":"v","capacity":1,"shift_start":"8am","shift_end":null}`), wants: []want{
			{`["body","vehicles",0,"shift_start"]`, "string_pattern_mismatch", pattern, patternCtx, ""},
			{`["body","vehicles",0,"shift_end"]`, "string_type", strType, "", `null`},
		}},
		{name: "fleet shifts not HH:MM", body: withFleet(`{"count":1,"capacity":1,"shift_start":"08.30","shift_end":"18:00\n"}`), wants: []want{
			{`["body","fleet","shift_start"]`, "string_pattern_mismatch", pattern, patternCtx, `"08.30"`},
			{`["body","fleet","shift_end"]`, "string_pattern_mismatch", pattern, patternCtx, `"18:00\n"`},
		}},
		{name: "vehicle shift reversed", body: withVehicle(`{"id":"v","capacity":1,"shift_start":"19:00"}`), wants: []want{{`["body","vehicles",0]`, "value_error", "Value error, shift_start must not be after shift_end", valueErrCtx, `{"id":"v","capacity":1,"shift_start":"19:00"}`}}},
		{name: "vehicle driver and fixed cost", body: withVehicle(`{"id":"v","capacity":1,"driver":"` + s("d", 121) + `","fixed_cost":-0.5}`), wants: []want{
			tooLong(`["body","vehicles",0,"driver"]`, 120),
			{`["body","vehicles",0,"fixed_cost"]`, "greater_than_equal", "Input should be greater than or equal to 0", `{"ge":0.0}`, `-0.5`},
		}},
		{name: "duplicate vehicle ids", body: withVehicles(`[{"id":"v","capacity":1},{"id":"v","capacity":2}]`), wants: []want{{`["body","vehicles"]`, "value_error", `Value error, vehicle ids must be unique; duplicated: "v"`, valueErrCtx, ""}}},
		{name: "vehicle unknown field", body: withVehicle(`{"id":"v","capacity":1,"speed":50}`), wants: []want{{`["body","vehicles",0,"speed"]`, "extra_forbidden", extra, "", `50`}}},

		// Fleet.
		{name: "fleet count fractional", body: withFleet(`{"count":2.5,"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "int_from_float", intFrac, "", `2.5`}}},
		{name: "fleet count string fraction", body: withFleet(`{"count":"2.5","capacity":1}`), wants: []want{{`["body","fleet","count"]`, "int_parsing", intParse, "", `"2.5"`}}},
		{name: "fleet count word", body: withFleet(`{"count":"two","capacity":1}`), wants: []want{{`["body","fleet","count"]`, "int_parsing", intParse, "", `"two"`}}},
		{name: "fleet count null", body: withFleet(`{"count":null,"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "int_type", intType, "", `null`}}},
		{name: "fleet count object", body: withFleet(`{"count":{},"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "int_type", intType, "", `{}`}}},
		{name: "fleet count zero", body: withFleet(`{"count":0,"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "greater_than_equal", "Input should be greater than or equal to 1", `{"ge":1}`, `0`}}},
		{name: "fleet count 101", body: withFleet(`{"count":101,"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "less_than_equal", "Input should be less than or equal to 100", `{"le":100}`, `101`}}},
		{name: "fleet count huge int", body: withFleet(`{"count":123456789012345678901234567890,"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "less_than_equal", "Input should be less than or equal to 100", `{"le":100}`, `123456789012345678901234567890`}}},
		{name: "fleet count huge float", body: withFleet(`{"count":1e20,"capacity":1}`), wants: []want{{`["body","fleet","count"]`, "int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size", "", `1e+20`}}},
		{name: "fleet missing count and capacity", body: withFleet(`{}`), wants: []want{
			{`["body","fleet","count"]`, "missing", missing, "", `{}`},
			{`["body","fleet","capacity"]`, "missing", missing, "", `{}`},
		}},
		{name: "fleet name prefix bounds", body: withFleet(`{"count":1,"capacity":1,"name_prefix":""}`), wants: []want{{`["body","fleet","name_prefix"]`, "string_too_short", "String should have at least 1 character", `{"min_length":1}`, `""`}}},
		{name: "fleet name prefix too long", body: withFleet(`{"count":1,"capacity":1,"name_prefix":"` + s("x", 41) + `"}`), wants: []want{tooLong(`["body","fleet","name_prefix"]`, 40)}},
		{name: "fleet shift reversed", body: withFleet(`{"count":1,"capacity":1,"shift_end":"07:59"}`), wants: []want{{`["body","fleet"]`, "value_error", "Value error, shift_start must not be after shift_end", valueErrCtx, ""}}},
		{name: "fleet a list", body: withFleet(`[` + fleetOK + `]`), wants: []want{{`["body","fleet"]`, "model_attributes_type", modelAttrs, "", ""}}},
		{name: "fleet unknown field", body: withFleet(`{"count":1,"capacity":1,"size":3}`), wants: []want{{`["body","fleet","size"]`, "extra_forbidden", extra, "", `3`}}},

		// Options.
		{name: "bad strategy", body: withOptions(`{"strategy":"fast"}`), wants: []want{strategyErr}},
		{name: "strategy null", body: withOptions(`{"strategy":null}`), wants: []want{{`["body","options","strategy"]`, "literal_error", "Input should be 'optimized' or 'baseline'", `{"expected":"'optimized' or 'baseline'"}`, `null`}}},
		{name: "objective wrong case", body: withOptions(`{"objective":"Distance"}`), wants: []want{{`["body","options","objective"]`, "literal_error", "Input should be 'distance' or 'duration'", `{"expected":"'distance' or 'duration'"}`, `"Distance"`}}},
		{name: "solver seconds out of range", body: withOptions(`{"solver_seconds":61}`), wants: []want{{`["body","options","solver_seconds"]`, "less_than_equal", "Input should be less than or equal to 60", `{"le":60}`, `61`}}},
		{name: "solver seconds zero as string", body: withOptions(`{"solver_seconds":"0"}`), wants: []want{{`["body","options","solver_seconds"]`, "greater_than_equal", "Input should be greater than or equal to 1", `{"ge":1}`, `"0"`}}},
		{name: "solver seconds fractional", body: withOptions(`{"solver_seconds":2.5}`), wants: []want{{`["body","options","solver_seconds"]`, "int_from_float", intFrac, "", `2.5`}}},
		{name: "options null", body: withOptions(`null`), wants: []want{{`["body","options"]`, "model_attributes_type", modelAttrs, "", `null`}}},
		{name: "options unknown field", body: withOptions(`{"seed":1}`), wants: []want{{`["body","options","seed"]`, "extra_forbidden", extra, "", `1`}}},
	}
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, details := DecodeOptimizationIn([]byte(tc.body))
			if tc.wants == nil {
				if len(details) > 0 || got == nil {
					all, _ := json.Marshal(details)
					t.Fatalf("want valid, got %s", all)
				}
				if tc.check != nil {
					if err := tc.check(got); err != nil {
						t.Error(err)
					}
				}
				return
			}
			if got != nil {
				t.Errorf("got a value along with errors")
			}
			checkDetails(t, details, tc.wants)
		})
	}
}
