package browser

import (
	"routeopt.io/routeopt/test/e2e/framework"

	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// devServer is a `routeopt dev` process: local kube-apiserver and etcd, the
// controllers with the in-process solver, the REST API and the portal.
type devServer struct {
	// URL is where the API and the portal are served (http://127.0.0.1:port).
	URL string
	// Key is the dev company's API key.
	Key string
	// DataDir holds etcd's data and the admin kubeconfig.
	DataDir string

	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// startDev runs `routeopt dev` on a free loopback port with its own data
// directory under workDir and returns once it printed its ready lines.
func startDev(name string, extraArgs ...string) (*devServer, error) {
	bin, err := framework.BuildRouteopt()
	if err != nil {
		return nil, err
	}
	assets, err := controlPlaneDir()
	if err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp(workDir, name+"-")
	if err != nil {
		return nil, err
	}
	logPath := dataDir + ".log"
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := append([]string{"dev",
		"--listen", "127.0.0.1:0", "--data-dir", dataDir, "--control-plane-dir", assets,
		// Two solves at once: the tests run in parallel and most problems
		// are tiny; the cancel test keeps one slot busy for a moment.
		"--max-concurrent-solves", "2",
		// The default 1.5 s bound on each Kubernetes call answers 503 when
		// this shared 2-core machine is busy (a solve, Chromium, other
		// tests); the tests are about the portal, not that bound.
		"--kube-timeout", "10s",
	}, extraArgs...)
	cmd := exec.Command(bin, args...)
	// Only what the process needs: the test's KUBECONFIG and the like stay out.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir, "TMPDIR=" + os.TempDir()}
	// stdout goes through a pipe of our own for the ready lines (and on to
	// the log); exec's StdoutPipe may not be read after Wait starts.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stdoutW, logf
	// Its own process group so that a last-resort SIGKILL reaches what it
	// forked; SIGTERM when this test binary dies (a panic or a -timeout
	// skips TestMain's cleanup), which makes dev mode stop etcd and
	// kube-apiserver cleanly, since envtest runs them in their own groups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	d := &devServer{DataDir: dataDir, name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that forked exits, not the
		// process: keep that thread alive for as long as the child runs.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(d.done)
			return
		}
		started <- nil
		d.err = cmd.Wait()
		close(d.done)
	}()
	err = <-started
	_ = stdoutW.Close()
	if err != nil {
		return nil, fmt.Errorf("start routeopt dev: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		var once sync.Once
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			line := s.Text()
			_, _ = fmt.Fprintln(logf, line)
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "REST API:"); ok {
				d.URL = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "API key:"); ok {
				d.Key = strings.TrimSpace(v)
			}
			if d.URL != "" && d.Key != "" {
				once.Do(func() { close(ready) })
			}
		}
		// The log file stays open: stderr may still write to it, and the
		// test binary's exit closes it.
		_ = stdout.Close()
	}()
	select {
	case <-ready:
		return d, nil
	case <-d.done:
		return nil, fmt.Errorf("routeopt dev exited before it was ready (%v); last lines of %s:\n%s", d.err, logPath, d.logTail(40))
	case <-time.After(2 * time.Minute):
		d.stop()
		return nil, fmt.Errorf("routeopt dev was not ready within 2 minutes; last lines of %s:\n%s", logPath, d.logTail(40))
	}
}

// stop sends SIGTERM, which stops the API, the controllers and the control
// plane, and SIGKILLs the process group after a grace period.
func (d *devServer) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}

// logTail returns the last n lines of the process's output.
func (d *devServer) logTail(n int) string {
	b, _ := os.ReadFile(d.logPath)
	lines := strings.SplitAfter(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// kubeconfig is the admin (system:masters) kubeconfig dev mode writes.
func (d *devServer) kubeconfig() string { return filepath.Join(d.DataDir, "kubeconfig") }

var companySeq atomic.Int32

// newCompany onboards a company of its own for one test, with the real
// `routeopt tenant create` and `routeopt apikey create`, so that tests
// running in parallel never see each other's optimizations or keys. It
// returns an API client with the company's first key, which holds scopes
// (all of them when none are given), once the API accepts that key.
func (d *devServer) newCompany(t testing.TB, displayName string, scopes ...string) *apiClient {
	t.Helper()
	id := fmt.Sprintf("co-%d-%d", os.Getpid()%10000, companySeq.Add(1))
	d.routeopt(t, "tenant", "create", id, "--display-name", displayName, "--kubeconfig", d.kubeconfig())
	args := []string{"apikey", "create", "--tenant", id, "--name", "browser test", "--kubeconfig", d.kubeconfig()}
	if len(scopes) > 0 {
		args = append(args, "--scopes", strings.Join(scopes, ","))
	}
	key := strings.TrimSpace(d.routeopt(t, args...))
	if !strings.HasPrefix(key, "svc_sk_") {
		t.Fatalf("routeopt apikey create printed %q, want a svc_sk_ key", key)
	}
	c := &apiClient{base: d.URL, key: key}
	// The API reads keys through an informer: wait until it knows this one.
	waitFor(t, 30*time.Second, "the API accepts the new company's key", func() (bool, string) {
		status, body := c.do(t, "GET", "/v1/me", nil, nil)
		return status == 200, fmt.Sprintf("GET /v1/me: %d %s", status, body)
	})
	return c
}

// routeopt runs a routeopt subcommand (a platform-team command such as
// tenant or apikey) and returns its standard output.
func (d *devServer) routeopt(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := framework.BuildRouteopt()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.DataDir}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("routeopt %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// controlPlaneDir is $KUBEBUILDER_ASSETS (make test sets it), else bin/k8s.
func controlPlaneDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := framework.RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run `make envtest` (or set KUBEBUILDER_ASSETS)", bin, dir)
		}
	}
	return dir, nil
}

// waitFor polls cond until it holds, failing the test at the deadline with
// the last state cond described.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last: %s", timeout, what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
