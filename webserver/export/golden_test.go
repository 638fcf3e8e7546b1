package export

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.sha256 from the files rendered now")

// goldenFile holds the digest of each file TestGoldenFiles renders.
var goldenFile = filepath.Join("testdata", "golden.sha256")

// digest is the SHA-256 of a csv file, and of a workbook's entries (name
// and content) in name order: excelize writes a workbook's sheets to the
// archive in an order that changes from run to run, and nothing that
// opens it depends on that order.
func digest(t *testing.T, name string, data []byte) string {
	h := sha256.New()
	if strings.HasSuffix(name, "."+string(XLSX)) {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files := slices.Clone(zr.File)
		slices.SortFunc(files, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
		for _, f := range files {
			r, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			content, err := io.ReadAll(r)
			_ = r.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			sum := sha256.Sum256(content)
			fmt.Fprintf(h, "%s %x\n", f.Name, sum)
		}
	} else {
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// goldenCases are the files whose bytes are pinned: the fixtures in both
// formats, with and without driver instructions.
func goldenCases(t *testing.T) map[string][]byte {
	opt, res := fixture(60, 4, 3)
	hopt, hres := hostileFixture()
	eopt, eres := fixture(0, 0, 3)
	out := map[string][]byte{}
	for _, f := range []Format{XLSX, CSV} {
		for _, driver := range []bool{true, false} {
			o := Options{Format: f, IncludeDriverInstructions: driver}
			kind := "plain"
			if driver {
				kind = "driver"
			}
			out[fmt.Sprintf("routes-%s.%s", kind, f)] = render(t, opt, res, o)
			out[fmt.Sprintf("hostile-%s.%s", kind, f)] = render(t, hopt, hres, o)
			out[fmt.Sprintf("unassigned-only-%s.%s", kind, f)] = render(t, eopt, eres, o)
		}
	}
	return out
}

// TestGoldenFiles pins the bytes of the rendered files (digest), so a change meant
// to leave what dispatchers get alone (a refactoring) is shown to. After a
// change meant to alter them, look at the files (TestWriteSamples) and
// rewrite the sums:
//
//	go test ./webserver/export -run TestGoldenFiles -update-golden
func TestGoldenFiles(t *testing.T) {
	got := map[string]string{}
	for name, data := range goldenCases(t) {
		got[name] = digest(t, name, data)
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	if *updateGolden {
		var b strings.Builder
		for _, name := range names {
			fmt.Fprintf(&b, "%s  %s\n", got[name], name)
		}
		if err := os.WriteFile(goldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	want := map[string]string{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		sum, name, ok := strings.Cut(lines.Text(), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not \"<sha256>  <name>\"", goldenFile, lines.Text())
		}
		want[name] = sum
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if want[name] != got[name] {
			t.Errorf("%s renders differently from %s (digest %s, pinned %s)", name, goldenFile, got[name], want[name])
		}
	}
	if len(want) != len(got) {
		t.Errorf("%s pins %d files, the test renders %d", goldenFile, len(want), len(got))
	}
}
