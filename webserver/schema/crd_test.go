package schema

import (
	"encoding/json"
	"fmt"
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

// set puts v at path in the JSON document doc (objects and lists).
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
				m[k] = map[string]any{}
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

// checkListBounds probes a list's minItems and maxItems with items that
// differ only in their id.
func checkListBounds(t *testing.T, field string, s apiextensionsv1.JSONSchemaProps, path []any, decode func([]byte) []Detail) {
	t.Helper()
	base := baseRequest(t, path[0] == "vehicles")
	item := base[path[0].(string)].([]any)[0].(map[string]any)
	items := func(n int64) []any {
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
		body, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		details := decode(body)
		n := len(p.value.([]any))
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
