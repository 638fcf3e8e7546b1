package framework

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain removes WorkDir, which Env.Stop does in e2e packages.
func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := WorkDir(); err == nil && code == 0 {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

func TestProcessStopAndKill(t *testing.T) {
	// The trap proves SIGTERM comes first; the child sleep proves the group is signalled.
	script := `trap 'echo terminated; exit 7' TERM; echo started; sleep 100 & wait`
	p := StartProcess(t, ProcessOptions{Name: "sh", Path: "/bin/sh", Args: []string{"-c", script}})
	waitLog(t, p, "started")
	if err := p.Stop(); err == nil || p.ExitCode() != 7 || !strings.Contains(p.Logs(), "terminated") {
		t.Fatalf("Stop: %v, exit %d, logs %q", err, p.ExitCode(), p.Logs())
	}

	p = StartProcess(t, ProcessOptions{Name: "sh", Path: "/bin/sh", Args: []string{"-c", script}})
	waitLog(t, p, "started")
	p.Kill()
	if p.ExitCode() != 137 || strings.Contains(p.Logs(), "terminated") {
		t.Fatalf("Kill: exit %d, logs %q", p.ExitCode(), p.Logs())
	}

	p = StartProcess(t, ProcessOptions{Name: "sh", Path: "/bin/sh", Args: []string{"-c", "trap '' TERM; echo started; sleep 100"}, StopTimeout: 200 * time.Millisecond})
	waitLog(t, p, "started")
	_ = p.Stop()
	if p.ExitCode() != 137 {
		t.Fatalf("Stop of a process ignoring SIGTERM: exit %d, want SIGKILL after the timeout", p.ExitCode())
	}
}

func waitLog(t *testing.T, p *Process, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Logs(), s); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("%s never logged %q: %q", p.Name, s, p.Logs())
		}
	}
}
