package export

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"

	"golang.org/x/text/width"
)

// maxSheetName is Excel's limit on a sheet name, in UTF-16 code units.
const maxSheetName = 31

// sheetNames hands out valid, unique sheet names: at most 31 characters,
// none of : \ / ? * [ ], no leading or trailing apostrophe, not blank, not
// "History" (reserved by Excel), unique ignoring case (as Excel compares
// them). A name already taken gets a suffix " (2)", " (3)", ...
type sheetNames struct {
	taken map[string]bool
}

func newSheetNames(reserved ...string) *sheetNames {
	n := &sheetNames{taken: map[string]bool{sheetKey("History"): true}}
	for _, r := range reserved {
		n.reserve(r)
	}
	return n
}

func (n *sheetNames) reserve(name string) { n.taken[sheetKey(name)] = true }

// add returns a free sheet name made from a vehicle's reference, and takes it.
func (n *sheetNames) add(vehicleRef string) string {
	base := cleanSheetName(vehicleRef)
	if base == "" {
		base = "Route"
	}
	name := trimSheetEnds(truncateUTF16(base, maxSheetName))
	for i := 2; n.taken[sheetKey(name)]; i++ {
		suffix := " (" + strconv.Itoa(i) + ")"
		name = trimSheetEnds(truncateUTF16(base, maxSheetName-len(suffix))) + suffix
	}
	n.reserve(name)
	return name
}

// sheetKey is the form under which Excel considers two names equal.
func sheetKey(name string) string { return strings.ToLower(strings.ToUpper(name)) }

// cleanSheetName replaces the characters a sheet name cannot hold: path and
// wildcard characters become a look-alike that can, control characters a
// space; runs of white space collapse, and apostrophes at either end go.
func cleanSheetName(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch r {
		case '/', '\\', ':':
			r = '-'
		case '?', '*':
			r = '_'
		case '[':
			r = '('
		case ']':
			r = ')'
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return trimSheetEnds(b.String())
}

func trimSheetEnds(s string) string {
	return strings.Trim(s, "' ")
}

// truncateUTF16 cuts s to at most n UTF-16 code units without splitting a
// character (Excel counts a sheet name's length in UTF-16 units, so an emoji
// counts twice).
func truncateUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return s[:i]
		}
	}
	return s
}

// displayWidth estimates how many characters wide s shows in a spreadsheet
// cell (its widest line): East Asian wide characters and emoji count two,
// combining marks and format characters nothing.
func displayWidth(s string) float64 {
	widest, w := 0.0, 0.0
	for _, r := range s {
		switch {
		case r < 0x300: // Latin, before the combining marks: one each
			if r == '\n' {
				widest, w = max(widest, w), 0
			} else {
				w++
			}
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case r >= 0x1F000, isWide(r):
			w += 2
		default:
			w++
		}
	}
	return max(widest, w)
}

func isWide(r rune) bool {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return true
	}
	return false
}
