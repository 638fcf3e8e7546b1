// Command checkstatic fails unless every ELF file it is given is statically
// linked: no PT_INTERP (program interpreter), no PT_DYNAMIC or .dynamic section,
// no DT_NEEDED libraries. The distroless/static image has no libc, so a binary
// that passes here is one that can start there.
//
// Usage: go run ./hack/checkstatic FILE...
package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"strings"
)

// check returns nil when the ELF file at path is statically linked.
func check(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			problems = append(problems, "has a PT_INTERP program header")
		case elf.PT_DYNAMIC:
			problems = append(problems, "has a PT_DYNAMIC program header")
		}
	}
	if f.Section(".dynamic") != nil {
		problems = append(problems, "has a .dynamic section")
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return err
	}
	if len(libs) > 0 {
		problems = append(problems, "needs "+strings.Join(libs, ", "))
	}
	if len(problems) > 0 {
		return errors.New("not statically linked: " + strings.Join(problems, "; "))
	}
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: checkstatic FILE...")
		os.Exit(2)
	}
	status := 0
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			status = 1
			continue
		}
		fmt.Printf("%s: statically linked\n", path)
	}
	os.Exit(status)
}
