package export

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSamples writes sample files for a person to look at (open them,
// print them) when EXPORT_SAMPLE_DIR names a directory:
//
//	EXPORT_SAMPLE_DIR=/tmp/samples go test ./webserver/export -run TestWriteSamples
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("EXPORT_SAMPLE_DIR")
	if dir == "" {
		t.Skip("EXPORT_SAMPLE_DIR not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	opt, res := fixture(500, 20, 5)
	hopt, hres := hostileFixture()
	for name, data := range map[string][]byte{
		"routes-driver.xlsx": render(t, opt, res, Options{Format: XLSX, IncludeDriverInstructions: true}),
		"routes-plain.xlsx":  render(t, opt, res, Options{Format: XLSX}),
		"routes-driver.csv":  render(t, opt, res, Options{Format: CSV, IncludeDriverInstructions: true}),
		"routes-plain.csv":   render(t, opt, res, Options{Format: CSV}),
		"hostile.xlsx":       render(t, hopt, hres, Options{Format: XLSX, IncludeDriverInstructions: true}),
		"hostile.csv":        render(t, hopt, hres, Options{Format: CSV, IncludeDriverInstructions: true}),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
