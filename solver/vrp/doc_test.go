package vrp

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocListsEveryFile: the file map of the package documentation names
// every source file of the package, and only those.
func TestDocListsEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^//\t(\S+\.go) `).FindAllSubmatch(doc, -1) {
		listed = append(listed, string(m[1]))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			sources = append(sources, f)
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, sources) {
		t.Errorf("doc.go lists %v, the package has %v", listed, sources)
	}
}
