//go:build linux

package devplane

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/procfs"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Roles of the test binary, set in its environment.
const (
	// parentRole plays routeopt dev: it prepares this data dir, launches
	// etcd from binariesVar through the plane and prints its pid.
	parentRole  = "DEVPLANE_TEST_PARENT_OF"
	binariesVar = "DEVPLANE_TEST_BINARIES"
)

// The test binary plays three parts besides the tests: the routeopt
// binary's dev-child, which the launchers run; a control-plane binary that
// only waits (a link to it named etcd), so the launchers can be tested
// without starting a real etcd; and routeopt dev, which launches one.
func TestMain(m *testing.M) {
	switch {
	case len(os.Args) > 1 && os.Args[1] == ChildCommand:
		err := RunChild(os.Args[2:], os.Stderr)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	case filepath.Base(os.Args[0]) == Etcd:
		for {
			time.Sleep(time.Hour)
		}
	case os.Getenv(parentRole) != "":
		playRouteoptDev(os.Getenv(parentRole), os.Getenv(binariesVar))
	}
	os.Exit(m.Run())
}

func playRouteoptDev(dataDir, binaries string) {
	p, err := Prepare(context.Background(), Config{DataDir: dataDir, Binaries: binaries, Log: logr.Discard()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cmd := exec.Command(p.EtcdPath, "--data-dir="+p.EtcdDataDir)
	if err := p.Launch(cmd.Start); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("launched %d\n", cmd.Process.Pid)
	_ = cmd.Wait()
	os.Exit(1)
}

// controlPlane is the directory with the real etcd (make envtest).
func controlPlane(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir, _ = filepath.Abs("../../../../bin/k8s")
	}
	if _, err := os.Stat(filepath.Join(dir, Etcd)); err != nil {
		t.Fatalf("no etcd in %s (make envtest, or set KUBEBUILDER_ASSETS): %v", dir, err)
	}
	return dir
}

// waitingBinaries is a control-plane directory whose etcd is this test
// binary, which only waits.
func waitingBinaries(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, Etcd)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd starts a real etcd on dataDir/etcd as envtest does, but as a
// plain child of the test: nothing ties it to a routeopt dev. It waits until
// etcd serves and holds its database.
func startEtcd(t *testing.T, dataDir string) *exec.Cmd {
	t.Helper()
	client, peer := freePort(t), freePort(t)
	cmd := exec.Command(filepath.Join(controlPlane(t), Etcd),
		"--data-dir="+filepath.Join(dataDir, "etcd"),
		fmt.Sprintf("--listen-client-urls=http://127.0.0.1:%d", client),
		fmt.Sprintf("--advertise-client-urls=http://127.0.0.1:%d", client),
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", peer))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	// Healthy, as a leftover of a run that got as far as serving: an etcd
	// stopped a fraction of a second into its very first start can leave a
	// member that never elects itself.
	health := fmt.Sprintf("http://127.0.0.1:%d/health", client)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(health)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK && etcdDataFree(dataDir) != nil {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd not healthy with its data locked within 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func recordOf(t *testing.T, pid int) processRecord {
	t.Helper()
	p, err := procfs.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	stat, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return processRecord{PID: pid, Start: stat.Starttime}
}

func isAlive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	stat, err := p.Stat()
	return err == nil && stat.State != "Z"
}

func prepare(t *testing.T, cfg Config) *Plane {
	t.Helper()
	if cfg.Log.GetSink() == nil {
		cfg.Log = testr.New(t)
	}
	p, err := Prepare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A second routeopt dev on the same data dir is refused with the first
// one's pid, and may start once the first has given the directory back.
func TestPrepareClaimsTheDataDir(t *testing.T) {
	dataDir := t.TempDir()
	cfg := Config{DataDir: dataDir, Binaries: waitingBinaries(t), Log: testr.New(t)}
	first := prepare(t, cfg)
	_, err := Prepare(context.Background(), cfg)
	want := fmt.Sprintf("routeopt dev (pid %d) is already running on %s", os.Getpid(), dataDir)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second Prepare: %v, want an error containing %q", err, want)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := prepare(t, cfg).Release(); err != nil {
		t.Fatal(err)
	}
}

// A process started through a launcher records itself, runs the real
// binary with envtest's arguments, and gets SIGKILL when the routeopt dev
// that launched it is killed with SIGKILL.
func TestLaunchedProcessDiesWithRouteoptDev(t *testing.T) {
	dataDir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self)
	parent.Env = append(os.Environ(), parentRole+"="+dataDir, binariesVar+"="+waitingBinaries(t))
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the parent said nothing: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "launched ")))
	if err != nil {
		t.Fatalf("the parent said %q", line)
	}

	var r processRecord
	deadline := time.Now().Add(30 * time.Second)
	for {
		if r, err = readRecord(recordPath(dataDir, Etcd)); err == nil {
			if cmdline, ok := identify(r, dataDir); ok && filepath.Base(cmdline[0]) == Etcd {
				if want := "--data-dir=" + filepath.Join(dataDir, "etcd"); cmdline[len(cmdline)-1] != want {
					t.Fatalf("launched %q, want the arguments passed on (%s)", cmdline, want)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record of the launched etcd within 30 s: %+v, %v", r, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r.PID != pid {
		t.Fatalf("record names pid %d, launched %d", r.PID, pid)
	}

	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for isAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the launched process outlived the routeopt dev that launched it")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A process a launcher started that prepares a plane instead of running
// dev-child (a binary that does not know it) stops there, instead of
// launching itself again without end.
func TestPrepareRefusesToRunUnderALauncher(t *testing.T) {
	t.Setenv(launcherEnv, "4242")
	_, err := Prepare(context.Background(), Config{DataDir: t.TempDir(), Binaries: waitingBinaries(t), Log: logr.Discard()})
	if err == nil || !strings.Contains(err.Error(), "started by a launcher of routeopt dev (pid 4242)") {
		t.Fatalf("Prepare: %v", err)
	}
}

// dev-child refuses to run anything once routeopt dev is no longer its
// parent, since the parent-death signal would then never come.
func TestChildRefusesAnOrphanedStart(t *testing.T) {
	dataDir := t.TempDir()
	err := RunChild([]string{"--parent", "1", "--record", recordPath(dataDir, Etcd), "--", "/bin/true"}, os.Stderr)
	if err == nil || !strings.Contains(err.Error(), "routeopt dev (pid 1) is no longer its parent") {
		t.Fatalf("RunChild: %v", err)
	}
	if _, err := os.Stat(recordPath(dataDir, Etcd)); !os.IsNotExist(err) {
		t.Errorf("an orphaned start was recorded: %v", err)
	}
}

// A leftover etcd an earlier run recorded is ended, and etcd then starts
// through the plane on the same data, as dev mode starts it.
func TestPrepareEndsARecordedLeftoverEtcd(t *testing.T) {
	dataDir := t.TempDir()
	leftover := startEtcd(t, dataDir)
	if err := os.MkdirAll(runDir(dataDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(recordPath(dataDir, Etcd), recordOf(t, leftover.Process.Pid)); err != nil {
		t.Fatal(err)
	}

	p := prepare(t, Config{DataDir: dataDir, Binaries: controlPlane(t)})
	defer func() { _ = p.Release() }()
	if isAlive(leftover.Process.Pid) {
		t.Fatalf("the leftover etcd (pid %d) still runs", leftover.Process.Pid)
	}
	etcd := &envtest.Etcd{Path: p.EtcdPath, DataDir: p.EtcdDataDir}
	if err := p.Launch(etcd.Start); err != nil {
		t.Fatalf("etcd did not start after the leftover was ended: %v", err)
	}
	if err := etcd.Stop(); err != nil {
		t.Fatal(err)
	}
}

// Records that no longer name the process they recorded leave whatever
// has the pid now alone.
func TestPrepareLeavesUnrelatedProcessesAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func(dataDir string, sleeper processRecord) processRecord
	}{
		{"pid reused: another start time", func(_ string, s processRecord) processRecord {
			return processRecord{PID: s.PID, Start: s.Start + 1}
		}},
		{"same process, command line without the data dir", func(_ string, s processRecord) processRecord { return s }},
		{"process gone", func(string, processRecord) processRecord { return processRecord{PID: 1 << 30, Start: 1} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dataDir := t.TempDir()
			sleeper := exec.Command("sleep", "600")
			if err := sleeper.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
			if err := os.MkdirAll(runDir(dataDir), 0o700); err != nil {
				t.Fatal(err)
			}
			r := tc.record(dataDir, recordOf(t, sleeper.Process.Pid))
			if err := writeRecord(recordPath(dataDir, APIServer), r); err != nil {
				t.Fatal(err)
			}
			if err := prepare(t, Config{DataDir: dataDir, Binaries: waitingBinaries(t)}).Release(); err != nil {
				t.Fatal(err)
			}
			if !isAlive(sleeper.Process.Pid) {
				t.Fatalf("Prepare ended pid %d, which only had a recorded pid", sleeper.Process.Pid)
			}
		})
	}
}

// An etcd nobody recorded (started by hand, or by an older routeopt dev)
// that holds the data is named with the command that stops it, and left
// running.
func TestPrepareRefusesAnUnrecordedEtcd(t *testing.T) {
	dataDir := t.TempDir()
	etcd := startEtcd(t, dataDir)
	pid := strconv.Itoa(etcd.Process.Pid)
	_, err := Prepare(context.Background(), Config{DataDir: dataDir, Binaries: controlPlane(t), Log: logr.Discard()})
	if err == nil {
		t.Fatal("Prepare succeeded while another etcd holds the data")
	}
	for _, want := range []string{"etcd's data in " + filepath.Join(dataDir, "etcd") + " is in use", "pid " + pid + ": ", "kill " + pid, "--data-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !isAlive(etcd.Process.Pid) {
		t.Fatal("Prepare ended an etcd it had no record of")
	}
	// The refused start gave the data dir back.
	lock, err := lockDataDir(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	_ = lock.Close()
}

func TestFlagValues(t *testing.T) {
	for _, tc := range []struct {
		cmdline []string
		want    string
	}{
		{[]string{"etcd", "--listen-client-urls=http://a:1,http://b:2"}, "http://a:1 http://b:2"},
		{[]string{"etcd", "--listen-client-urls", "http://a:1"}, "http://a:1"},
		{[]string{"etcd", "-listen-client-urls=http://a:1"}, "http://a:1"},
		{[]string{"etcd", "--listen-peer-urls=http://a:1"}, ""},
		{[]string{"etcd", "--listen-client-urls"}, ""},
	} {
		if got := strings.Join(flagValues(tc.cmdline, "listen-client-urls"), " "); got != tc.want {
			t.Errorf("flagValues(%q) = %q, want %q", tc.cmdline, got, tc.want)
		}
	}
}
