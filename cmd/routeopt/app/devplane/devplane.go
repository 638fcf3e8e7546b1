// Package devplane ties dev mode's etcd and kube-apiserver to the routeopt
// dev process that starts them. envtest runs them in process groups of their
// own, so without this a routeopt dev killed with SIGKILL would leave them
// running, holding etcd's data directory, and the next start would wait for
// etcd in vain.
//
// On Linux each of them is started through a launcher, `routeopt dev-child`,
// that arms the parent-death signal (SIGKILL) before it executes the real
// binary and records the process in the data directory. A start claims the
// data directory with a lock, ends the processes an earlier run of it
// recorded and refuses, naming the process, to start while anything else
// holds etcd's data there. On other systems nothing of this is available:
// the binaries are started directly, and what a killed routeopt dev leaves
// running has to be ended by hand.
package devplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/go-logr/logr"
)

// Names of the control-plane binaries, as envtest finds them.
const (
	Etcd      = "etcd"
	APIServer = "kube-apiserver"
)

// launcherEnv is set by the launchers for dev-child. A process that finds
// it and prepares a plane was run by a launcher whose binary does not know
// dev-child; launching again would repeat that without end.
const launcherEnv = "ROUTEOPT_DEV_LAUNCHER_OF"

// Config says where dev mode's control plane lives.
type Config struct {
	// DataDir is routeopt dev's --data-dir, absolute.
	DataDir string
	// Binaries holds etcd and kube-apiserver.
	Binaries string
	// Self is the routeopt binary that runs `dev-child`; default the
	// running executable.
	Self string
	Log  logr.Logger
}

// Plane is a data directory claimed by one routeopt dev, its leftovers
// ended, ready for envtest to start the control plane in it.
type Plane struct {
	// EtcdPath and APIServerPath are what envtest should run.
	EtcdPath, APIServerPath string
	// EtcdDataDir is etcd's --data-dir, kept across runs.
	EtcdDataDir string
	// APIServerCertDir is kube-apiserver's --cert-dir, emptied on each
	// start; inside the data directory, so a leftover kube-apiserver is
	// recognisable by its command line and a killed run leaves nothing in
	// the system's temporary directory.
	APIServerCertDir string

	dataDir string
	lock    *os.File
	thread  *thread
}

// Prepare claims cfg.DataDir, ends what an earlier run of it left running,
// writes the launchers and returns the plane. Release gives it back.
func Prepare(ctx context.Context, cfg Config) (_ *Plane, err error) {
	if parent := os.Getenv(launcherEnv); parent != "" {
		return nil, fmt.Errorf("started by a launcher of routeopt dev (pid %s), which expected this binary to run %s: not starting another control plane", parent, ChildCommand)
	}
	if !filepath.IsAbs(cfg.DataDir) {
		return nil, fmt.Errorf("data dir %s is not absolute", cfg.DataDir)
	}
	if cfg.Self == "" {
		if cfg.Self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("unable to find the routeopt binary: %w", err)
		}
	}
	p := &Plane{
		EtcdPath:         filepath.Join(cfg.Binaries, Etcd),
		APIServerPath:    filepath.Join(cfg.Binaries, APIServer),
		EtcdDataDir:      filepath.Join(cfg.DataDir, "etcd"),
		APIServerCertDir: filepath.Join(cfg.DataDir, APIServer),
		dataDir:          cfg.DataDir,
	}
	if err := os.MkdirAll(p.EtcdDataDir, 0o700); err != nil {
		return nil, fmt.Errorf("unable to create data dir: %w", err)
	}
	if p.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = p.unlock()
		}
	}()
	if err := endLeftovers(ctx, cfg.DataDir, cfg.Log); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(p.APIServerCertDir); err != nil {
		return nil, fmt.Errorf("unable to empty %s: %w", p.APIServerCertDir, err)
	}
	if err := os.Mkdir(p.APIServerCertDir, 0o700); err != nil {
		return nil, err
	}
	if err := writeLaunchers(p, cfg.Self); err != nil {
		return nil, err
	}
	p.thread = newThread()
	return p, nil
}

// Launch runs start, which starts the control plane's processes, on the
// one OS thread they stay tied to until Release. Linux sends the
// parent-death signal when the thread that forked a child ends, not its
// process, and Go ends a thread whenever a goroutine locked to it returns:
// forking from a thread that stays locked until the children have stopped
// is what makes the signal mean "routeopt dev has died".
func (p *Plane) Launch(start func() error) error {
	var err error
	p.thread.do(func() { err = start() })
	return err
}

// Release lets the launching thread go, removes the launchers, the records
// and kube-apiserver's certificates, and gives the data directory back.
// Call it after the control plane has stopped.
func (p *Plane) Release() error {
	p.thread.end()
	err := errors.Join(os.RemoveAll(runDir(p.dataDir)), os.RemoveAll(p.APIServerCertDir))
	return errors.Join(err, p.unlock())
}

func (p *Plane) unlock() error {
	if p.lock == nil {
		return nil
	}
	return p.lock.Close()
}

// runDir holds the launchers and the records of the processes they started.
func runDir(dataDir string) string { return filepath.Join(dataDir, "run") }

// thread runs functions on one locked OS thread.
type thread struct {
	work chan func()
	done chan struct{}
}

func newThread() *thread {
	t := &thread{work: make(chan func()), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		// Never unlocked, so no other goroutine runs on it, and Go ends the
		// thread (unless it is the main one) when this goroutine returns.
		runtime.LockOSThread()
		for fn := range t.work {
			fn()
		}
	}()
	return t
}

func (t *thread) do(fn func()) {
	finished := make(chan struct{})
	t.work <- func() {
		defer close(finished)
		fn()
	}
	<-finished
}

func (t *thread) end() {
	close(t.work)
	<-t.done
}
