package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// repoRoot is the main module, two levels up.
const repoRoot = "../.."

func lintFile(t *testing.T, path string) []Finding {
	t.Helper()
	dt, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := Lint(context.Background(), path, dt)
	if err != nil {
		t.Fatal(err)
	}
	return findings
}

func ruleLines(findings []Finding) []string {
	var out []string
	for _, f := range findings {
		out = append(out, fmt.Sprintf("%d %s", f.Line, f.Rule))
	}
	return out
}

func TestBadDockerfile(t *testing.T) {
	got := ruleLines(lintFile(t, "testdata/bad.Dockerfile"))
	want := []string{
		"1 FromAsCasing",
		"2 MaintainerDeprecated",
		"3 LegacyKeyValueFormat",
		"4 UndefinedVar",
		"5 WorkdirRelativePath",
		"6 ConsistentInstructionCasing",
		"6 UndefinedArgInFrom",
		"7 JSONArgsRecommended",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnparsableDockerfileFails(t *testing.T) {
	for name, src := range map[string]string{
		"unknown instruction": "FROM alpine\nFOOBAR x\n",
		"empty":               "",
		"no stage":            "ARG X=1\n",
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "Dockerfile")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{path}, &stdout, &stderr); code != 1 {
			t.Errorf("%s: exit %d, want 1", name, code)
		}
		if !strings.Contains(stdout.String(), ": error: ") {
			t.Errorf("%s: output %q has no error finding", name, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "missing")}, &stdout, &stderr); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
}

func TestRunOutputAndExitCode(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"testdata/bad.Dockerfile"}, &stdout, &stderr); code != 1 {
		t.Errorf("bad Dockerfile: exit %d, want 1", code)
	}
	first := "testdata/bad.Dockerfile:1: FromAsCasing: 'as' and 'FROM' keywords' casing do not match (https://"
	if !strings.HasPrefix(stdout.String(), first) {
		t.Errorf("output starts %q, want prefix %q", stdout.String(), first)
	}

	good := filepath.Join(t.TempDir(), "Dockerfile")
	if err := os.WriteFile(good, []byte("FROM alpine:3\nCMD [\"true\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run([]string{good}, &stdout, &stderr); code != 0 || stdout.Len() != 0 {
		t.Errorf("good Dockerfile: exit %d, output %q", code, stdout.String())
	}
}

func TestRepoDockerfileIsClean(t *testing.T) {
	if got := lintFile(t, filepath.Join(repoRoot, "Dockerfile")); len(got) != 0 {
		t.Errorf("Dockerfile findings: %v", got)
	}
}

// staticBuildArgs reduces a `CGO_ENABLED=0 ... go build ...` command line to
// what must agree between the image and `make build-static`: the environment
// and flags, without the target platform and the output path.
func staticBuildArgs(t *testing.T, cmdline string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	var quote rune
	for _, r := range cmdline + " " {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote = r
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	var out []string
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case strings.HasPrefix(w, "GOOS=") || strings.HasPrefix(w, "GOARCH="):
		case w == "-o":
			i++
		default:
			out = append(out, w)
		}
	}
	if !slices.Contains(out, "CGO_ENABLED=0") {
		t.Errorf("%q does not set CGO_ENABLED=0", cmdline)
	}
	return out
}

func TestStaticBuildFlagsMatchMakefile(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var dockerRuns []string
	for _, n := range res.AST.Children {
		if strings.EqualFold(n.Value, "run") && n.Next != nil && strings.Contains(n.Next.Value, "go build") {
			dockerRuns = append(dockerRuns, n.Next.Value)
		}
	}

	mk, err := os.Open(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer mk.Close()
	var makeRuns []string
	sc := bufio.NewScanner(mk)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.Contains(line, "go build") && strings.Contains(line, "routeopt-static") {
			makeRuns = append(makeRuns, line)
		}
	}
	if len(dockerRuns) != 1 || len(makeRuns) != 1 {
		t.Fatalf("want one go build in the Dockerfile and one for routeopt-static in the Makefile; got %q and %q", dockerRuns, makeRuns)
	}
	d, m := staticBuildArgs(t, dockerRuns[0]), staticBuildArgs(t, makeRuns[0])
	if !slices.Equal(d, m) {
		t.Errorf("Dockerfile builds with %q, make build-static with %q", d, m)
	}
}

func TestBuilderGoMatchesGoMod(t *testing.T) {
	df, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	img := regexp.MustCompile(`(?m)^FROM .*\bgolang:(\d+\.\d+)\.\d+\b`).FindSubmatch(df)
	mod := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if img == nil || mod == nil {
		t.Fatalf("no patch-pinned golang:X.Y.Z builder in the Dockerfile or no go line in go.mod")
	}
	if string(img[1]) != string(mod[1]) {
		t.Errorf("builder is Go %s, go.mod says %s", img[1], mod[1])
	}
}

// TestDockerignoreKeepsBuildInputs checks that every file the image's go build
// reads is in the build context, and that the big or unrelated trees are not.
func TestDockerignoreKeepsBuildInputs(t *testing.T) {
	f, err := os.Open(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	excluded := func(rel string) bool {
		ok, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json=Dir,GoFiles,EmbedFiles,Module", "./cmd/routeopt")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	inputs := []string{"go.mod", "go.sum"}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			Dir                 string
			GoFiles, EmbedFiles []string
			Module              *struct{ Main bool }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Module == nil || !p.Module.Main {
			continue
		}
		for _, name := range append(p.GoFiles, p.EmbedFiles...) {
			rel, err := filepath.Rel(root, filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, rel)
		}
	}
	if len(inputs) < 10 {
		t.Fatalf("go list found only %v", inputs)
	}
	for _, rel := range inputs {
		if excluded(rel) {
			t.Errorf(".dockerignore excludes %s, which the image build needs", rel)
		}
	}
	for _, rel := range []string{".git/HEAD", "bin/routeopt", "dist/install.yaml", ".routeopt-dev/x", "test/e2e/x_test.go", "docs/x.md", "hack/k8s/go.mod", "controllers/x_test.go"} {
		if !excluded(rel) {
			t.Errorf(".dockerignore lets %s into the build context", rel)
		}
	}
}
