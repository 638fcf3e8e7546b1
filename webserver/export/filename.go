package export

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"routeopt.io/routeopt/api/v1alpha1"
)

// maxNameRunes bounds the name part of a download name (the optimization's
// name may have 120 characters).
const maxNameRunes = 80

// DownloadName is the download's file name: the optimization's name (or
// "routes") and the date of its creation (UTC), words joined by hyphens,
// keeping the name's own letters, e.g. "tournée-du-mardi-2026-11-23.xlsx" or
// "توصيلات-الثلاثاء-2026-11-23.csv"; it is what ContentDisposition takes.
func DownloadName(opt *v1alpha1.Optimization, f Format) string {
	name := ""
	if opt != nil && opt.Spec.Name != nil {
		name = slug(*opt.Spec.Name, false)
		if r := []rune(name); len(r) > maxNameRunes {
			name = strings.TrimRight(string(r[:maxNameRunes]), "-")
		}
	}
	if name == "" {
		name = "routes"
	}
	if opt != nil && !opt.CreationTimestamp.IsZero() {
		name += "-" + opt.CreationTimestamp.UTC().Format("2006-01-02")
	}
	switch f {
	case XLSX, CSV:
		name += "." + string(f)
	}
	return name
}

// ContentDisposition is the Content-Disposition header value for a download
// named name (any text, for example DownloadName's): "attachment" with an
// ASCII filename= form always and, when the name has non-ASCII characters, a
// filename*=UTF-8” form as well (RFC 6266, RFC 5987), which browsers prefer.
func ContentDisposition(name string) string {
	v := `attachment; filename="` + asciiFileName(name) + `"`
	if u := cleanFileName(name); u != "" && !isASCII(u) {
		v += "; filename*=UTF-8''" + encodeRFC5987(u)
	}
	return v
}

// asciiFileName makes any file name ASCII and safe, keeping its extension:
// lower case, words joined by hyphens, e.g. "tuesday-deliveries-2026-11-23.xlsx".
// Accented letters are transliterated ("Tournée" → "tournee"), other
// characters dropped; there is never a path separator, quote or control
// character.
func asciiFileName(name string) string {
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		base, ext = name[:i], slug(name[i+1:], true)
	}
	b := slug(base, true)
	if strings.IndexFunc(b, func(r rune) bool { return r >= 'a' && r <= 'z' }) < 0 {
		// Nothing was left of the name but digits (the date): say what it is.
		b = strings.Trim("routes-"+b, "-")
	}
	if ext == "" {
		return b
	}
	return b + "." + ext
}

// slug lower-cases s and joins its runs of letters and digits with single
// hyphens. With ascii, letters are transliterated to ASCII (accents
// dropped, ß → ss, ø → o, ...) and what has no ASCII form is dropped.
func slug(s string, ascii bool) string {
	if ascii {
		s = transliterate(s)
	} else {
		s = norm.NFC.String(s)
	}
	var b strings.Builder
	pending, kept := false, false
	for _, r := range s {
		keep := unicode.IsLetter(r) || unicode.IsDigit(r) || (kept && unicode.IsMark(r))
		if ascii && r >= utf8.RuneSelf {
			keep = false
		}
		if !keep {
			pending, kept = b.Len() > 0, false
			continue
		}
		if pending {
			b.WriteByte('-')
			pending = false
		}
		b.WriteString(strings.ToLower(string(r)))
		kept = true
	}
	return b.String()
}

// translit spells letters that have no decomposition into ASCII.
var translit = map[rune]string{
	'ß': "ss", 'ẞ': "SS", 'æ': "ae", 'Æ': "AE", 'œ': "oe", 'Œ': "OE", 'ø': "o", 'Ø': "O",
	'ł': "l", 'Ł': "L", 'đ': "d", 'Đ': "D", 'ð': "d", 'Ð': "D", 'þ': "th", 'Þ': "Th",
	'ı': "i", 'ĸ': "k", 'ŋ': "ng", 'Ŋ': "NG", 'ħ': "h", 'Ħ': "H",
}

// transliterate drops the accents of s (decomposition, then no combining
// marks) and spells the letters of translit.
func transliterate(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if t, ok := translit[r]; ok {
			b.WriteString(t)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cleanFileName keeps a name's text but drops what a file name must not
// carry: control and format characters (bidirectional overrides could
// disguise the extension), path separators, quotes and the characters
// Windows refuses.
func cleanFileName(name string) string {
	var b strings.Builder
	for _, r := range norm.NFC.String(name) {
		switch {
		case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp), r == utf8.RuneError:
		case strings.ContainsRune(`/\"'`+"`"+`:*?<>|`, r):
			b.WriteByte('-')
		default:
			b.WriteRune(r)
		}
	}
	return strings.Trim(b.String(), " .-")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// encodeRFC5987 percent-encodes s's UTF-8 bytes except RFC 5987's
// attr-char.
func encodeRFC5987(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$&+-.^_`|~", c) >= 0) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
