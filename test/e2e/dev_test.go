package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
)

// devProcess is a `routeopt dev` process and what it printed when ready.
type devProcess struct {
	*framework.Process
	url, key string
	// ready is how long it took from exec to its ready lines.
	ready time.Duration
}

// controlPlaneAssets is $KUBEBUILDER_ASSETS (make test sets it), else bin/k8s.
func controlPlaneAssets(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "bin", "k8s")
}

// startDev runs `routeopt dev` on dataDir with one solve at a time and
// waits up to timeout for its ready lines.
func startDev(t *testing.T, name, dataDir string, timeout time.Duration) *devProcess {
	t.Helper()
	began := time.Now()
	p := framework.StartProcess(t, framework.ProcessOptions{
		Name: name, Path: framework.Routeopt(t),
		Args: []string{"dev", "--listen=127.0.0.1:0", "--data-dir=" + dataDir, "--control-plane-dir=" + controlPlaneAssets(t),
			"--max-concurrent-solves=1",
			// The default 1.5 s bound answers 503 when this shared machine
			// is busy; this test is about restarts, not that bound.
			"--kube-timeout=10s"},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir, "TMPDIR=" + os.TempDir()},
	})
	d := &devProcess{Process: p}
	deadline := began.Add(timeout)
	for {
		for _, line := range strings.Split(p.Logs(), "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "REST API:"); ok {
				d.url = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "API key:"); ok {
				d.key = strings.TrimSpace(v)
			}
		}
		if d.url != "" && d.key != "" {
			d.ready = time.Since(began)
			return d
		}
		if p.Exited() {
			t.Fatalf("%s exited before it was ready (%v):\n%s", name, p.Wait(), p.LogTail(40))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %s:\n%s", name, timeout, p.LogTail(40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// controlPlaneOf lists the live etcd and kube-apiserver processes whose
// command line names dataDir, as "pid: command line".
func controlPlaneOf(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if base := filepath.Base(args[0]); base != "etcd" && base != "kube-apiserver" {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			// The state follows the parenthesised command name; a zombie holds nothing.
			if fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(fields) > 0 && fields[0] == "Z" {
				continue
			}
		}
		if strings.Contains(strings.Join(args, " "), dataDir+"/") {
			found = append(found, fmt.Sprintf("%d: %s", pid, strings.Join(args, " ")))
		}
	}
	return found
}

// waitNoControlPlane waits up to timeout for dataDir's etcd and
// kube-apiserver to be gone.
func waitNoControlPlane(t *testing.T, dataDir string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := controlPlaneOf(t, dataDir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running %s after routeopt dev was killed:\n%s", timeout, strings.Join(left, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A `routeopt dev` killed with SIGKILL takes its etcd and kube-apiserver
// with it; started again on the same data dir it is ready within 30 s with
// every optimization, and the ones it was solving or had queued are solved.
//
// Not parallel: the 30 s bound is measured on a machine this package's other
// tests are not loading at the same time.
func TestDevSurvivesSIGKILL(t *testing.T) {
	dataDir := t.TempDir()
	dev := startDev(t, "dev-first", dataDir, 2*time.Minute)
	t.Logf("first start ready in %s", dev.ready.Round(time.Millisecond))

	var finished, unfinished []string
	for i := range 2 {
		finished = append(finished, createOptimization(t, dev.url, dev.key, fmt.Sprintf("dev-kill-done-%d", i), nil))
	}
	for _, id := range finished {
		waitState(t, dev.url, dev.key, id, string(v1alpha1.StateCompleted), time.Minute)
	}
	// One solve at a time: the first of these runs for 8 s, the others wait.
	for i := range 3 {
		unfinished = append(unfinished, createOptimization(t, dev.url, dev.key, fmt.Sprintf("dev-kill-open-%d", i), func(body map[string]any) {
			body["options"] = map[string]any{"solver_seconds": 8}
		}))
	}
	waitState(t, dev.url, dev.key, unfinished[0], string(v1alpha1.StateRunning), 30*time.Second)
	for _, id := range unfinished[1:] {
		if _, rec := call(dev.url, dev.key, http.MethodGet, "/v1/optimizations/"+id, nil, nil); rec["status"] != string(v1alpha1.StateQueued) {
			t.Fatalf("optimization %s is %v at the kill, want queued", id, rec["status"])
		}
	}

	if len(controlPlaneOf(t, dataDir)) != 2 {
		t.Fatalf("want etcd and kube-apiserver of %s before the kill, found %q", dataDir, controlPlaneOf(t, dataDir))
	}
	if err := syscall.Kill(dev.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-dev.Done()
	waitNoControlPlane(t, dataDir, 10*time.Second)

	again := startDev(t, "dev-after-kill", dataDir, 30*time.Second)
	t.Logf("ready %s after the kill", again.ready.Round(time.Millisecond))
	if again.key != dev.key {
		t.Errorf("the dev key changed across the kill: %s then %s", dev.key, again.key)
	}
	all := append(append([]string{}, finished...), unfinished...)
	status, list := call(again.url, again.key, http.MethodGet, "/v1/optimizations?page_size=100", nil, nil)
	if status != http.StatusOK {
		t.Fatalf("list after the kill: %d %v", status, list)
	}
	listed := map[string]bool{}
	for _, item := range list["items"].([]any) {
		listed[item.(map[string]any)["id"].(string)] = true
	}
	for _, id := range all {
		if !listed[id] {
			t.Errorf("optimization %s is not listed after the kill", id)
		}
		if status, rec := call(again.url, again.key, http.MethodGet, "/v1/optimizations/"+id, nil, nil); status != http.StatusOK {
			t.Errorf("GET %s after the kill: %d %v", id, status, rec)
		}
	}
	for _, id := range finished {
		if status, _ := call(again.url, again.key, http.MethodGet, "/v1/optimizations/"+id+"/result", nil, nil); status != http.StatusOK {
			t.Errorf("result of %s after the kill: %d", id, status)
		}
	}
	for _, id := range unfinished {
		waitState(t, again.url, again.key, id, string(v1alpha1.StateCompleted), 2*time.Minute)
	}
}

// An etcd an earlier run of the data dir recorded but could not take down
// with it (here: launched by this test, which stays alive) is ended by the
// next start, which then serves the data.
func TestDevEndsARecordedLeftoverEtcd(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	first := startDev(t, "dev-before-leftover", dataDir, 2*time.Minute)
	id := createOptimization(t, first.url, first.key, "dev-leftover", nil)
	waitState(t, first.url, first.key, id, string(v1alpha1.StateCompleted), time.Minute)
	if err := first.Stop(); err != nil {
		t.Fatalf("routeopt dev did not stop cleanly: %v", err)
	}

	// Launched as routeopt dev launches it, through dev-child and with a
	// record, from a thread that lives until the test ends.
	runDir := filepath.Join(dataDir, "run")
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	client, peer := freeAddr(t), freeAddr(t)
	leftover := exec.Command(framework.Routeopt(t), "dev-child", "--parent", strconv.Itoa(os.Getpid()), "--record", filepath.Join(runDir, "etcd.pid"), "--",
		filepath.Join(controlPlaneAssets(t), "etcd"), "--data-dir="+filepath.Join(dataDir, "etcd"),
		"--listen-client-urls=http://"+client, "--advertise-client-urls=http://"+client, "--listen-peer-urls=http://"+peer)
	leftover.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	started, exited := make(chan error, 1), make(chan struct{})
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := leftover.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = leftover.Wait()
		close(exited)
		<-release
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = syscall.Kill(-leftover.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		close(release)
	})
	waitEtcdHealthy(t, client, "the leftover etcd")

	again := startDev(t, "dev-after-leftover", dataDir, time.Minute)
	select {
	case <-exited:
	case <-time.After(time.Second):
		t.Fatalf("the leftover etcd (pid %d) still runs after routeopt dev started", leftover.Process.Pid)
	}
	if !strings.Contains(again.Logs(), fmt.Sprintf(`"pid": %d`, leftover.Process.Pid)) {
		t.Errorf("routeopt dev did not log ending pid %d:\n%s", leftover.Process.Pid, again.LogTail(40))
	}
	if status, rec := call(again.url, again.key, http.MethodGet, "/v1/optimizations/"+id, nil, nil); status != http.StatusOK || rec["status"] != string(v1alpha1.StateCompleted) {
		t.Errorf("after the leftover was ended: %d %v", status, rec)
	}
}

// An etcd nobody recorded that holds the data dir's etcd data is left
// running, and routeopt dev exits at once saying which process it is and
// how to stop it.
func TestDevRefusesAForeignEtcd(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	client, peer := freeAddr(t), freeAddr(t)
	foreign := framework.StartProcess(t, framework.ProcessOptions{
		Name: "foreign-etcd", Path: filepath.Join(controlPlaneAssets(t), "etcd"),
		Args: []string{"--data-dir=" + filepath.Join(dataDir, "etcd"),
			"--listen-client-urls=http://" + client, "--advertise-client-urls=http://" + client, "--listen-peer-urls=http://" + peer},
	})
	waitEtcdHealthy(t, client, "the etcd")

	began := time.Now()
	dev := framework.StartProcess(t, framework.ProcessOptions{
		Name: "dev-refused", Path: framework.Routeopt(t),
		Args: []string{"dev", "--listen=127.0.0.1:0", "--data-dir=" + dataDir, "--control-plane-dir=" + controlPlaneAssets(t)},
		Env:  []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dataDir, "TMPDIR=" + os.TempDir()},
	})
	select {
	case <-dev.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("routeopt dev still runs 30 s after it started on a data dir another etcd holds:\n%s", dev.LogTail(20))
	}
	t.Logf("refused in %s", time.Since(began).Round(time.Millisecond))
	if dev.ExitCode() == 0 {
		t.Error("routeopt dev exited 0")
	}
	pid := strconv.Itoa(foreign.Pid())
	for _, want := range []string{"is in use by a process routeopt dev did not start", "pid " + pid + ": ", "kill " + pid} {
		if !strings.Contains(dev.Logs(), want) {
			t.Errorf("routeopt dev did not say %q:\n%s", want, dev.LogTail(20))
		}
	}
	if foreign.Exited() {
		t.Error("routeopt dev ended an etcd it did not start")
	}
}

// waitEtcdHealthy waits up to 30 s for the etcd serving clients at addr
// to answer its health check.
func waitEtcdHealthy(t *testing.T, addr, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get("http://" + addr + "/health"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become healthy within 30 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
