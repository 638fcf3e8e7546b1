package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

// TestRulesCatchEachKind runs every rule on a line that breaks it and on
// lines that must pass, with no allow-list.
func TestRulesCatchEachKind(t *testing.T) {
	tests := []struct {
		line string
		want []string // rule of each finding, in order; none for a clean line
		text []string // the text each finding reports
	}{
		// (a) paths outside the repository
		{line: "The public contract is `../shared/SPEC.md`.", want: []string{"outside-path", "outside-path"}, text: []string{"../shared", "SPEC.md"}},
		{line: "BENCH_DIR=${BENCH_DIR:-../shared/benchmarks/solomon}", want: []string{"outside-path"}, text: []string{"../shared"}},
		{line: "kept outside it (`/work/scratch/x.tar.gz`)", want: []string{"outside-path"}, text: []string{"/work/"}},
		{line: "// Error codes of the error envelope (API-DECISIONS.md).", want: []string{"outside-path"}, text: []string{"API-DECISIONS.md"}},
		{line: "# Kubernetes and HTTP-framework code (DESIGN.md).", want: []string{"outside-path"}, text: []string{"DESIGN.md"}},
		{line: "see docs/PERFORMANCE.md and the network/ folder"},
		{line: "the ../sharedir and SPECS.md are not the shared folder"},
		// (b) how the work is organised
		{line: "see the twenty-seventh and twenty-eighth sessions", want: []string{"work-session"}, text: []string{"sessions"}},
		{line: "The 27th Session kept it.", want: []string{"work-session"}, text: []string{"Session"}},
		{line: "sessionStorage.getItem(key); session_id; sessionAffinity: ClientIP"},
		{line: "// TestBaselineFirstVehicleThatFits is issue 13's case", want: []string{"tracker-number"}, text: []string{"issue 13"}},
		{line: "fixed in Issue #12 and PR 7", want: []string{"tracker-number", "tracker-number"}, text: []string{"Issue #12", "PR 7"}},
		{line: "as #12 asks (see #3)", want: []string{"tracker-number", "tracker-number"}, text: []string{"#12", "#3"}},
		{line: "color: #fff; a[href=\"#main\"]; ${#list[@]}; &#160; github.com/golang/go/issues/12345"},
		{line: "this issue is 3 km long; the tracker's issues are not ours"},
		{line: "these follow the wording the brief names", want: []string{"work-talk"}, text: []string{"the brief"}},
		{line: "being added to the API by another helper right now", want: []string{"work-talk"}, text: []string{"another helper"}},
		{line: "another engineer's integration test ran beside it", want: []string{"work-talk"}, text: []string{"another engineer"}},
		{line: "Whether it means every seed is for the issue's owner to say", want: []string{"work-talk"}, text: []string{"issue's owner"}},
		{line: "one measurement for the owner's decision", want: []string{"work-talk"}, text: []string{"the owner's decision"}},
		{line: "// TODO from review: rename", want: []string{"work-talk"}, text: []string{"TODO from review"}},
		{line: "the ConfigMap is deleted with its owner; an owner reference; a brief pause; platform engineers"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			got, err := scan("f.md", strings.NewReader(tc.line), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d findings %v, want %d (%v)", len(got), got, len(tc.want), tc.want)
			}
			for i, f := range got {
				if f.rule != tc.want[i] || f.text != tc.text[i] {
					t.Errorf("finding %d: %s %q, want %s %q", i, f.rule, f.text, tc.want[i], tc.text[i])
				}
				if f.path != "f.md" || f.line != 1 {
					t.Errorf("finding %d at %s:%d, want f.md:1", i, f.path, f.line)
				}
			}
		})
	}
}

// TestAllowListPassesRealUses checks that an entry lets a finding pass only
// for its rule, its paths and text that covers the finding.
func TestAllowListPassesRealUses(t *testing.T) {
	allow := mustParse(t, `
# the portal's sign-in session
work-session | webserver/portal/** | (?i)\bsessions?\b | the browser tab's sign-in session
work-session | **/*.go | (?i)\bTLS sessions?\b | TLS session resumption
tracker-number | **/*.css | #[0-9A-Fa-f]{3,8}\b | CSS colours
* | vendor/** | .* | code of other projects, kept as they wrote it
`)
	tests := []struct {
		path, line string
		allowed    bool
	}{
		{"webserver/portal/web/src/pages/keys.ts", `"This is the key this session is signed in with"`, true},
		{"webserver/portal/README.md", "## Sign-in and session", true},
		{"webserver/api.go", "// the key of this session", false}, // outside the portal
		{"server/tls.go", "// TLS sessions are resumed with tickets", true},
		{"server/tls.go", "// a session of work on TLS", false}, // the text does not cover this "session"
		{"server/tls.md", "// TLS sessions are resumed", false}, // not a .go file
		{"webserver/portal/dist/styles.css", "a{color:#777}b{color:#0006}", true},
		{"webserver/portal/web/src/styles.css", ".x { color: #123; } /* see #12 */", false}, // "#12" is no colour
		{"vendor/x/y.go", "// fixed in issue 12, see ../shared", true},
		{"hack/x.go", "// fixed in issue 12", false},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.line, func(t *testing.T) {
			got, err := scan(tc.path, strings.NewReader(tc.line), allow)
			if err != nil {
				t.Fatal(err)
			}
			if tc.allowed && len(got) > 0 {
				t.Errorf("allowed line reported: %v", got)
			}
			if !tc.allowed && len(got) == 0 {
				t.Error("line passed, want a finding")
			}
		})
	}
}

// TestCSSColourDoesNotCoverTrackerNumber pins that an allowance covers only
// the span its text matches: "#12" next to a colour is still reported.
func TestCSSColourDoesNotCoverTrackerNumber(t *testing.T) {
	allow := mustParse(t, `tracker-number | **/*.css | #[0-9A-Fa-f]{3,8}\b | CSS colours`)
	got, err := scan("a.css", strings.NewReader("a { color: #123; } /* as #7 asks */"), allow)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].text != "#7" {
		t.Fatalf("findings %v, want only #7", got)
	}
}

func TestParseAllowListRefusesBadEntries(t *testing.T) {
	tests := []struct{ entry, want string }{
		{"work-session | a/** | session", "RULE | PATH-GLOB"},
		{"work-session | a/** | session |  ", "no reason"},
		{"sessions | a/** | session | why", `unknown rule "sessions"`},
		{"work-session |  | session | why", "empty path glob"},
		{"work-session | a/** | (session | why", "text:"},
	}
	for _, tc := range tests {
		t.Run(tc.entry, func(t *testing.T) {
			_, err := parseAllowList(strings.NewReader("# comment\n\n" + tc.entry + "\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "line 3") {
				t.Errorf("error %v, want one naming line 3 and %q", err, tc.want)
			}
		})
	}
}

func TestGlobRegexp(t *testing.T) {
	tests := []struct {
		glob, path string
		match      bool
	}{
		{"**/*.css", "a.css", true},
		{"**/*.css", "webserver/portal/dist/styles.css", true},
		{"**/*.css", "a.css.map", false},
		{"webserver/portal/**", "webserver/portal/web/src/session.ts", true},
		{"webserver/portal/**", "webserver/portals.go", false},
		{"docs/*.md", "docs/solver.md", true},
		{"docs/*.md", "docs/img/x.md", false},
		{"docs/?.md", "docs/a.md", true},
		{"a.b", "axb", false},
	}
	for _, tc := range tests {
		if got := globRegexp(tc.glob).MatchString(tc.path); got != tc.match {
			t.Errorf("%q against %q: %v, want %v", tc.glob, tc.path, got, tc.match)
		}
	}
}

// TestRun checks the whole command on a small tree: findings and unused
// allow-list entries fail it, binary and missing files are skipped, and a
// clean tree passes.
func TestRun(t *testing.T) {
	allowList := "work-session | portal/** | (?i)\\bsessions?\\b | the sign-in session\n" +
		"work-talk | nowhere/** | the brief | never used\n"
	fsys := fstest.MapFS{
		"allow.txt":       {Data: []byte(allowList)},
		"README.md":       {Data: []byte("# app\n\nThe contract is ../shared/SPEC.md.\n")},
		"portal/main.ts":  {Data: []byte("// the key of this session\n")},
		"docs/history.md": {Data: []byte("Kept in the ninth session (issue 14).\n")},
		"img/logo.png":    {Data: []byte("\x89PNG\x00 session issue 3 ../shared")},
	}
	files := []string{"README.md", "portal/main.ts", "docs/history.md", "img/logo.png", "deleted.go"}
	var stdout, stderr bytes.Buffer
	if code := run(fsys, files, "allow.txt", &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr.String())
	}
	want := []string{
		"README.md:3: outside-path",
		"docs/history.md:1: work-session",
		"docs/history.md:1: tracker-number",
		"allow.txt:2: allow-list entry for work-talk in nowhere/** allows nothing",
	}
	out := stdout.String()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "portal/main.ts") || strings.Contains(out, "logo.png") {
		t.Errorf("allowed or binary file reported:\n%s", out)
	}
	if !strings.Contains(stderr.String(), "4 findings in 2 files, 1 unused allow-list entries") {
		t.Errorf("summary %q", stderr.String())
	}

	clean := fstest.MapFS{
		"allow.txt":      {Data: []byte("work-session | portal/** | (?i)\\bsessions?\\b | the sign-in session\n")},
		"portal/main.ts": {Data: []byte("// the key of this session\n")},
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(clean, []string{"portal/main.ts"}, "allow.txt", &stdout, &stderr); code != 0 || stdout.Len() > 0 {
		t.Errorf("clean tree: exit %d, output %q %q", code, stdout.String(), stderr.String())
	}

	if code := run(clean, nil, "missing.txt", &stdout, &stderr); code != 2 {
		t.Errorf("missing allow-list: exit %d, want 2", code)
	}
}

func mustParse(t *testing.T, list string) []*allowance {
	t.Helper()
	allow, err := parseAllowList(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	return allow
}

// TestRepositorySpeaksOfTheProductOnly runs the check over this
// repository's tracked files, as make verify does, so that make test fails
// too when a file cites something outside it or speaks of the work.
func TestRepositorySpeaksOfTheProductOnly(t *testing.T) {
	root, files, err := trackedFiles()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(os.DirFS(root), files, "hack/productonly/allow.txt", &stdout, &stderr); code != 0 {
		t.Errorf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
}
