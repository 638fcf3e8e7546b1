package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

var testScopes = []string{"optimizations:read", "optimizations:write", "exports:write", "webhooks:read", "webhooks:write", "keys:write"}

func TestDecodeAPIKeyIn(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantName   string
		wantScopes []string
		// errors as "type@loc", in order
		want []string
	}{
		{"valid", `{"name": "dispatch app", "scopes": ["keys:write", "optimizations:read"]}`, "dispatch app", []string{"keys:write", "optimizations:read"}, nil},
		{"name trimmed", `{"name": "  app  ", "scopes": ["keys:write"]}`, "app", []string{"keys:write"}, nil},
		{"name of 120 characters", `{"name": "` + strings.Repeat("é", 120) + `", "scopes": ["keys:write"]}`, strings.Repeat("é", 120), []string{"keys:write"}, nil},
		{"name of 121 characters", `{"name": "` + strings.Repeat("é", 121) + `", "scopes": ["keys:write"]}`, "", nil, []string{"string_too_long@body.name"}},
		{"empty name", `{"name": "", "scopes": ["keys:write"]}`, "", nil, []string{"string_too_short@body.name"}},
		{"blank name", `{"name": "   ", "scopes": ["keys:write"]}`, "", nil, []string{"value_error@body.name"}},
		{"name not a string", `{"name": 5, "scopes": ["keys:write"]}`, "", nil, []string{"string_type@body.name"}},
		{"unknown scope", `{"name": "a", "scopes": ["optimizations:read", "keys:read"]}`, "", nil, []string{"literal_error@body.scopes.1"}},
		{"scope not a string", `{"name": "a", "scopes": [null]}`, "", nil, []string{"literal_error@body.scopes.0"}},
		{"duplicate scopes", `{"name": "a", "scopes": ["keys:write", "keys:write"]}`, "", nil, []string{"value_error@body.scopes"}},
		{"no scopes", `{"name": "a", "scopes": []}`, "", nil, []string{"too_short@body.scopes"}},
		{"seven scopes", `{"name": "a", "scopes": ["keys:write", "keys:write", "keys:write", "keys:write", "keys:write", "keys:write", "keys:write"]}`, "", nil, []string{"too_long@body.scopes"}},
		{"scopes not a list", `{"name": "a", "scopes": "keys:write"}`, "", nil, []string{"list_type@body.scopes"}},
		{"missing both", `{}`, "", nil, []string{"missing@body.name", "missing@body.scopes"}},
		{"unknown field after field errors", `{"expires": 1, "name": "", "scopes": ["keys:write"]}`, "", nil, []string{"string_too_short@body.name", "extra_forbidden@body.expires"}},
		{"not an object", `["keys:write"]`, "", nil, []string{"model_attributes_type@body"}},
		{"no body", ``, "", nil, []string{"missing@body"}},
		{"invalid JSON", `{"name": `, "", nil, []string{"json_invalid@body.9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, details := DecodeAPIKeyIn([]byte(tc.body), testScopes)
			var got []string
			for _, d := range details {
				got = append(got, d.Type+"@"+joinLoc(d.Loc))
			}
			if !slices.Equal(got, tc.want) {
				raw, _ := json.Marshal(details)
				t.Fatalf("errors %v, want %v: %s", got, tc.want, raw)
			}
			if tc.want != nil {
				if out != nil {
					t.Fatalf("a value with errors: %+v", out)
				}
				return
			}
			if out.Name != tc.wantName || !slices.Equal(out.Scopes, tc.wantScopes) {
				t.Fatalf("decoded %+v, want name %q scopes %v", out, tc.wantName, tc.wantScopes)
			}
		})
	}
}

func TestDecodeAPIKeyInUnknownScopeDetail(t *testing.T) {
	_, details := DecodeAPIKeyIn([]byte(`{"name": "a", "scopes": ["keys:read"]}`), testScopes[4:])
	raw, _ := json.Marshal(details)
	want := `[{"type":"literal_error","loc":["body","scopes",0],"msg":"Input should be 'webhooks:write' or 'keys:write'","input":"keys:read","ctx":{"expected":"'webhooks:write' or 'keys:write'"}}]`
	if string(raw) != want {
		t.Fatalf("got  %s\nwant %s", raw, want)
	}
}

func TestParseKeyIDParam(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"0123456789abcdef", true},
		{"0123456789ABCDEF", false},
		{"0123456789abcde", false},
		{"0123456789abcdef0", false},
		{"0123456789abcdeg", false},
		{"0123456789abcdef\n", false},
		{"", false},
	} {
		id, details := ParseKeyIDParam("key_id", tc.in)
		if tc.ok {
			if details != nil || id != tc.in {
				t.Errorf("%q: %q %v", tc.in, id, details)
			}
			continue
		}
		if len(details) != 1 || details[0].Type != "string_pattern_mismatch" || joinLoc(details[0].Loc) != "path.key_id" || details[0].Input != tc.in {
			t.Errorf("%q: details %+v", tc.in, details)
		}
	}
}

func joinLoc(loc []any) string {
	parts := make([]string, len(loc))
	for i, p := range loc {
		parts[i] = fmt.Sprint(p)
	}
	return strings.Join(parts, ".")
}
