package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultStopTimeout bounds how long Stop waits after SIGTERM before SIGKILL.
const DefaultStopTimeout = 10 * time.Second

// ProcessOptions describe a subprocess.
type ProcessOptions struct {
	// Name names the log file and the process in messages.
	Name string
	// Path is the binary; Args its arguments (without argv[0]).
	Path string
	Args []string
	// Env is the whole environment; nil gives a minimal one (PATH, HOME,
	// TMPDIR) so the test's KUBECONFIG and the like never leak in.
	Env []string
	// Dir is the working directory; empty means the test binary's.
	Dir string
	// LogFile receives stdout and stderr; empty means <WorkDir>/<Name>-*.log.
	LogFile string
	// StopTimeout overrides DefaultStopTimeout.
	StopTimeout time.Duration
}

// Process is a subprocess in its own process group, so that Stop and Kill
// reach anything it forked, and registered with a reaper so that it dies with
// the test binary even when that panics or times out.
type Process struct {
	Name    string
	logPath string
	timeout time.Duration
	cmd     *exec.Cmd
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
}

// StartProcess starts a subprocess for the test: it is stopped when the test
// ends, and the tail of its log is printed if the test failed.
func StartProcess(t testing.TB, o ProcessOptions) *Process {
	t.Helper()
	p, err := startProcess(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop()
		if t.Failed() {
			keepLogs.Store(true)
			t.Logf("%s exited (%v); last lines of %s:\n%s", p.Name, p.err, p.logPath, p.LogTail(60))
		}
	})
	return p
}

func startProcess(o ProcessOptions) (*Process, error) {
	if o.Name == "" {
		o.Name = filepath.Base(o.Path)
	}
	var logf *os.File
	var err error
	if o.LogFile == "" {
		dir, derr := WorkDir()
		if derr != nil {
			return nil, derr
		}
		logf, err = os.CreateTemp(dir, o.Name+"-*.log")
	} else {
		logf, err = os.OpenFile(o.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("unable to create the log of %s: %w", o.Name, err)
	}
	if o.Env == nil {
		o.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "TMPDIR=" + os.TempDir()}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, o.Path, o.Args...)
	cmd.Env, cmd.Dir = o.Env, o.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logf.Close()
		return nil, fmt.Errorf("unable to start %s: %w", o.Name, err)
	}
	pid := cmd.Process.Pid
	guard(pid)
	p := &Process{Name: o.Name, logPath: logf.Name(), timeout: o.StopTimeout, cmd: cmd, cancel: cancel, done: make(chan struct{})}
	if p.timeout == 0 {
		p.timeout = DefaultStopTimeout
	}
	go func() {
		p.err = cmd.Wait()
		unguard(pid)
		_ = logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id (and process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns what exec.Cmd.Wait did.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Exited tells whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode is the exit code as a container runtime reports it: the code, or
// 128+signal when killed by a signal; -1 while running.
func (p *Process) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return p.cmd.ProcessState.ExitCode()
}

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Stop sends SIGTERM to the process group, waits up to the stop timeout,
// then SIGKILLs it. It returns the exit error, if any.
func (p *Process) Stop() error {
	return p.StopWithin(p.timeout)
}

// StopWithin is Stop with an explicit grace period, as a kubelet honours
// terminationGracePeriodSeconds.
func (p *Process) StopWithin(grace time.Duration) error {
	defer p.cancel()
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.Signal(syscall.SIGKILL)
		<-p.done
	}
	return p.err
}

// Kill sends SIGKILL to the process group and waits for the process to exit,
// as when a node or a leader dies without warning.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
	p.cancel()
}

// LogPath is the file holding stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// Logs returns everything the process wrote so far.
func (p *Process) Logs() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// LogTail returns the last n lines of the logs.
func (p *Process) LogTail(n int) string { return tailLines(p.Logs(), n) }

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// The reaper is a shell that reads "+ pgid", "- pgid" and "d dir" lines on
// stdin and, when stdin closes because the test binary died however it died
// (panic, timeout, SIGKILL), SIGKILLs the process groups still listed and
// removes the directories. Deferred calls and t.Cleanup do not run on a test
// timeout or a panic in TestMain.
const reaperScript = `l=" " d=""
while read -r op p; do
  case $op in
    +) l="$l$p " ;;
    -) case $l in *" $p "*) l="${l%% $p *} ${l#* $p }" ;; esac ;;
    d) d="$d $p" ;;
  esac
done
for p in $l; do kill -KILL "-$p" 2>/dev/null; done
for p in $d; do rm -rf "$p"; done
`

var reaper struct {
	once sync.Once
	mu   sync.Mutex
	w    io.WriteCloser
}

// guard lists process group pgid with the reaper.
func guard(pgid int) { tellReaper("+", strconv.Itoa(pgid)) }

// unguard removes pgid once it is gone, so a recycled id is never killed.
func unguard(pgid int) { tellReaper("-", strconv.Itoa(pgid)) }

// guardDir has the reaper remove dir, a temporary directory, after a crash.
func guardDir(dir string) {
	if tmp := os.TempDir(); filepath.IsAbs(dir) && strings.HasPrefix(dir, tmp+string(filepath.Separator)) && !strings.ContainsAny(dir, " \t\n") {
		tellReaper("d", dir)
	}
}

func tellReaper(op, arg string) {
	reaper.once.Do(func() {
		cmd := exec.Command("/bin/sh", "-c", reaperScript)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		w, err := cmd.StdinPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e: no reaper, subprocesses may outlive a crashed test: %v\n", err)
			return
		}
		reaper.w = w
		go func() { _ = cmd.Wait() }()
	})
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.w != nil {
		_, _ = fmt.Fprintf(reaper.w, "%s %s\n", op, arg)
	}
}
