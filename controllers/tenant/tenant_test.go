package tenant

import (
	"strings"
	"testing"
)

func TestValidateID(t *testing.T) {
	tests := map[string]struct {
		id      string
		wantErr bool
		suggest string // in the error message
	}{
		"plain":                   {id: "acme", wantErr: false},
		"digits and dashes":       {id: "acme-2-berlin", wantErr: false},
		"longest":                 {id: strings.Repeat("a", MaxIDLength), wantErr: false},
		"too long":                {id: strings.Repeat("a", MaxIDLength+1), wantErr: true, suggest: strings.Repeat("a", MaxIDLength)},
		"upper case and a space":  {id: "Acme Corp", wantErr: true, suggest: "acme-corp"},
		"accents":                 {id: "Café Müller", wantErr: true, suggest: "cafe-muller"},
		"underscores and dots":    {id: "acme_corp.de", wantErr: true, suggest: "acme-corp-de"},
		"leading dash":            {id: "-acme", wantErr: true, suggest: "acme"},
		"trailing dash":           {id: "acme-", wantErr: true, suggest: "acme"},
		"empty":                   {id: "", wantErr: true},
		"nothing usable":          {id: "日本", wantErr: true},
		"dash at the cut is gone": {id: strings.Repeat("a", MaxIDLength-1) + " b", wantErr: true, suggest: strings.Repeat("a", MaxIDLength-1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := ValidateID(tc.id)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ValidateID(%q) = %v, want error %v", tc.id, err, tc.wantErr)
			}
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), "lower-case letters") {
				t.Errorf("the error does not say what is allowed: %v", err)
			}
			if tc.suggest != "" && !strings.Contains(err.Error(), `try "`+tc.suggest+`"`) {
				t.Errorf("error %q does not suggest %q", err, tc.suggest)
			}
			if tc.suggest == "" && strings.Contains(err.Error(), "try") {
				t.Errorf("error %q suggests something for %q", err, tc.id)
			}
			if tc.suggest != "" {
				if err := ValidateID(tc.suggest); err != nil {
					t.Errorf("the suggestion %q is itself refused: %v", tc.suggest, err)
				}
			}
		})
	}
}

func TestRoleBindingsStayInTheTenantNamespace(t *testing.T) {
	for _, rb := range RoleBindings("tenant-acme", "routeopt-system") {
		if rb.Namespace != "tenant-acme" || rb.RoleRef.Kind != "ClusterRole" || !strings.HasSuffix(rb.RoleRef.Name, "-tenant") {
			t.Errorf("binding %s/%s to %s %s", rb.Namespace, rb.Name, rb.RoleRef.Kind, rb.RoleRef.Name)
		}
		if len(rb.Subjects) != 1 || rb.Subjects[0].Namespace != "routeopt-system" || rb.Subjects[0].Kind != "ServiceAccount" {
			t.Errorf("binding %s subjects %+v", rb.Name, rb.Subjects)
		}
	}
}
