package schema

import (
	"os"
	"regexp"
	"testing"
)

// TestREADMEOptimizationsDecode: every optimization the README's curl
// walk-through creates is a valid request.
func TestREADMEOptimizationsDecode(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	bodies := regexp.MustCompile(`(?s)POST \$API/v1/optimizations \\\n.*?-d '(\{.*?\n\})'`).FindAllSubmatch(readme, -1)
	if len(bodies) < 2 {
		t.Fatalf("found %d optimization bodies in README.md, want the walk-through's two", len(bodies))
	}
	for i, b := range bodies {
		if in, details := DecodeOptimizationIn(b[1]); len(details) > 0 || in == nil {
			t.Errorf("body %d: %+v", i+1, details)
		}
	}
}
