package openapi_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/yuin/goldmark"
	mdast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"routeopt.io/routeopt/webserver/apikey"
)

// referencePath is the API reference for people, which
// TestAPIReference holds to the served OpenAPI document.
const referencePath = "../../docs/API.md"

// The reference's tables are told apart by the first cell of their header:
//
//   - "Method": the endpoints (method, path, scope, success status, error statuses);
//   - "Parameter": path, query and header parameters (name, where);
//   - "Field": the fields of the schema the nearest heading names in
//     backticks; a paragraph "Every field of `X`, plus:" before the table
//     adds X's fields; a nested field is written `a.b`, a field of an
//     array's items `a[].b`; a "Required" column says yes or no;
//   - anything else: a list of values (states, codes...) in its first column.
const (
	headerEndpoint  = "Method"
	headerParameter = "Parameter"
	headerField     = "Field"
)

// reference is what docs/API.md documents.
type reference struct {
	endpoints []endpointRow
	params    []string // "<in> <name>"
	schemas   map[string]*schemaTable
	// values holds every other table by its first header cell: its rows,
	// each a list of cells (plain text), and the code spans of its first cells.
	values map[string]*valueTable
	// anchors are the headings' link targets; links the #targets linked to.
	anchors, links map[string]bool
}

type endpointRow struct {
	method, path string
	scopeCell    string
	scopeSpans   []string
	statuses     []string
}

type schemaTable struct {
	inherits string
	fields   []fieldRow
}

type fieldRow struct {
	name     string
	required string // "" without a Required column
}

type valueTable struct {
	rows   [][]string
	values []string
}

// readReference parses docs/API.md with goldmark (GitHub's table syntax).
func readReference(t *testing.T) *reference {
	t.Helper()
	src, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("reading the API reference: %v", err)
	}
	root := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(src))
	ref := &reference{schemas: map[string]*schemaTable{}, values: map[string]*valueTable{}, anchors: map[string]bool{}, links: map[string]bool{}}
	schema, inherits := "", ""
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *mdast.Heading:
			ref.anchors[slug(plain(n, src))] = true
			schema, inherits = "", ""
			if spans := codeSpans(n, src); len(spans) > 0 {
				schema = spans[0]
			}
		case *mdast.Paragraph:
			if strings.HasPrefix(plain(n, src), "Every field of ") {
				if spans := codeSpans(n, src); len(spans) > 0 {
					inherits = spans[0]
				}
			}
		case *extast.Table:
			ref.addTable(t, n, src, schema, inherits)
		}
	}
	_ = mdast.Walk(root, func(n mdast.Node, entering bool) (mdast.WalkStatus, error) {
		if l, ok := n.(*mdast.Link); ok && entering && strings.HasPrefix(string(l.Destination), "#") {
			ref.links[strings.TrimPrefix(string(l.Destination), "#")] = true
		}
		return mdast.WalkContinue, nil
	})
	return ref
}

func (ref *reference) addTable(t *testing.T, table *extast.Table, src []byte, schema, inherits string) {
	t.Helper()
	var header []string
	var rows [][]mdast.Node
	for row := table.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []mdast.Node
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, c)
		}
		if _, ok := row.(*extast.TableHeader); ok {
			for _, c := range cells {
				header = append(header, plain(c, src))
			}
			continue
		}
		rows = append(rows, cells)
	}
	switch header[0] {
	case headerEndpoint:
		for _, cells := range rows {
			ref.endpoints = append(ref.endpoints, endpointRow{
				method: plain(cells[0], src), path: plain(cells[1], src),
				scopeCell: plain(cells[2], src), scopeSpans: codeSpans(cells[2], src),
				statuses: append(codeSpans(cells[3], src), codeSpans(cells[4], src)...),
			})
		}
	case headerParameter:
		for _, cells := range rows {
			ref.params = append(ref.params, plain(cells[1], src)+" "+plain(cells[0], src))
		}
	case headerField:
		if schema == "" {
			t.Errorf("a field table follows a heading that names no schema in backticks: %v", header)
			return
		}
		if ref.schemas[schema] != nil {
			t.Errorf("schema %s has two field tables", schema)
		}
		required := slices.Index(header, "Required")
		st := &schemaTable{inherits: inherits}
		for _, cells := range rows {
			f := fieldRow{name: plain(cells[0], src)}
			if required >= 0 {
				f.required = plain(cells[required], src)
			}
			st.fields = append(st.fields, f)
		}
		ref.schemas[schema] = st
	default:
		vt := ref.values[header[0]]
		if vt == nil {
			vt = &valueTable{}
			ref.values[header[0]] = vt
		}
		for _, cells := range rows {
			row := make([]string, len(cells))
			for i, c := range cells {
				row[i] = plain(c, src)
			}
			vt.rows = append(vt.rows, row)
			vt.values = append(vt.values, codeSpans(cells[0], src)...)
		}
	}
}

// plain is n's text without markup.
func plain(n mdast.Node, src []byte) string {
	var b strings.Builder
	_ = mdast.Walk(n, func(c mdast.Node, entering bool) (mdast.WalkStatus, error) {
		if !entering {
			return mdast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *mdast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *mdast.String:
			b.Write(c.Value)
		}
		return mdast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// codeSpans are the texts of n's code spans, in order.
func codeSpans(n mdast.Node, src []byte) []string {
	var out []string
	_ = mdast.Walk(n, func(c mdast.Node, entering bool) (mdast.WalkStatus, error) {
		if cs, ok := c.(*mdast.CodeSpan); ok && entering {
			out = append(out, plain(cs, src))
			return mdast.WalkSkipChildren, nil
		}
		return mdast.WalkContinue, nil
	})
	return out
}

// slug is the link target GitHub gives a heading: lower case, punctuation
// dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// fieldNames are the documented names of s's fields: a property, or for an
// inline object (or an array of inline objects) its own fields, written
// `a.b` (or `a[].b`). Properties that refer to another schema are that
// schema's business.
func fieldNames(s *openapi3.Schema, prefix string, out map[string]bool) {
	for name, p := range s.Properties {
		v := p.Value
		switch {
		case p.Ref == "" && len(v.Properties) > 0:
			fieldNames(v, prefix+name+".", out)
		case p.Ref == "" && v.Items != nil && v.Items.Ref == "" && len(v.Items.Value.Properties) > 0:
			fieldNames(v.Items.Value, prefix+name+"[].", out)
		default:
			out[prefix+name] = true
		}
	}
}

// enumStrings are a schema's enumerated values, null left out.
func enumStrings(s *openapi3.Schema) []string {
	var out []string
	for _, v := range s.Enum {
		if v != nil {
			out = append(out, fmt.Sprint(v))
		}
	}
	return out
}

// stringConsts are the string constants of the Go package in dir whose
// names start with prefix: codes the code may produce, whether or not
// anyone remembered to list them.
func stringConsts(t *testing.T, dir, prefix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						out = append(out, v)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no string constants %s* in %s", prefix, dir)
	}
	return out
}

// diff reports what is in got and not in want, and the other way round.
func diff(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := set(got), set(want)
	for _, v := range sorted(g) {
		if !w[v] {
			t.Errorf("%s: %q is documented in docs/API.md but not in the OpenAPI document or the code", what, v)
		}
	}
	for _, v := range sorted(w) {
		if !g[v] {
			t.Errorf("%s: %q is missing from docs/API.md", what, v)
		}
	}
}

func set(vs []string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

func sorted(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// errorCodeOf is the one error code a response of the document allows, or "".
func errorCodeOf(r *openapi3.Response) string {
	mt := r.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || len(mt.Schema.Value.AllOf) != 2 {
		return ""
	}
	e := mt.Schema.Value.AllOf[1].Value.Properties["error"]
	if e == nil || e.Value.Properties["code"] == nil {
		return ""
	}
	if codes := enumStrings(e.Value.Properties["code"].Value); len(codes) == 1 {
		return codes[0]
	}
	return ""
}

var scopePattern = regexp.MustCompile("`[a-z]+:[a-z]+`")

// TestAPIReference keeps docs/API.md true to the OpenAPI document the
// service serves, and to the codes the code defines: the endpoints with
// their scopes and statuses, the parameters, every field of every schema,
// and every enumerated value a client may meet.
func TestAPIReference(t *testing.T) {
	doc := load(t)
	ref := readReference(t)
	schemas := doc.Components.Schemas
	prop := func(schema string, path ...string) *openapi3.Schema {
		s := schemas[schema].Value
		for _, p := range path {
			s = s.Properties[p].Value
		}
		return s
	}

	t.Run("endpoints", func(t *testing.T) {
		ops := map[string]*openapi3.Operation{}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				ops[method+" "+path] = op
			}
		}
		var documented []string
		for _, e := range ref.endpoints {
			key := e.method + " " + e.path
			documented = append(documented, key)
			op := ops[key]
			if op == nil {
				continue
			}
			var statuses []string
			for code := range op.Responses.Map() {
				statuses = append(statuses, code)
			}
			diff(t, key+" statuses", e.statuses, statuses)
			scopes := slices.DeleteFunc(slices.Clone(e.scopeSpans), func(s string) bool { return !slices.Contains(enumStrings(schemas["Scope"].Value), s) })
			switch {
			case len(scopes) == 1:
				if !strings.Contains(op.Description, "`"+scopes[0]+"`") {
					t.Errorf("%s: docs/API.md says scope %s; the document's description does not name it", key, scopes[0])
				}
			case len(scopes) > 1:
				t.Errorf("%s: docs/API.md names several scopes %v", key, scopes)
			case strings.HasPrefix(e.scopeCell, "none"):
				if op.Security == nil || len(*op.Security) != 0 {
					t.Errorf("%s: docs/API.md says it needs no key; the document asks for one", key)
				}
			default:
				if op.Security != nil && len(*op.Security) == 0 || scopePattern.MatchString(op.Description) {
					t.Errorf("%s: docs/API.md says any valid key will do (%q); the document says otherwise", key, e.scopeCell)
				}
			}
		}
		diff(t, "endpoints", documented, slices.Collect(maps.Keys(ops)))
	})

	t.Run("parameters", func(t *testing.T) {
		var want []string
		for _, item := range doc.Paths.Map() {
			params := slices.Clone(item.Parameters)
			for _, op := range item.Operations() {
				params = append(params, op.Parameters...)
			}
			for _, p := range params {
				want = append(want, p.Value.In+" "+p.Value.Name)
			}
		}
		diff(t, "parameters", ref.params, want)
	})

	t.Run("schemas", func(t *testing.T) {
		var objects []string
		for name, s := range schemas {
			if len(s.Value.Properties) > 0 {
				objects = append(objects, name)
			}
		}
		diff(t, "schemas with a field table", slices.Collect(maps.Keys(ref.schemas)), objects)
		for name, table := range ref.schemas {
			s := schemas[name]
			if s == nil {
				continue
			}
			want := map[string]bool{}
			fieldNames(s.Value, "", want)
			var got []string
			if table.inherits != "" {
				parent := ref.schemas[table.inherits]
				if parent == nil {
					t.Errorf("%s: inherits the fields of %s, which has no table", name, table.inherits)
					continue
				}
				for _, f := range parent.fields {
					got = append(got, f.name)
				}
			}
			for _, f := range table.fields {
				got = append(got, f.name)
				if f.required == "" {
					continue
				}
				if documented, actual := strings.HasPrefix(f.required, "yes"), slices.Contains(s.Value.Required, f.name); documented != actual {
					t.Errorf("%s.%s: docs/API.md says required %q, the document %v", name, f.name, f.required, actual)
				}
			}
			diff(t, name+" fields", got, sorted(want))
		}
	})

	errorCodes := append(enumStrings(prop("Error", "error", "code")), stringConsts(t, "..", "Code")...)
	failureCodes := append(append(enumStrings(prop("Optimization", "error_code")),
		enumStrings(prop("Event", "data", "error_code"))...), stringConsts(t, "../../api/v1alpha1", "Error")...)
	var events []string
	for name := range doc.Webhooks {
		events = append(events, name)
	}
	for _, tc := range []struct {
		header string
		want   []string
	}{
		{"Scope", append(enumStrings(schemas["Scope"].Value), apikey.AllScopes...)},
		{"State", enumStrings(schemas["State"].Value)},
		{"Stage", enumStrings(prop("Optimization", "stage"))},
		{"Reason", enumStrings(prop("Unassigned", "reason"))},
		{"Event type", append(events, enumStrings(prop("Event", "type"))...)},
		{"Error code", errorCodes},
		{"error_code", failureCodes},
	} {
		t.Run(tc.header, func(t *testing.T) {
			table := ref.values[tc.header]
			if table == nil {
				t.Fatalf("docs/API.md has no table whose header starts with %q", tc.header)
			}
			diff(t, tc.header, table.values, tc.want)
		})
	}

	t.Run("Warning code", func(t *testing.T) {
		// The code declares every warning it may give; the reference lists
		// those it gives.
		table := ref.values["Warning code"]
		if table == nil || len(table.values) == 0 {
			t.Fatal("docs/API.md has no table of warning codes")
		}
		known := set(stringConsts(t, "../../api/v1alpha1", "Warning"))
		for _, code := range table.values {
			if !known[code] {
				t.Errorf("warning code %q is documented but not defined in api/v1alpha1", code)
			}
		}
	})

	t.Run("error statuses", func(t *testing.T) {
		want := map[string]string{}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				for status, r := range op.Responses.Map() {
					code := errorCodeOf(r.Value)
					if code == "" {
						continue
					}
					if prev, ok := want[code]; ok && prev != status {
						t.Errorf("%s %s: %s answers %s here and %s elsewhere", method, path, code, status, prev)
					}
					want[code] = status
				}
			}
		}
		for _, row := range ref.values["Error code"].rows {
			code, status := strings.Trim(row[0], "`"), row[1]
			if w, ok := want[code]; ok && w != status {
				t.Errorf("error code %s: docs/API.md says status %s, the document %s", code, status, w)
			}
		}
	})

	t.Run("links", func(t *testing.T) {
		for target := range ref.links {
			if !ref.anchors[target] {
				t.Errorf("docs/API.md links to #%s, which no heading names", target)
			}
		}
	})
}
