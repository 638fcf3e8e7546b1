package ablation

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		off     []string
		want    Switches
		wantErr string
	}{
		{"none", nil, Switches{}, ""},
		{"two pieces", []string{"genetic", "skip-tested"}, Switches{NoGenetic: true, RetestAll: true}, ""},
		{"a piece twice", []string{"eax", "eax"}, Switches{NoEAX: true}, ""},
		{"unknown piece", []string{"genetic", "nope"}, Switches{}, `"nope"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.off)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "granular-growth") {
					t.Fatalf("Parse(%q) error %v, want one naming %s and the known pieces", c.off, err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", c.off, got, c.want)
			}
		})
	}
}

// TestEveryPieceSwitchesOne: each name turns off exactly one piece, and
// Help describes every name.
func TestEveryPieceSwitchesOne(t *testing.T) {
	seen := map[Switches]string{}
	for _, n := range Names() {
		s, err := Parse([]string{n})
		if err != nil {
			t.Fatal(err)
		}
		if s == (Switches{}) {
			t.Errorf("%s turns nothing off", n)
		}
		if other, ok := seen[s]; ok {
			t.Errorf("%s and %s turn off the same piece", n, other)
		}
		seen[s] = n
		if !strings.Contains(Help(), n+": ") {
			t.Errorf("Help does not describe %s", n)
		}
	}
	if len(Names()) != strings.Count(Help(), "\n") {
		t.Fatalf("Names %v and Help %q disagree", Names(), Help())
	}
}
