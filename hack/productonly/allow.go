package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// An allowance lets one rule pass for a real use of its words: a finding is
// allowed when its file matches glob and a match of text in the same line
// covers it.
type allowance struct {
	line   int    // in the allow-list file
	rule   string // a rule name, or "*" for every rule
	glob   string
	path   *regexp.Regexp // glob compiled
	text   *regexp.Regexp
	reason string
	used   int
}

// parseAllowList reads allow-list entries, one a line:
//
//	RULE | PATH-GLOB | TEXT-REGEXP | REASON
//
// RULE is a rule name or "*"; PATH-GLOB matches the slash-separated path
// from the repository's root ("*" within a directory, "**" across them);
// TEXT-REGEXP (Go syntax) must match a span of the line that covers the
// finding; REASON says why this use is the product's. Blank lines and lines
// starting with "#" are comments.
func parseAllowList(r io.Reader) ([]*allowance, error) {
	var out []*allowance
	var errs []error
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		a, err := parseAllowance(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", n, err))
			continue
		}
		a.line = n
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

func parseAllowance(line string) (*allowance, error) {
	fields := strings.SplitN(line+" ", " | ", 4) // the space: a line ending in " |" has an empty reason
	if len(fields) != 4 {
		return nil, errors.New(`want "RULE | PATH-GLOB | TEXT-REGEXP | REASON"`)
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	a := &allowance{rule: fields[0], glob: fields[1], reason: fields[3]}
	if a.rule != "*" && !slices.Contains(ruleNames(), a.rule) {
		return nil, fmt.Errorf("unknown rule %q; known: *, %s", a.rule, strings.Join(ruleNames(), ", "))
	}
	if a.glob == "" {
		return nil, errors.New("empty path glob")
	}
	a.path = globRegexp(a.glob)
	text, err := regexp.Compile(fields[2])
	if err != nil {
		return nil, fmt.Errorf("text: %w", err)
	}
	a.text = text
	if a.reason == "" {
		return nil, errors.New("no reason: say why this use is the product's")
	}
	return a, nil
}

// globRegexp compiles a path glob: "**/" is any number of directories, "**"
// anything, "*" anything but "/", "?" one character but "/".
func globRegexp(glob string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case glob[i] == '*':
			b.WriteString("[^/]*")
		case glob[i] == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// allows reports whether a lets f pass, given the line f was found in.
func (a *allowance) allows(f finding, line string) bool {
	if a.rule != "*" && a.rule != f.rule || !a.path.MatchString(f.path) {
		return false
	}
	for _, m := range a.text.FindAllStringIndex(line, -1) {
		if m[0] <= f.from && f.to <= m[1] {
			return true
		}
	}
	return false
}
