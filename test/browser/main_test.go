// Package browser tests the web portal in real headless Chromium,
// driven from Go with chromedp, against a real `routeopt dev` (local
// kube-apiserver and etcd, the controllers, the REST API). Each test makes a
// company of its own through the platform-team commands, creates its data
// through the REST API and checks that the pages show what the API says. The
// ids, classes and data attributes they use are the portal's contract,
// webserver/portal/README.md.
//
// Chromium comes from the machine (Debian's chromium package; .ci/run
// installs it). Without it the tests skip, except in CI (CI set), where
// that is a failure.
package browser

import (
	"routeopt.io/routeopt/test/e2e/framework"

	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
)

var (
	// workDir holds the routeopt binary, the dev data directories and logs,
	// and the browser's profile.
	workDir string

	// chromiumPath is the browser; empty when the machine has none.
	chromiumPath string

	shared struct {
		once sync.Once
		dev  *devServer
		err  error
	}
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chromiumPath = p
			break
		}
	}
	if ci := os.Getenv("CI"); chromiumPath == "" && ci != "" && ci != "false" && ci != "0" {
		fmt.Fprintln(os.Stderr, "test/browser: chromium is not installed, and CI is set: the browser tests must run in CI (.ci/run installs Debian's chromium package)")
		return 1
	}
	var err error
	if workDir, err = os.MkdirTemp("", "routeopt-browser-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stopBrowser()
	if shared.dev != nil {
		shared.dev.stop()
		if code != 0 {
			fmt.Fprintf(os.Stderr, "test/browser: last lines of the shared routeopt dev log:\n%s\n", shared.dev.logTail(60))
		}
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "test/browser: logs kept in %s\n", workDir)
	} else {
		_ = os.RemoveAll(workDir)
		// The routeopt binary, built by the e2e framework into its own directory.
		if dir, err := framework.WorkDir(); err == nil {
			_ = os.RemoveAll(dir)
		}
	}
	return code
}

// requireChromium skips the test when the machine has no browser (never in
// CI: TestMain fails then).
func requireChromium(t testing.TB) {
	t.Helper()
	if chromiumPath == "" {
		t.Skip("chromium is not installed (apt-get install chromium); the browser tests need it and run in CI")
	}
}

// browserTest starts a test that drives the browser on the shared dev
// instance: skipped at once without chromium, parallel with the others.
func browserTest(t *testing.T) *devServer {
	t.Helper()
	requireChromium(t)
	t.Parallel()
	return sharedDev(t)
}

// sharedDev is the `routeopt dev` the package's tests share (each with its
// own company), started on first use.
func sharedDev(t testing.TB) *devServer {
	t.Helper()
	shared.once.Do(func() { shared.dev, shared.err = startDev("dev") })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dev
}

// extraDev starts a dev instance of the test's own, with other flags; it
// stops when the test ends.
func extraDev(t testing.TB, name string, args ...string) *devServer {
	t.Helper()
	d, err := startDev(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("last lines of %s's log:\n%s", name, d.logTail(40))
		}
	})
	return d
}
