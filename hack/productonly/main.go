// Command productonly fails when a file tracked by git speaks of something
// other than the product: (a) it cites a path outside the repository (the
// shared folder beside it, an absolute work path, or the specification
// documents kept there), which no reader of the repository can open; or (b)
// it speaks of how the work on it was organised: numbered work periods
// ("session"), tracker numbers ("issue 12", "#12"), "the brief", "another
// engineer", "the owner's decision".
//
// Real uses of those words (the browser's sign-in session, CSS colours) pass
// through an allow-list, one entry a line with the reason for it (see
// parseAllowList); an entry that allows nothing is an error too, so the list
// stays true. Binary files are skipped.
//
// Usage, from anywhere in the repository:
//
//	go run ./hack/productonly [-allow hack/productonly/allow.txt]
//
// It prints one line per finding and exits 1 when there is any, 2 when it
// cannot run.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	allowPath := flag.String("allow", "hack/productonly/allow.txt", "allow-list, relative to the repository's root")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: productonly [-allow FILE]")
		os.Exit(2)
	}
	root, files, err := trackedFiles()
	if err != nil {
		fmt.Fprintln(os.Stderr, "productonly:", err)
		os.Exit(2)
	}
	os.Exit(run(os.DirFS(root), files, *allowPath, os.Stdout, os.Stderr))
}

// trackedFiles returns the repository's root and the files git tracks in it.
func trackedFiles() (root string, files []string, err error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", nil, fmt.Errorf("git rev-parse: %w", err)
	}
	root = strings.TrimSpace(string(out))
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err = cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("git ls-files: %w", err)
	}
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	return root, files, nil
}

// run checks files of fsys against the rules and the allow-list at
// allowPath, prints the findings and the unused allowances to stdout and a
// summary to stderr, and returns the exit code: 0 clean, 1 findings or
// unused allowances, 2 when it could not check.
func run(fsys fs.FS, files []string, allowPath string, stdout, stderr io.Writer) int {
	data, err := fs.ReadFile(fsys, filepath.ToSlash(allowPath))
	if err != nil {
		fmt.Fprintln(stderr, "productonly:", err)
		return 2
	}
	allow, err := parseAllowList(bytes.NewReader(data))
	if err != nil {
		fmt.Fprintf(stderr, "productonly: %s: %v\n", allowPath, err)
		return 2
	}
	findings, err := check(fsys, files, allow)
	if err != nil {
		fmt.Fprintln(stderr, "productonly:", err)
		return 2
	}
	offenders := map[string]bool{}
	for _, f := range findings {
		fmt.Fprintln(stdout, f)
		offenders[f.path] = true
	}
	unused := 0
	for _, a := range allow {
		if a.used == 0 {
			fmt.Fprintf(stdout, "%s:%d: allow-list entry for %s in %s allows nothing: remove it\n", allowPath, a.line, a.rule, a.glob)
			unused++
		}
	}
	if len(findings) == 0 && unused == 0 {
		return 0
	}
	fmt.Fprintf(stderr, "productonly: %d findings in %d files, %d unused allow-list entries\n", len(findings), len(offenders), unused)
	return 1
}

// check scans every regular text file of files (slash paths in fsys).
// Files listed but missing (deleted in the worktree, not yet in the index)
// are skipped.
func check(fsys fs.FS, files []string, allow []*allowance) ([]finding, error) {
	var out []finding
	for _, name := range files {
		info, err := fs.Lstat(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			continue // symbolic links and submodules: their targets are checked, or are not ours
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		if isBinary(data) {
			continue
		}
		found, err := scan(name, bytes.NewReader(data), allow)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, found...)
	}
	return out, nil
}
