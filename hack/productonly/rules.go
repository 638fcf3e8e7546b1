package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// A rule is one kind of text the repository must not hold.
type rule struct {
	name string
	re   *regexp.Regexp
	// group is the submatch reported as the finding (0: the whole match),
	// for patterns that need a character of context around it.
	group int
	why   string
}

// rules are what a product file must not say: (a) a path outside the
// repository, which a reader of the repository cannot open, and (b) how the
// work on it was organised rather than what the product does.
var rules = []rule{
	{
		name: "outside-path",
		re:   regexp.MustCompile(`\.\./shared\b|/work/|\b(?:SPEC|API-DECISIONS|DESIGN)\.md\b`),
		why:  "a file outside the repository",
	},
	{
		name: "work-session",
		re:   regexp.MustCompile(`(?i)\bsessions?\b`),
		why:  "a period of work",
	},
	{
		name: "tracker-number",
		re:   regexp.MustCompile(`(?i)\b(?:issues?|tickets?|pull requests?)\s*#?\d+\b|\bPR\s*#?\d+\b`),
		why:  "a tracker number",
	},
	{
		name:  "tracker-number",
		re:    regexp.MustCompile(`(?:^|[\s(\[,;:])(#\d+)\b`),
		group: 1,
		why:   "a tracker number",
	},
	{
		name: "work-talk",
		re: regexp.MustCompile(`(?i)\bthe briefs?\b|\b(?:another|other|fellow)\s+engineers?\b|` +
			`\b(?:issue|project|product)(?:'s)?\s+owner\b|\bthe owner(?:'s)?\s+(?:decision|decides|to decide|to say|says)\b|` +
			`\bfor the owner to\b|\b(?:another|other)\s+helpers?\b|\bTODO from (?:the )?review\b`),
		why: "how the work is organised",
	},
}

// ruleNames lists the distinct rule names, for the allow-list's checks.
func ruleNames() []string {
	var names []string
	for _, r := range rules {
		if !slices.Contains(names, r.name) {
			names = append(names, r.name)
		}
	}
	return names
}

// A finding is one offending text in a file.
type finding struct {
	path     string
	line     int // 1-based
	rule     string
	text     string // what the rule matched
	excerpt  string // the text with some of the line around it
	why      string
	from, to int // byte offsets of text within the line
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s: %q", f.path, f.line, f.rule, f.why, f.excerpt)
}

// excerptWidth is how much of the line each side of a finding is printed:
// minified files are one long line.
const excerptWidth = 40

// scan returns the findings of every rule in the text of path, line by
// line, leaving out those an allowance lets pass (and counting its use).
func scan(path string, r io.Reader, allow []*allowance) ([]finding, error) {
	var out []finding
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	var spans [][2]int // of this line's findings, so that two rules report a text once
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		spans = spans[:0]
		for _, rl := range rules {
			for _, m := range rl.re.FindAllStringSubmatchIndex(line, -1) {
				f := finding{path: path, line: n, rule: rl.name, why: rl.why, from: m[2*rl.group], to: m[2*rl.group+1]}
				if slices.ContainsFunc(spans, func(s [2]int) bool { return f.from < s[1] && s[0] < f.to }) {
					continue
				}
				spans = append(spans, [2]int{f.from, f.to})
				f.text, f.excerpt = line[f.from:f.to], excerpt(line, f.from, f.to)
				if i := slices.IndexFunc(allow, func(a *allowance) bool { return a.allows(f, line) }); i >= 0 {
					allow[i].used++
					continue
				}
				out = append(out, f)
			}
		}
	}
	return out, sc.Err()
}

// excerpt is line[from:to] with up to excerptWidth bytes each side, cut at
// rune boundaries.
func excerpt(line string, from, to int) string {
	lo, hi := max(0, from-excerptWidth), min(len(line), to+excerptWidth)
	for lo > 0 && !startsRune(line[lo]) {
		lo--
	}
	for hi < len(line) && !startsRune(line[hi]) {
		hi++
	}
	return strings.TrimSpace(line[lo:hi])
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// isBinary reports whether data looks like a binary file: a NUL byte in its
// first 8 KB, as git decides.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}
