package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestStaticGoBinaryPasses(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "checkstatic")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := check(bin); err != nil {
		t.Error(err)
	}
}

func TestDynamicBinaryFails(t *testing.T) {
	// Any dynamically linked system binary will do; /bin/sh is one on Debian.
	path := "/bin/sh"
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("%s is not an ELF file here: %v", path, err)
	}
	interp := false
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if !interp {
		t.Skipf("%s is statically linked here", path)
	}
	err = check(path)
	if err == nil || !strings.Contains(err.Error(), "PT_INTERP") || !strings.Contains(err.Error(), "needs ") {
		t.Errorf("check(%s) = %v, want PT_INTERP and needed libraries reported", path, err)
	}
}

func TestNotELFFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := check(path); err == nil {
		t.Error("check accepted a non-ELF file")
	}
}
