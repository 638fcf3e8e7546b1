package framework

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// module is the main module whose root RepoRoot looks for.
const module = "routeopt.io/routeopt"

var (
	workDir struct {
		once sync.Once
		path string
		err  error
	}
	build struct {
		once sync.Once
		path string
		err  error
	}
	// keepLogs is set when a test failed, so that Env.Stop keeps WorkDir.
	keepLogs atomic.Bool
)

// WorkDir is this test binary's scratch directory: the routeopt binary,
// kubeconfigs and every log. Env.Stop removes it unless a test failed.
func WorkDir() (string, error) {
	workDir.once.Do(func() {
		workDir.path, workDir.err = os.MkdirTemp("", "routeopt-e2e-")
	})
	return workDir.path, workDir.err
}

// KeepLogs makes Env.Stop keep WorkDir, for failures the framework cannot
// see (TestMain does: if code != 0 { framework.KeepLogs() }).
func KeepLogs() { keepLogs.Store(true) }

// RepoRoot finds the routeopt module root from the working directory, which
// `go test` sets to the package directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", module)
		}
		dir = parent
	}
}

func isModuleRoot(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == module
		}
	}
	return false
}

// BuildRouteopt builds ./cmd/routeopt once per test binary into WorkDir and
// returns its path. Call it early (`go framework.BuildRouteopt()` in
// TestMain) to overlap the build with the control plane's start.
func BuildRouteopt() (string, error) {
	build.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			build.err = err
			return
		}
		dir, err := WorkDir()
		if err != nil {
			build.err = err
			return
		}
		path := filepath.Join(dir, "routeopt")
		cmd := exec.Command("go", "build", "-o", path, "./cmd/routeopt")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/routeopt: %w\n%s", err, out)
			return
		}
		build.path = path
	})
	return build.path, build.err
}

// Routeopt is BuildRouteopt for a test: it fails the test on a build error.
func Routeopt(t testing.TB) string {
	t.Helper()
	path, err := BuildRouteopt()
	if err != nil {
		t.Fatal(err)
	}
	return path
}
