package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// withFleetOrders puts orders and a fleet in an otherwise valid request.
func withFleetOrders(orders, fleet string) string {
	return `{"depot":` + depotOK + `,"orders":` + orders + `,"fleet":` + fleet + `}`
}

// withVehicleOrders puts orders and vehicles in an otherwise valid request.
func withVehicleOrders(orders, vehicles string) string {
	return `{"depot":` + depotOK + `,"orders":` + orders + `,"vehicles":` + vehicles + `}`
}

func TestDecodeFleetConstraints(t *testing.T) {
	s := strings.Repeat
	var (
		extra       = "Extra inputs are not permitted"
		missing     = "Field required"
		strType     = "Input should be a valid string"
		floatType   = "Input should be a valid number"
		floatParse  = "Input should be a valid number, unable to parse string as a number"
		intType     = "Input should be a valid integer"
		intFrac     = "Input should be a valid integer, got a number with a fractional part"
		modelAttrs  = "Input should be a valid dictionary or object to extract fields from"
		listType    = "Input should be a valid list"
		dictType    = "Input should be a valid dictionary"
		boolParse   = "Input should be a valid boolean, unable to interpret input"
		boolType    = "Input should be a valid boolean"
		pattern     = "String should match pattern '^([01][0-9]|2[0-3]):[0-5][0-9]$'"
		patternCtx  = `{"pattern":"^([01][0-9]|2[0-3]):[0-5][0-9]$"}`
		valueErrCtx = `{"error":{}}`
	)
	tooLong := func(loc string, n int) want {
		return want{loc, "string_too_long", fmt.Sprintf("String should have at most %d characters", n), fmt.Sprintf(`{"max_length":%d}`, n), ""}
	}
	tooShort := func(loc string) want {
		return want{loc, "string_too_short", "String should have at least 1 character", `{"min_length":1}`, ""}
	}
	le := func(loc, bound, input string) want {
		return want{loc, "less_than_equal", "Input should be less than or equal to " + bound, `{"le":` + bound + `}`, input}
	}
	leF := func(loc, bound, input string) want {
		return want{loc, "less_than_equal", "Input should be less than or equal to " + bound, `{"le":` + bound + `.0}`, input}
	}
	ge := func(loc, bound, input string) want {
		return want{loc, "greater_than_equal", "Input should be greater than or equal to " + bound, `{"ge":` + bound + `}`, input}
	}
	geF := func(loc, bound, input string) want {
		return want{loc, "greater_than_equal", "Input should be greater than or equal to " + bound, `{"ge":` + bound + `.0}`, input}
	}
	gt0 := func(loc, input string) want {
		return want{loc, "greater_than", "Input should be greater than 0", `{"gt":0.0}`, input}
	}
	valueErr := func(loc, msg string) want {
		return want{loc, "value_error", "Value error, " + msg, valueErrCtx, ""}
	}
	listTooLong := func(loc string, max, n int) want {
		return want{loc, "too_long", fmt.Sprintf("List should have at most %d item%s after validation, not %d", max, plural(max), n), fmt.Sprintf(`{"field_type":"List","max_length":%d,"actual_length":%d}`, max, n), ""}
	}
	dictTooLong := want{`["body","orders",0,"loads"]`, "too_long", "Dictionary should have at most 4 items after validation, not 5", `{"field_type":"Dictionary","max_length":4,"actual_length":5}`, ""}
	order := func(fields string) string { return withOrder(`{"id":"o","address":"x"` + fields + `}`) }
	vehicle := func(fields string) string { return withVehicle(`{"id":"v","capacity":1` + fields + `}`) }
	fleet := func(fields string) string { return withFleet(`{"count":1,"capacity":1` + fields + `}`) }
	skills10 := repeatJSON(`"`+s("é", 38)+`%d"`, 10)
	fourDims := `{"a":0,"b":1000000,"` + s("n", 40) + `":"5","d":true}`
	fourCaps := `{"a":1000000,"b":0.001,"` + s("n", 40) + `":1,"d":1}`

	cases := []struct {
		name  string
		body  string
		wants []want
		check func(*OptimizationIn) error
	}{
		// Valid requests, bounds just inside.
		{name: "order constraints at their bounds", body: withFleetOrders(
			`[{"id":"o","address":"x","time_windows":[{"start":"00:00","end":"08:00"},{"start":"08:01","end":"08:01"},{"start":"12:00","end":"13:00"},{"start":"13:01","end":"23:59"}],"skills":`+skills10+`,"loads":`+fourDims+`,"priority":100},{"id":"p","address":"x","priority":"0","skills":[]}]`,
			`{"count":1,"capacity":1,"capacities":`+fourCaps+`}`),
			check: func(o *OptimizationIn) error {
				first := o.Orders[0]
				want := map[string]float64{"a": 0, "b": 1000000, s("n", 40): 5, "d": 1}
				if len(first.TimeWindows) != 4 || first.TimeWindows[1] != (TimeWindowIn{"08:01", "08:01"}) || len(first.Skills) != 10 || !reflect.DeepEqual(first.Loads, want) || first.Priority != 100 {
					return fmt.Errorf("%+v", first)
				}
				if second := o.Orders[1]; second.Priority != 0 || len(second.Skills) != 0 || second.TimeWindows != nil || second.Loads != nil {
					return fmt.Errorf("%+v", second)
				}
				return nil
			}},
		{name: "vehicle constraints at their bounds", body: vehicle(`,"shift_start":"08:00","shift_end":"18:00","skills":` + skills10 + `,"capacities":` + fourCaps +
			`,"breaks":[{"start":"08:00","end":"16:00","minutes":480},{"start":"08:00","end":"16:00","minutes":"1"},{"start":"17:59","end":"18:00","minutes":1}]` +
			`,"max_duration_minutes":1440,"max_distance_km":10000,"max_stops":500,"start":{"address":"Depot Street 2"},"end":{"label":"Home","latitude":-90,"longitude":180},"open_end":false`),
			check: func(o *OptimizationIn) error {
				c := o.Vehicles[0].VehicleConstraintsIn
				if len(c.Skills) != 10 || len(c.Capacities) != 4 || c.Capacities["b"] != 0.001 || len(c.Breaks) != 3 || c.Breaks[1] != (BreakIn{"08:00", "16:00", 1}) ||
					*c.MaxDurationMinutes != 1440 || *c.MaxDistanceKm != 10000 || *c.MaxStops != 500 || *c.Start.Address != "Depot Street 2" || *c.End.Latitude != -90 || c.OpenEnd {
					return fmt.Errorf("%+v", c)
				}
				return nil
			}},
		{name: "fleet route limits at their lower bounds, open end", body: fleet(`,"max_duration_minutes":"1","max_distance_km":0.001,"max_stops":1.0,"start":{"latitude":52.5,"longitude":13.4},"open_end":"yes"`),
			check: func(o *OptimizationIn) error {
				c := o.Fleet.VehicleConstraintsIn
				if *c.MaxDurationMinutes != 1 || *c.MaxDistanceKm != 0.001 || *c.MaxStops != 1 || *c.Start.Latitude != 52.5 || c.End != nil || !c.OpenEnd {
					return fmt.Errorf("%+v", c)
				}
				return nil
			}},
		{name: "nulls are absent", body: vehicle(`,"skills":null,"capacities":null,"breaks":null,"max_duration_minutes":null,"max_distance_km":null,"max_stops":null,"start":null,"end":null`),
			check: func(o *OptimizationIn) error {
				if c := o.Vehicles[0].VehicleConstraintsIn; !reflect.DeepEqual(c, VehicleConstraintsIn{}) {
					return fmt.Errorf("%+v", c)
				}
				return nil
			}},
		{name: "order nulls are absent", body: order(`,"time_windows":null,"skills":null,"loads":null`)},
		{name: "time windows beside null single-window fields", body: order(`,"time_window_start":null,"time_window_end":null,"time_windows":[{"start":"09:00","end":"10:00"}]`)},
		{name: "vehicles give the dimensions orders load", body: withVehicleOrders(`[{"id":"o","address":"x","loads":{"kg":1}},{"id":"p","address":"x","loads":{"l":2}}]`, `[{"id":"v","capacity":1,"capacities":{"kg":5,"l":5,"m3":1}},{"id":"w","capacity":1,"capacities":{"l":5,"kg":1}}]`)},
		{name: "capacities without loads", body: fleet(`,"capacities":{"kg":5}`)},

		// Order: time windows.
		{name: "time windows not a list", body: order(`,"time_windows":{"start":"09:00","end":"10:00"}`), wants: []want{{`["body","orders",0,"time_windows"]`, "list_type", listType, "", `{"start":"09:00","end":"10:00"}`}}},
		{name: "time windows empty", body: order(`,"time_windows":[]`), wants: []want{{`["body","orders",0,"time_windows"]`, "too_short", "List should have at least 1 item after validation, not 0", `{"field_type":"List","min_length":1,"actual_length":0}`, `[]`}}},
		{name: "five time windows", body: order(`,"time_windows":` + repeatJSON(`{"start":"0%d:00","end":"0%d:30"}`, 5)), wants: []want{listTooLong(`["body","orders",0,"time_windows"]`, 4, 5)}},
		{name: "time window items", body: order(`,"time_windows":["09:00",{"start":"9:00","end":1000,"note":"x"},{}]`), wants: []want{
			{`["body","orders",0,"time_windows",0]`, "model_attributes_type", modelAttrs, "", `"09:00"`},
			{`["body","orders",0,"time_windows",1,"start"]`, "string_pattern_mismatch", pattern, patternCtx, `"9:00"`},
			{`["body","orders",0,"time_windows",1,"end"]`, "string_type", strType, "", `1000`},
			{`["body","orders",0,"time_windows",1,"note"]`, "extra_forbidden", extra, "", `"x"`},
			{`["body","orders",0,"time_windows",2,"start"]`, "missing", missing, "", `{}`},
			{`["body","orders",0,"time_windows",2,"end"]`, "missing", missing, "", `{}`},
		}},
		{name: "time window reversed", body: order(`,"time_windows":[{"start":"09:00","end":"10:00"},{"start":"12:00","end":"11:00"}]`), wants: []want{
			{`["body","orders",0,"time_windows",1]`, "value_error", "Value error, start must not be after end", valueErrCtx, `{"start":"12:00","end":"11:00"}`}}},
		{name: "time windows touching", body: order(`,"time_windows":[{"start":"09:00","end":"12:00"},{"start":"12:00","end":"14:00"}]`), wants: []want{
			valueErr(`["body","orders",0,"time_windows"]`, "each time window must start after the previous one ends; 12:00-14:00 does not")}},
		{name: "time windows out of order", body: order(`,"time_windows":[{"start":"13:00","end":"14:00"},{"start":"09:00","end":"10:00"}]`), wants: []want{
			valueErr(`["body","orders",0,"time_windows"]`, "each time window must start after the previous one ends; 09:00-10:00 does not")}},
		{name: "time windows with time_window_start", body: order(`,"time_window_start":"09:00","time_windows":[{"start":"09:00","end":"10:00"}]`), wants: []want{
			valueErr(`["body","orders",0]`, "give either time_windows or time_window_start and time_window_end, not both")}},
		{name: "time windows with time_window_end", body: order(`,"time_window_end":"18:00","time_windows":[{"start":"09:00","end":"10:00"}]`), wants: []want{
			valueErr(`["body","orders",0]`, "give either time_windows or time_window_start and time_window_end, not both")}},
		{name: "location rule reported first", body: withOrder(`{"id":"o","time_window_start":"09:00","time_windows":[{"start":"09:00","end":"10:00"}]}`), wants: []want{
			valueErr(`["body","orders",0]`, "order needs an address or both latitude and longitude")}},

		// Order: skills, loads, priority.
		{name: "order skills not a list", body: order(`,"skills":"fridge"`), wants: []want{{`["body","orders",0,"skills"]`, "list_type", listType, "", `"fridge"`}}},
		{name: "eleven order skills", body: order(`,"skills":` + repeatJSON(`"s%d"`, 11)), wants: []want{listTooLong(`["body","orders",0,"skills"]`, 10, 11)}},
		{name: "order skill items", body: order(`,"skills":["","` + s("é", 41) + `",7]`), wants: []want{
			tooShort(`["body","orders",0,"skills",0]`),
			tooLong(`["body","orders",0,"skills",1]`, 40),
			{`["body","orders",0,"skills",2]`, "string_type", strType, "", `7`},
		}},
		{name: "loads not an object", body: order(`,"loads":[1]`), wants: []want{{`["body","orders",0,"loads"]`, "dict_type", dictType, "", `[1]`}}},
		{name: "loads empty", body: order(`,"loads":{}`), wants: []want{{`["body","orders",0,"loads"]`, "too_short", "Dictionary should have at least 1 item after validation, not 0", `{"field_type":"Dictionary","min_length":1,"actual_length":0}`, `{}`}}},
		{name: "five loads", body: order(`,"loads":{"a":1,"b":1,"c":1,"d":1,"e":1}`), wants: []want{dictTooLong}},
		{name: "load names and amounts", body: order(`,"loads":{"":1,"` + s("k", 41) + `":2,"kg":-1,"l":1000000.5,"m":"lots","n":null,"o":[]}`), wants: []want{
			{`["body","orders",0,"loads","","[key]"]`, "string_too_short", "String should have at least 1 character", `{"min_length":1}`, `""`},
			tooLong(`["body","orders",0,"loads","`+s("k", 41)+`","[key]"]`, 40),
			geF(`["body","orders",0,"loads","kg"]`, "0", `-1`),
			leF(`["body","orders",0,"loads","l"]`, "1000000", `1000000.5`),
			{`["body","orders",0,"loads","m"]`, "float_parsing", floatParse, "", `"lots"`},
			{`["body","orders",0,"loads","n"]`, "float_type", floatType, "", `null`},
			{`["body","orders",0,"loads","o"]`, "float_type", floatType, "", `[]`},
		}},
		{name: "item errors before the size of loads", body: order(`,"loads":{"a":1,"b":1,"c":1,"d":1,"e":-1}`), wants: []want{geF(`["body","orders",0,"loads","e"]`, "0", `-1`)}},
		{name: "priority above 100", body: order(`,"priority":101`), wants: []want{le(`["body","orders",0,"priority"]`, "100", `101`)}},
		{name: "priority negative", body: order(`,"priority":-1`), wants: []want{ge(`["body","orders",0,"priority"]`, "0", `-1`)}},
		{name: "priority fractional", body: order(`,"priority":2.5`), wants: []want{{`["body","orders",0,"priority"]`, "int_from_float", intFrac, "", `2.5`}}},
		{name: "priority null", body: order(`,"priority":null`), wants: []want{{`["body","orders",0,"priority"]`, "int_type", intType, "", `null`}}},
		{name: "order errors in declaration order", body: order(`,"priority":"high","loads":3,"skills":1,"time_windows":1,"notes":2`), wants: []want{
			{`["body","orders",0,"notes"]`, "string_type", strType, "", `2`},
			{`["body","orders",0,"time_windows"]`, "list_type", listType, "", `1`},
			{`["body","orders",0,"skills"]`, "list_type", listType, "", `1`},
			{`["body","orders",0,"loads"]`, "dict_type", dictType, "", `3`},
			{`["body","orders",0,"priority"]`, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", "", `"high"`},
		}},

		// Vehicles and fleets: skills, capacities.
		{name: "vehicle skills", body: vehicle(`,"skills":["fridge",""]`), wants: []want{tooShort(`["body","vehicles",0,"skills",1]`)}},
		{name: "fleet skills too many", body: fleet(`,"skills":` + repeatJSON(`"s%d"`, 11)), wants: []want{listTooLong(`["body","fleet","skills"]`, 10, 11)}},
		{name: "capacity zero and above max", body: vehicle(`,"capacities":{"kg":0,"l":1000000.01}`), wants: []want{
			gt0(`["body","vehicles",0,"capacities","kg"]`, `0`),
			leF(`["body","vehicles",0,"capacities","l"]`, "1000000", ``),
		}},
		{name: "fleet capacities empty", body: fleet(`,"capacities":{}`), wants: []want{{`["body","fleet","capacities"]`, "too_short", "Dictionary should have at least 1 item after validation, not 0", `{"field_type":"Dictionary","min_length":1,"actual_length":0}`, `{}`}}},
		{name: "fleet capacities not an object", body: fleet(`,"capacities":"kg"`), wants: []want{{`["body","fleet","capacities"]`, "dict_type", dictType, "", `"kg"`}}},

		// Breaks.
		{name: "four breaks", body: vehicle(`,"breaks":` + repeatJSON(`{"start":"09:00","end":"10:00","minutes":5}`, 4)), wants: []want{listTooLong(`["body","vehicles",0,"breaks"]`, 3, 4)}},
		{name: "break fields", body: vehicle(`,"breaks":[{"start":"9","end":null,"minutes":0},{"start":"09:00","end":"10:00","minutes":481,"paid":true},[]]`), wants: []want{
			{`["body","vehicles",0,"breaks",0,"start"]`, "string_pattern_mismatch", pattern, patternCtx, `"9"`},
			{`["body","vehicles",0,"breaks",0,"end"]`, "string_type", strType, "", `null`},
			ge(`["body","vehicles",0,"breaks",0,"minutes"]`, "1", `0`),
			le(`["body","vehicles",0,"breaks",1,"minutes"]`, "480", `481`),
			{`["body","vehicles",0,"breaks",1,"paid"]`, "extra_forbidden", extra, "", `true`},
			{`["body","vehicles",0,"breaks",2]`, "model_attributes_type", modelAttrs, "", `[]`},
		}},
		{name: "break fields missing", body: fleet(`,"breaks":[{"start":"09:00","end":"10:00"},{}]`), wants: []want{
			{`["body","fleet","breaks",0,"minutes"]`, "missing", missing, "", `{"start":"09:00","end":"10:00"}`},
			{`["body","fleet","breaks",1,"start"]`, "missing", missing, "", `{}`},
			{`["body","fleet","breaks",1,"end"]`, "missing", missing, "", `{}`},
			{`["body","fleet","breaks",1,"minutes"]`, "missing", missing, "", `{}`},
		}},
		{name: "break longer than its window", body: fleet(`,"breaks":[{"start":"12:00","end":"12:30","minutes":30},{"start":"12:00","end":"12:30","minutes":31}]`), wants: []want{
			{`["body","fleet","breaks",1]`, "value_error", "Value error, a break of 31 minutes does not fit between 12:00 and 12:30", valueErrCtx, `{"start":"12:00","end":"12:30","minutes":31}`}}},
		{name: "breaks out of order", body: fleet(`,"breaks":[{"start":"12:00","end":"14:00","minutes":30},{"start":"11:00","end":"15:00","minutes":30}]`), wants: []want{
			valueErr(`["body","fleet","breaks"]`, "breaks are taken in the listed order: each must start and end no earlier than the one before; 11:00-15:00 does not")}},
		{name: "break ending before the previous one", body: vehicle(`,"breaks":[{"start":"12:00","end":"14:00","minutes":30},{"start":"12:30","end":"13:30","minutes":30}]`), wants: []want{
			valueErr(`["body","vehicles",0,"breaks"]`, "breaks are taken in the listed order: each must start and end no earlier than the one before; 12:30-13:30 does not")}},
		{name: "break outside the shift", body: vehicle(`,"shift_start":"09:00","breaks":[{"start":"08:30","end":"10:00","minutes":30}]`), wants: []want{
			valueErr(`["body","vehicles",0]`, "each break must lie inside the shift 09:00-18:00; 08:30-10:00 does not")}},
		{name: "fleet break after the shift", body: fleet(`,"shift_end":"17:00","breaks":[{"start":"12:00","end":"13:00","minutes":30},{"start":"16:00","end":"17:01","minutes":30}]`), wants: []want{
			valueErr(`["body","fleet"]`, "each break must lie inside the shift 08:00-17:00; 16:00-17:01 does not")}},
		{name: "shift order reported before breaks", body: vehicle(`,"shift_start":"19:00","breaks":[{"start":"12:00","end":"13:00","minutes":30}]`), wants: []want{
			valueErr(`["body","vehicles",0]`, "shift_start must not be after shift_end")}},

		// Route limits.
		{name: "route limits below their bounds", body: vehicle(`,"max_duration_minutes":0,"max_distance_km":0,"max_stops":0`), wants: []want{
			ge(`["body","vehicles",0,"max_duration_minutes"]`, "1", `0`),
			gt0(`["body","vehicles",0,"max_distance_km"]`, `0`),
			ge(`["body","vehicles",0,"max_stops"]`, "1", `0`),
		}},
		{name: "route limits above their bounds", body: fleet(`,"max_duration_minutes":1441,"max_distance_km":10000.5,"max_stops":"501"`), wants: []want{
			le(`["body","fleet","max_duration_minutes"]`, "1440", `1441`),
			leF(`["body","fleet","max_distance_km"]`, "10000", `10000.5`),
			le(`["body","fleet","max_stops"]`, "500", `"501"`),
		}},
		{name: "route limits of the wrong type", body: vehicle(`,"max_duration_minutes":90.5,"max_distance_km":"far","max_stops":[]`), wants: []want{
			{`["body","vehicles",0,"max_duration_minutes"]`, "int_from_float", intFrac, "", `90.5`},
			{`["body","vehicles",0,"max_distance_km"]`, "float_parsing", floatParse, "", `"far"`},
			{`["body","vehicles",0,"max_stops"]`, "int_type", intType, "", `[]`},
		}},

		// Start, end, open end.
		{name: "start and end as the depot's shape", body: vehicle(`,"start":{"label":"` + s("l", 121) + `","address":"abcd"},"end":{"zip":"x","latitude":1,"longitude":2}`), wants: []want{
			tooLong(`["body","vehicles",0,"start","label"]`, 120),
			{`["body","vehicles",0,"start","address"]`, "string_too_short", "String should have at least 5 characters", `{"min_length":5}`, `"abcd"`},
			{`["body","vehicles",0,"end","zip"]`, "extra_forbidden", extra, "", `"x"`},
		}},
		{name: "start without a location", body: vehicle(`,"start":{"label":"Yard","address":"     "}`), wants: []want{
			{`["body","vehicles",0,"start"]`, "value_error", "Value error, start needs an address or both latitude and longitude", valueErrCtx, `{"label":"Yard","address":"     "}`}}},
		{name: "end latitude without longitude", body: fleet(`,"end":{"latitude":52.5}`), wants: []want{
			valueErr(`["body","fleet","end"]`, "latitude and longitude must be given together")}},
		{name: "start not an object", body: fleet(`,"start":"Depot Street 2"`), wants: []want{{`["body","fleet","start"]`, "model_attributes_type", modelAttrs, "", `"Depot Street 2"`}}},
		{name: "end with open end", body: vehicle(`,"end":{"address":"Home Street 1"},"open_end":true`), wants: []want{
			valueErr(`["body","vehicles",0]`, "give either end or open_end, not both")}},
		{name: "fleet end with open end", body: fleet(`,"end":{"address":"Home Street 1"},"open_end":1`), wants: []want{
			valueErr(`["body","fleet"]`, "give either end or open_end, not both")}},
		{name: "open end not a boolean", body: vehicle(`,"open_end":"maybe"`), wants: []want{{`["body","vehicles",0,"open_end"]`, "bool_parsing", boolParse, "", `"maybe"`}}},
		{name: "open end null", body: fleet(`,"open_end":null`), wants: []want{{`["body","fleet","open_end"]`, "bool_type", boolType, "", `null`}}},
		{name: "vehicle errors in declaration order, extras last", body: vehicle(`,"open_end":2,"end":1,"start":1,"max_stops":0,"max_distance_km":-1,"max_duration_minutes":0,"breaks":{},"capacities":[],"skills":{},"fixed_cost":-1,"colour":"red"`), wants: []want{
			geF(`["body","vehicles",0,"fixed_cost"]`, "0", `-1`),
			{`["body","vehicles",0,"skills"]`, "list_type", listType, "", `{}`},
			{`["body","vehicles",0,"capacities"]`, "dict_type", dictType, "", `[]`},
			{`["body","vehicles",0,"breaks"]`, "list_type", listType, "", `{}`},
			ge(`["body","vehicles",0,"max_duration_minutes"]`, "1", `0`),
			gt0(`["body","vehicles",0,"max_distance_km"]`, `-1`),
			ge(`["body","vehicles",0,"max_stops"]`, "1", `0`),
			{`["body","vehicles",0,"start"]`, "model_attributes_type", modelAttrs, "", `1`},
			{`["body","vehicles",0,"end"]`, "model_attributes_type", modelAttrs, "", `1`},
			{`["body","vehicles",0,"open_end"]`, "bool_parsing", boolParse, "", `2`},
			{`["body","vehicles",0,"colour"]`, "extra_forbidden", extra, "", `"red"`},
		}},

		// Load dimensions against capacities.
		{name: "fleet without a dimension the orders load", body: withFleetOrders(`[{"id":"o","address":"x","loads":{"kg":1,"l":2}},{"id":"p","address":"x","loads":{"m3":1}}]`, `{"count":1,"capacity":1,"capacities":{"kg":10}}`), wants: []want{
			{`["body","fleet"]`, "value_error", `Value error, capacities must give every dimension the orders' loads name; missing: "l", "m3"`, valueErrCtx, `{"count":1,"capacity":1,"capacities":{"kg":10}}`}}},
		{name: "each vehicle without a dimension", body: withVehicleOrders(`[{"id":"o","address":"x","loads":{"kg":1}}]`, `[{"id":"v","capacity":1},{"id":"w","capacity":1,"capacities":{"kg":1}},{"id":"x","capacity":1,"capacities":{"KG":1}}]`), wants: []want{
			{`["body","vehicles",0]`, "value_error", `Value error, capacities must give every dimension the orders' loads name; missing: "kg"`, valueErrCtx, `{"id":"v","capacity":1}`},
			{`["body","vehicles",2]`, "value_error", `Value error, capacities must give every dimension the orders' loads name; missing: "kg"`, valueErrCtx, `{"id":"x","capacity":1,"capacities":{"KG":1}}`},
		}},
		{name: "dimension rule skipped when a field fails", body: withFleetOrders(`[{"id":"o","address":"x","loads":{"kg":1},"priority":-1}]`, fleetOK), wants: []want{
			ge(`["body","orders",0,"priority"]`, "0", `-1`)}},
		{name: "dimension rule after the vehicles or fleet rule", body: `{"depot":` + depotOK + `,"orders":[{"id":"o","address":"x","loads":{"kg":1}}],"fleet":` + fleetOK + `,"vehicles":[` + vehOK + `]}`, wants: []want{
			valueErr(`["body"]`, "give either vehicles or fleet, not both")}},

		// Errors of several places at once.
		{name: "errors of orders, vehicles and their items together", body: withVehicleOrders(`[{"id":"o","address":"x","skills":[""],"time_windows":[{"start":"10:00","end":"09:00"}]},{"id":"p","address":"x","loads":{"kg":-1}}]`,
			`[{"id":"v","capacity":1,"breaks":[{"start":"12:00","end":"12:10","minutes":20}],"max_stops":501},{"id":"w","capacity":1,"start":{}}]`), wants: []want{
			{`["body","orders",0,"time_windows",0]`, "value_error", "Value error, start must not be after end", valueErrCtx, ""},
			tooShort(`["body","orders",0,"skills",0]`),
			geF(`["body","orders",1,"loads","kg"]`, "0", `-1`),
			{`["body","vehicles",0,"breaks",0]`, "value_error", "Value error, a break of 20 minutes does not fit between 12:00 and 12:10", valueErrCtx, ""},
			le(`["body","vehicles",0,"max_stops"]`, "500", `501`),
			valueErr(`["body","vehicles",1,"start"]`, "start needs an address or both latitude and longitude"),
		}},
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

// A request without the fleet constraints hashes as it did before they
// existed: its canonical JSON has none of their keys, and leaving one out
// or giving its default or an empty list are the same request.
func TestCanonicalJSONWithoutFleetConstraints(t *testing.T) {
	in, details := DecodeOptimizationIn([]byte(withVehicle(`{"id":"v","capacity":"12"}`)))
	if details != nil {
		t.Fatal(details)
	}
	want := `{"name":null,"depot":{"label":null,"address":"1 Main Street","latitude":null,"longitude":null},` +
		`"orders":[{"id":"o1","address":"10 Elm Street","city":null,"region":null,"postal_code":null,"country":null,"latitude":null,"longitude":null,` +
		`"demand":1,"service_minutes":5,"time_window_start":null,"time_window_end":null,"customer":null,"phone":null,"notes":null}],` +
		`"vehicles":[{"id":"v","capacity":12,"driver":null,"shift_start":"08:00","shift_end":"18:00","fixed_cost":0}],"fleet":null,` +
		`"options":{"strategy":"optimized","objective":"distance","solver_seconds":null}}`
	if got := string(in.CanonicalJSON()); got != want {
		t.Errorf("canonical JSON\n got  %s\n want %s", got, want)
	}
	for _, same := range []string{
		withVehicleOrders(`[{"id":"o1","address":"10 Elm Street","priority":0,"skills":[],"time_windows":null,"loads":null}]`,
			`[{"id":"v","capacity":12,"skills":[],"breaks":[],"open_end":false,"start":null,"end":null,"max_stops":null,"max_distance_km":null,"max_duration_minutes":null,"capacities":null}]`),
	} {
		other, details := DecodeOptimizationIn([]byte(same))
		if details != nil {
			t.Fatal(details)
		}
		if got := string(other.CanonicalJSON()); got != want {
			t.Errorf("%s\ncanonical JSON %s, want %s", same, got, want)
		}
	}
}

// Loads and capacities hash the same whatever the order of their keys.
func TestCanonicalJSONSortsDimensions(t *testing.T) {
	a, _ := DecodeOptimizationIn([]byte(withFleetOrders(`[{"id":"o","address":"x","loads":{"l":1,"kg":2}}]`, `{"count":1,"capacity":1,"capacities":{"l":1,"kg":2}}`)))
	b, _ := DecodeOptimizationIn([]byte(withFleetOrders(`[{"id":"o","address":"x","loads":{"kg":2,"l":1}}]`, `{"count":1,"capacity":1,"capacities":{"kg":2,"l":1}}`)))
	if a == nil || b == nil {
		t.Fatal("requests refused")
	}
	if ca, cb := string(a.CanonicalJSON()), string(b.CanonicalJSON()); ca != cb || !strings.Contains(ca, `"loads":{"kg":2,"l":1}`) {
		t.Errorf("canonical JSON differs or is unsorted:\n%s\n%s", ca, cb)
	}
}
