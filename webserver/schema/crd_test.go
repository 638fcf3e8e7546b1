package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"routeopt.io/routeopt/config/crd"
)

// The bounds of a request are stated twice, by design: request validation
// refuses a bad request with pydantic's 422 details, and the CRD's schema
// (the markers on api/v1alpha1's types) holds an Optimization made with
// kubectl to the same limits. These tests keep the two in step: they walk
// the CRD's schema and probe request validation at each bound it states,
// so a bound changed on one side only, or a field one side lacks, fails
// here.

// crdSpec is the spec schema of the CRD of kind.
func crdSpec(t *testing.T, kind string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Names.Kind == kind {
			return c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		}
	}
	t.Fatalf("no CRD of kind %s", kind)
	return apiextensionsv1.JSONSchemaProps{}
}

// snake is the REST name of a CRD field: postalCode is postal_code.
func snake(camel string) string {
	var b strings.Builder
	for _, r := range camel {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// probe is one value set at a request path, and whether validation must
// accept it.
type probe struct {
	value  any
	accept bool
	why    string
}

// boundProbes are the values on and past each bound schema states.
func boundProbes(s apiextensionsv1.JSONSchemaProps) []probe {
	var out []probe
	chars := func(n int64) string { return strings.Repeat("é", int(n)) } // lengths count characters
	switch s.Type {
	case "string":
		if s.Pattern != "" {
			// Every pattern of a request is HH:MM; lengths follow from it.
			out = append(out, probe{"9:00", false, "pattern " + s.Pattern})
			break
		}
		if s.MaxLength != nil {
			out = append(out, probe{chars(*s.MaxLength), true, "maxLength"}, probe{chars(*s.MaxLength + 1), false, "maxLength"})
		}
		if s.MinLength != nil && *s.MinLength > 0 {
			out = append(out, probe{chars(*s.MinLength), true, "minLength"}, probe{chars(*s.MinLength - 1), false, "minLength"})
		}
		for _, e := range s.Enum {
			var v string
			if err := json.Unmarshal(e.Raw, &v); err == nil {
				out = append(out, probe{v, true, "enum"})
			}
		}
		if len(s.Enum) > 0 {
			out = append(out, probe{"other", false, "enum"})
		}
	case "number", "integer":
		step := 0.5
		if s.Type == "integer" {
			step = 1
		}
		if s.Maximum != nil {
			out = append(out, probe{*s.Maximum, true, "maximum"}, probe{*s.Maximum + step, false, "maximum"})
		}
		if s.Minimum != nil {
			out = append(out, probe{*s.Minimum, !s.ExclusiveMinimum, "minimum"}, probe{*s.Minimum - step, false, "minimum"})
		}
	}
	return out
}

// set puts v at path in the JSON document doc (objects and lists). An
// optional field on the way that doc lacks is filled with sample(name, 1).
func set(doc any, path []any, v any) {
	for i, k := range path {
		last := i == len(path)-1
		switch k := k.(type) {
		case string:
			m := doc.(map[string]any)
			if last {
				m[k] = v
				return
			}
			if m[k] == nil {
				m[k] = sample(k, 1)
			}
			doc = m[k]
		case int:
			if last {
				doc.([]any)[k] = v
				return
			}
			doc = doc.([]any)[k]
		}
	}
}

// sample is a valid value of n items for the optional field name of a
// request: lists whose items satisfy the list's rules together (windows
// apart, breaks in order inside the default shift), n named dimensions
// d-0, d-1..., a place for start and end, else an empty object.
func sample(name string, n int) any {
	items := make([]any, n)
	for i := range items {
		switch name {
		case "time_windows":
			items[i] = map[string]any{"start": fmt.Sprintf("%02d:00", 8+2*i), "end": fmt.Sprintf("%02d:30", 8+2*i)}
		case "breaks":
			items[i] = map[string]any{"start": fmt.Sprintf("08:%02d", 10*i), "end": fmt.Sprintf("16:%02d", 10*i), "minutes": 30}
		case "skills":
			items[i] = fmt.Sprint("skill-", i)
		}
	}
	switch name {
	case "time_windows", "breaks", "skills":
		return items
	case "loads", "capacities":
		dims := map[string]any{}
		for i := range n {
			dims[fmt.Sprint("d-", i)] = 1
		}
		return dims
	case "start", "end":
		return map[string]any{"latitude": 52.5, "longitude": 13.4}
	}
	return map[string]any{}
}

// coverLoads gives the fleet or every vehicle of doc a capacity of 1 in
// each dimension the orders' loads name, when they name at most four, so
// that a probe of loads meets no other rule.
func coverLoads(doc map[string]any) {
	names := map[string]any{}
	orders, _ := doc["orders"].([]any) // none in a webhook's body
	for _, o := range orders {
		if loads, ok := o.(map[string]any)["loads"].(map[string]any); ok {
			for name := range loads {
				names[name] = 1
			}
		}
	}
	if len(names) == 0 || len(names) > MaxDimensions {
		return
	}
	if fleet, ok := doc["fleet"].(map[string]any); ok {
		fleet["capacities"] = names
	}
	if vehicles, ok := doc["vehicles"].([]any); ok {
		for _, v := range vehicles {
			v.(map[string]any)["capacities"] = names
		}
	}
}

// isDimensionList tells a CRD list of named amounts (loads, capacities),
// which the request writes as an object of name to amount.
func isDimensionList(s apiextensionsv1.JSONSchemaProps) bool {
	return s.Type == "array" && slices.Equal(s.XListMapKeys, []string{"name"})
}

// baseRequest is a valid request: a fleet, or individual vehicles.
func baseRequest(t *testing.T, vehicles bool) map[string]any {
	t.Helper()
	raw := `{"depot":{"latitude":52.5,"longitude":13.4},"orders":[{"id":"o","latitude":52.5,"longitude":13.4}],"fleet":{"count":1,"capacity":10}}`
	if vehicles {
		raw = `{"depot":{"latitude":52.5,"longitude":13.4},"orders":[{"id":"o","latitude":52.5,"longitude":13.4}],"vehicles":[{"id":"v","capacity":10}]}`
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// refusedAt reports whether details name loc, or a place inside it.
func refusedAt(details []Detail, loc []any) bool {
	want := fmt.Sprint(append([]any{"body"}, loc...))
	for _, d := range details {
		if got := fmt.Sprint(d.Loc); got == want || strings.HasPrefix(got, strings.TrimSuffix(want, "]")+" ") {
			return true
		}
	}
	return false
}

// summary lists details without their inputs, which may be long.
func summary(details []Detail) string {
	var parts []string
	for _, d := range details {
		parts = append(parts, fmt.Sprintf("%s at %v", d.Type, d.Loc))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// checkProbes probes decode with each bound of the CRD field s, set at the
// REST path of the field in doc.
func checkProbes(t *testing.T, field string, s apiextensionsv1.JSONSchemaProps, path []any, doc func() any, decode func([]byte) []Detail) {
	t.Helper()
	for _, p := range boundProbes(s) {
		d := doc()
		set(d, path, p.value)
		coverLoads(d.(map[string]any))
		body, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		details := decode(body)
		switch {
		case p.accept && len(details) > 0:
			t.Errorf("%s: the CRD's %s allows %.40v; request validation refuses it: %s", field, p.why, p.value, summary(details))
		case !p.accept && !refusedAt(details, path):
			t.Errorf("%s: the CRD's %s refuses %.40v; request validation does not %s", field, p.why, p.value, summary(details))
		}
	}
}

func TestRequestBoundsMatchTheOptimizationCRD(t *testing.T) {
	decode := func(body []byte) []Detail {
		_, d := DecodeOptimizationIn(body)
		return d
	}
	// spec.input and spec.cancel are not request fields: the API writes
	// the one and the cancel endpoint the other.
	notInRequest := map[string]bool{"input": true, "cancel": true}
	var walk func(field string, s apiextensionsv1.JSONSchemaProps, path []any)
	walk = func(field string, s apiextensionsv1.JSONSchemaProps, path []any) {
		vehicles := slices.Contains(path, any("vehicles"))
		doc := func() any { return baseRequest(t, vehicles) }
		switch s.Type {
		case "object":
			for name, p := range s.Properties {
				if len(path) == 0 && notInRequest[name] {
					continue
				}
				walk(field+"."+name, p, append(slices.Clone(path), snake(name)))
			}
		case "array":
			checkListBounds(t, field, s, path, decode)
			if isDimensionList(s) {
				checkDimensions(t, field, s, path, decode)
				break
			}
			walk(field+"[]", *s.Items.Schema, append(slices.Clone(path), 0))
		default:
			checkProbes(t, field, s, path, doc, decode)
		}
	}
	walk("spec", crdSpec(t, "Optimization"), nil)
	if TimePattern != crdSpec(t, "Optimization").Properties["fleet"].Properties["shiftStart"].Pattern {
		t.Errorf("TimePattern %q differs from the CRD's", TimePattern)
	}
}

// checkDimensions probes the name and the value of a list of named
// amounts, which the request writes as an object: the name is a key, the
// value the amount at it.
func checkDimensions(t *testing.T, field string, s apiextensionsv1.JSONSchemaProps, path []any, decode func([]byte) []Detail) {
	t.Helper()
	vehicles := slices.Contains(path, any("vehicles"))
	item := s.Items.Schema.Properties
	for _, p := range boundProbes(item["name"]) {
		d := baseRequest(t, vehicles)
		set(d, path, map[string]any{p.value.(string): 1})
		coverLoads(d)
		checkProbe(t, field+"[].name", p, path, d, decode)
	}
	valuePath := append(slices.Clone(path), "d-0")
	for _, p := range boundProbes(item["value"]) {
		d := baseRequest(t, vehicles)
		set(d, valuePath, p.value)
		coverLoads(d)
		checkProbe(t, field+"[].value", p, valuePath, d, decode)
	}
}

// checkProbe decodes doc, which holds probe p at path.
func checkProbe(t *testing.T, field string, p probe, path []any, doc map[string]any, decode func([]byte) []Detail) {
	t.Helper()
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	details := decode(body)
	switch {
	case p.accept && len(details) > 0:
		t.Errorf("%s: the CRD's %s allows %.40v; request validation refuses it: %s", field, p.why, p.value, summary(details))
	case !p.accept && !refusedAt(details, path):
		t.Errorf("%s: the CRD's %s refuses %.40v; request validation does not %s", field, p.why, p.value, summary(details))
	}
}

// checkListBounds probes a list's minItems and maxItems: orders and
// vehicles that differ only in their id, sample items for a list inside
// them (a list of named amounts is an object of that many names).
func checkListBounds(t *testing.T, field string, s apiextensionsv1.JSONSchemaProps, path []any, decode func([]byte) []Detail) {
	t.Helper()
	base := baseRequest(t, path[0] == "vehicles")
	items := func(n int64) any {
		if len(path) > 1 {
			return sample(path[len(path)-1].(string), int(n))
		}
		item := base[path[0].(string)].([]any)[0].(map[string]any)
		out := make([]any, n)
		for i := range out {
			c := map[string]any{}
			for k, v := range item {
				c[k] = v
			}
			c["id"] = fmt.Sprint("id-", i)
			out[i] = c
		}
		return out
	}
	var probes []probe
	if s.MaxItems != nil {
		probes = append(probes, probe{items(*s.MaxItems), true, "maxItems"}, probe{items(*s.MaxItems + 1), false, "maxItems"})
	}
	if s.MinItems != nil && *s.MinItems > 0 {
		probes = append(probes, probe{items(*s.MinItems), true, "minItems"}, probe{items(*s.MinItems - 1), false, "minItems"})
	}
	for _, p := range probes {
		d := baseRequest(t, path[0] == "vehicles")
		set(d, path, p.value)
		coverLoads(d)
		body, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		details := decode(body)
		n := reflect.ValueOf(p.value).Len()
		switch {
		case p.accept && len(details) > 0:
			t.Errorf("%s: the CRD's %s allows %d items; request validation refuses them: %s", field, p.why, n, summary(details))
		case !p.accept && !refusedAt(details, path):
			t.Errorf("%s: the CRD's %s refuses %d items; request validation does not %s", field, p.why, n, summary(details))
		}
	}
}

// The webhook endpoint's url: an empty one passes decoding and is refused
// by the webhook policy (a value_error, as any URL it refuses), so only
// the length bound is decoding's.
func TestWebhookURLBoundMatchesTheCRD(t *testing.T) {
	url := crdSpec(t, "WebhookEndpoint").Properties["url"]
	if url.MaxLength == nil {
		t.Fatal("the CRD bounds no url length")
	}
	decode := func(body []byte) []Detail {
		_, d := DecodeWebhookIn(body)
		return d
	}
	doc := func() any { return map[string]any{"url": ""} }
	bound := apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: url.MaxLength}
	checkProbes(t, "spec.url", bound, []any{"url"}, doc, decode)
}
