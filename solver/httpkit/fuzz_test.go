package httpkit

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// FuzzParseRetryAfter: a geocoder's or OSRM's Retry-After, whatever it
// says, is a wait between 0 and a day; whole seconds and HTTP dates are
// read exactly.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, s := range []string{
		"", "0", "1", " 120 ", "-5", "86400", "86401", "9223372036854775807", "99999999999999999999", "1.5", "+3", "0x10",
		"Mon, 23 Nov 2026 09:00:30 GMT", "Monday, 23-Nov-26 09:00:30 GMT", "Mon Nov 23 09:00:30 2026", "Sun, 22 Nov 2026 09:00:00 GMT",
		"Fri, 31 Dec 9999 23:59:59 GMT", "Mon, 23 Nov 2026 09:00:30 PST", "soon",
	} {
		f.Add(s, now.Unix())
	}
	f.Fuzz(func(t *testing.T, h string, nowUnix int64) {
		now := time.Unix(nowUnix, 0).UTC()
		d := ParseRetryAfter(h, now)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q) = %v", h, d)
		}
		for _, secs := range []int64{1, 59, 3600, 86400} {
			if got := ParseRetryAfter(strconv.FormatInt(secs, 10), now); got != time.Duration(secs)*time.Second {
				t.Fatalf("%d seconds read as %v", secs, got)
			}
		}
		if y := now.Year(); y < 1 || y > 9998 {
			return // no HTTP date can be written around it
		}
		at := now.Add(90 * time.Second)
		if got := ParseRetryAfter(at.Format(http.TimeFormat), now); got != 90*time.Second {
			t.Fatalf("an HTTP date 90 s ahead of %v read as %v", now, got)
		}
	})
}
