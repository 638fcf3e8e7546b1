//go:build linux

package devplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// Bounds on ending a leftover: it gets SIGTERM, then SIGKILL.
const (
	termGrace = 10 * time.Second
	killGrace = 5 * time.Second
)

// lockDataDir takes an exclusive lock on <dataDir>/dev.lock, which the
// kernel drops when this process ends however it ends, and writes this
// process's pid into it for the message a second routeopt dev shows.
func lockDataDir(dataDir string) (*os.File, error) {
	path := filepath.Join(dataDir, "dev.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("unable to open %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("unable to lock %s: %w", path, err)
		}
		holder := "another routeopt dev"
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				holder = fmt.Sprintf("routeopt dev (pid %d)", pid)
			}
		}
		return nil, fmt.Errorf("%s is already running on %s: stop it first (Ctrl-C where it runs), or give this one another --data-dir", holder, dataDir)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// writeLaunchers writes <dataDir>/run/etcd and kube-apiserver: scripts that
// run the real binaries through `routeopt dev-child`, which ties them to this
// process, and points p at them.
func writeLaunchers(p *Plane, self string) error {
	dir := runDir(p.dataDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, l := range []struct {
		path *string
		name string
	}{{&p.EtcdPath, Etcd}, {&p.APIServerPath, APIServer}} {
		launcher := filepath.Join(dir, l.name)
		script := fmt.Sprintf("#!/bin/sh\n# routeopt dev (pid %[1]d) runs %[2]s through this file so that it dies with routeopt dev.\nexport %[3]s=%[1]d\nexec %[4]s %[5]s --parent %[1]d --record %[6]s -- %[7]s \"$@\"\n",
			os.Getpid(), l.name, launcherEnv, shellQuote(self), ChildCommand, shellQuote(recordPath(p.dataDir, l.name)), shellQuote(*l.path))
		if err := os.WriteFile(launcher, []byte(script), 0o700); err != nil {
			return fmt.Errorf("unable to write %s: %w", launcher, err)
		}
		*l.path = launcher
	}
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func recordPath(dataDir, name string) string { return filepath.Join(runDir(dataDir), name+".pid") }

// execChild arms the parent-death signal and executes argv in this process.
func execChild(parent int, record string, argv []string) error {
	// The parent-death signal is a setting of the calling thread, and execve
	// keeps only the thread that calls it: both on this one.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("unable to set the parent-death signal: %w", err)
	}
	// routeopt dev may have died between the fork and the line above.
	if ppid := os.Getppid(); ppid != parent {
		return fmt.Errorf("routeopt dev (pid %d) is no longer its parent (pid %d)", parent, ppid)
	}
	self, err := procfs.Self()
	if err != nil {
		return err
	}
	stat, err := self.Stat()
	if err != nil {
		return err
	}
	if err := writeRecord(record, processRecord{PID: os.Getpid(), Start: stat.Starttime}); err != nil {
		return err
	}
	if err := os.Unsetenv(launcherEnv); err != nil {
		return err
	}
	return unix.Exec(argv[0], argv, os.Environ())
}

// processRecord names one process for as long as the machine runs: a pid
// and its start time in clock ticks since boot, which a recycled pid does
// not share.
type processRecord struct {
	PID   int
	Start uint64
}

func writeRecord(path string, r processRecord) error {
	tmp := path + ".tmp" + strconv.Itoa(r.PID)
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %d\n", r.PID, r.Start), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readRecord(path string) (processRecord, error) {
	var r processRecord
	b, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if _, err := fmt.Sscanf(string(b), "%d %d", &r.PID, &r.Start); err != nil || r.PID <= 0 {
		return r, fmt.Errorf("%s is not a process record", path)
	}
	return r, nil
}

// endLeftovers ends the processes an earlier run of dataDir recorded and
// that still run, then makes sure no other process holds etcd's data there.
func endLeftovers(ctx context.Context, dataDir string, log logr.Logger) error {
	for _, name := range []string{APIServer, Etcd} {
		path := recordPath(dataDir, name)
		r, err := readRecord(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			log.Info("Ignoring an unreadable process record", "file", path, "error", err.Error())
		} else if err := endRecorded(ctx, dataDir, name, r, log); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return etcdDataFree(dataDir)
}

// endRecorded ends r if it still is the process an earlier run started:
// same start time, and a command line that names dataDir. Any other process
// that has its pid by now is left alone.
func endRecorded(ctx context.Context, dataDir, name string, r processRecord, log logr.Logger) error {
	target, err := openProcess(r.PID)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unable to open process %d: %w", r.PID, err)
	}
	defer target.close()
	cmdline, same := identify(r, dataDir)
	if !same {
		log.Info("A recorded process has ended; its pid now belongs to another process, which is left alone", "name", name, "pid", r.PID)
		return nil
	}
	log.Info("Ending a process an earlier run of this data dir left running", "name", name, "pid", r.PID, "command", strings.Join(cmdline, " "))
	for _, step := range []struct {
		sig   unix.Signal
		grace time.Duration
	}{{unix.SIGTERM, termGrace}, {unix.SIGKILL, killGrace}} {
		if err := target.signal(step.sig); err != nil {
			if errors.Is(err, unix.ESRCH) {
				return nil
			}
			return fmt.Errorf("unable to signal %s (pid %d): %w", name, r.PID, err)
		}
		deadline := time.Now().Add(step.grace)
		for time.Now().Before(deadline) {
			if target.exited(r, 100*time.Millisecond) {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("%s (pid %d), left running by an earlier run of %s, did not end on SIGKILL within %s", name, r.PID, dataDir, killGrace)
}

// process is a process to end. Its pidfd keeps naming the process it was
// opened on even if that exits and its pid is reused between the identity
// check and the signal; kernels before 5.3 have none and get plain kill.
type process struct {
	pid   int
	pidfd int // -1 without
}

func openProcess(pid int) (*process, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		return &process{pid: pid, pidfd: -1}, nil
	}
	if err != nil {
		return nil, err
	}
	return &process{pid: pid, pidfd: pidfd}, nil
}

func (p *process) signal(sig unix.Signal) error {
	if p.pidfd < 0 {
		return unix.Kill(p.pid, sig)
	}
	return unix.PidfdSendSignal(p.pidfd, sig, nil, 0)
}

// exited waits up to wait for every thread of the process to have exited,
// and with them its open files and locks: a zombie group leader may still
// have threads that hold them.
func (p *process) exited(r processRecord, wait time.Duration) bool {
	if p.pidfd < 0 {
		time.Sleep(wait)
		proc, err := procfs.NewProc(r.PID)
		if err != nil {
			return true
		}
		stat, err := proc.Stat()
		return err != nil || stat.Starttime != r.Start || (stat.State == "Z" && stat.NumThreads <= 1)
	}
	fds := []unix.PollFd{{Fd: int32(p.pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(wait.Milliseconds()))
	return err == nil && n > 0
}

func (p *process) close() {
	if p.pidfd >= 0 {
		_ = unix.Close(p.pidfd)
	}
}

// identify tells whether r's pid still runs the recorded process with a
// command line naming dataDir, and returns that command line.
func identify(r processRecord, dataDir string) ([]string, bool) {
	p, err := procfs.NewProc(r.PID)
	if err != nil {
		return nil, false
	}
	stat, err := p.Stat()
	if err != nil || stat.Starttime != r.Start {
		return nil, false
	}
	cmdline, err := p.CmdLine()
	if err != nil {
		return nil, false
	}
	for _, arg := range cmdline {
		if strings.Contains(arg, dataDir+string(filepath.Separator)) {
			return cmdline, true
		}
	}
	return cmdline, false
}

// etcdDataFree fails when a process holds etcd's database in dataDir: etcd
// takes an exclusive flock on it, and a second etcd would wait for that
// lock forever. routeopt dev did not start that process (or it would have
// been recorded and ended), so it is named and left alone.
func etcdDataFree(dataDir string) error {
	db := filepath.Join(dataDir, "etcd", "member", "snap", "db")
	f, err := os.Open(db)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unable to open %s: %w", db, err)
	}
	defer func() { _ = f.Close() }()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		return unix.Flock(int(f.Fd()), unix.LOCK_UN)
	}
	if !errors.Is(err, unix.EWOULDBLOCK) {
		return fmt.Errorf("unable to check the lock on %s: %w", db, err)
	}
	if resolved, err := filepath.EvalSymlinks(db); err == nil {
		db = resolved
	}
	holders := holdersOf(db)
	if len(holders) == 0 {
		return fmt.Errorf("etcd's data in %s is in use by a process routeopt dev did not start (`lsof %s` shows which): stop it if it is left over from an earlier routeopt dev, or give routeopt dev another --data-dir", filepath.Join(dataDir, "etcd"), db)
	}
	var pids, described []string
	for _, h := range holders {
		pids = append(pids, strconv.Itoa(h.pid))
		described = append(described, fmt.Sprintf("pid %d: %s", h.pid, strings.Join(h.cmdline, " ")))
	}
	return fmt.Errorf("etcd's data in %s is in use by a process routeopt dev did not start (%s), so it is left alone: if it is left over from an earlier routeopt dev, stop it with `kill %s`; else give routeopt dev another --data-dir",
		filepath.Join(dataDir, "etcd"), strings.Join(described, "; "), strings.Join(pids, " "))
}

type holder struct {
	pid     int
	cmdline []string
}

// holdersOf lists the processes with file open, and the kube-apiservers
// that use an etcd among them; processes of other users stay unseen unless
// this runs as root.
func holdersOf(file string) []holder {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	var (
		found   []holder
		clients []string
	)
	for _, p := range procs {
		if p.PID == os.Getpid() { // the check's own descriptor
			continue
		}
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			continue
		}
		for _, t := range targets {
			if t == file {
				cmdline, _ := p.CmdLine()
				found = append(found, holder{pid: p.PID, cmdline: cmdline})
				for _, u := range flagValues(cmdline, "listen-client-urls") {
					clients = append(clients, strings.TrimSuffix(u, "/"))
				}
				break
			}
		}
	}
	if len(clients) == 0 {
		return found
	}
	for _, p := range procs {
		cmdline, err := p.CmdLine()
		if err != nil || len(cmdline) == 0 || filepath.Base(cmdline[0]) != APIServer {
			continue
		}
		for _, server := range flagValues(cmdline, "etcd-servers") {
			if slices.Contains(clients, strings.TrimSuffix(server, "/")) {
				found = append(found, holder{pid: p.PID, cmdline: cmdline})
				break
			}
		}
	}
	return found
}

// flagValues returns the comma-separated values of --name=v or --name v.
func flagValues(cmdline []string, name string) []string {
	var values []string
	for i, arg := range cmdline {
		arg = strings.TrimLeft(arg, "-")
		var v string
		switch {
		case strings.HasPrefix(arg, name+"="):
			v = strings.TrimPrefix(arg, name+"=")
		case arg == name && i+1 < len(cmdline):
			v = cmdline[i+1]
		default:
			continue
		}
		values = append(values, strings.Split(v, ",")...)
	}
	return values
}
