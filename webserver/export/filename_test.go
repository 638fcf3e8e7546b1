package export

import (
	"mime"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
)

func optNamed(name *string, created time.Time) *v1alpha1.Optimization {
	return &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
		Spec:       v1alpha1.OptimizationSpec{Name: name},
	}
}

var safeFileName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*\.(xlsx|csv)$`)

func TestFileName(t *testing.T) {
	day := time.Date(2026, 11, 23, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600)) // 2026-11-24 04:30 UTC
	cases := []struct {
		name     *string
		created  time.Time
		format   Format
		ascii    string
		download string
	}{
		{ptr("Tuesday deliveries"), fixtureCreated, XLSX, "tuesday-deliveries-2026-11-23.xlsx", "tuesday-deliveries-2026-11-23.xlsx"},
		{nil, fixtureCreated, CSV, "routes-2026-11-23.csv", "routes-2026-11-23.csv"},
		{ptr("   "), fixtureCreated, CSV, "routes-2026-11-23.csv", "routes-2026-11-23.csv"},
		{ptr("Tuesday deliveries"), day, CSV, "tuesday-deliveries-2026-11-24.csv", "tuesday-deliveries-2026-11-24.csv"},
		{ptr("Tuesday deliveries"), time.Time{}, XLSX, "tuesday-deliveries.xlsx", "tuesday-deliveries.xlsx"},
		{ptr("Tournée du mardi / Zone Nord"), fixtureCreated, XLSX, "tournee-du-mardi-zone-nord-2026-11-23.xlsx", "tournée-du-mardi-zone-nord-2026-11-23.xlsx"},
		{ptr("Große Straße, Øst & Łódź"), fixtureCreated, XLSX, "grosse-strasse-ost-lodz-2026-11-23.xlsx", "große-straße-øst-łódź-2026-11-23.xlsx"},
		{ptr("火曜日の配達"), fixtureCreated, XLSX, "routes-2026-11-23.xlsx", "火曜日の配達-2026-11-23.xlsx"},
		{ptr("توصيلات الثلاثاء"), fixtureCreated, CSV, "routes-2026-11-23.csv", "توصيلات-الثلاثاء-2026-11-23.csv"},
		{ptr("../../etc/passwd"), fixtureCreated, CSV, "etc-passwd-2026-11-23.csv", "etc-passwd-2026-11-23.csv"},
		{ptr(`a"b'c\d:e*f?g<h>i|j`), fixtureCreated, CSV, "a-b-c-d-e-f-g-h-i-j-2026-11-23.csv", "a-b-c-d-e-f-g-h-i-j-2026-11-23.csv"},
		{ptr("invoice\u202Exslx.exe"), fixtureCreated, XLSX, "invoice-xslx-exe-2026-11-23.xlsx", "invoice-xslx-exe-2026-11-23.xlsx"},
		{ptr("Route 66 🚚 ＦＵＬＬ"), fixtureCreated, CSV, "route-66-full-2026-11-23.csv", "route-66-ｆｕｌｌ-2026-11-23.csv"},
		{ptr("12345"), fixtureCreated, CSV, "routes-12345-2026-11-23.csv", "12345-2026-11-23.csv"},
		{ptr(strings.Repeat("Long name ", 12)), fixtureCreated, XLSX, strings.TrimSuffix(strings.Repeat("long-name-", 8), "-") + "-2026-11-23.xlsx", strings.TrimSuffix(strings.Repeat("long-name-", 8), "-") + "-2026-11-23.xlsx"},
	}
	for _, c := range cases {
		opt := optNamed(c.name, c.created)
		got, download := asciiFileName(DownloadName(opt, c.format)), DownloadName(opt, c.format)
		if got != c.ascii || download != c.download {
			t.Errorf("%q: ASCII name %q, DownloadName %q; want %q, %q", deref(c.name), got, download, c.ascii, c.download)
		}
		if !safeFileName.MatchString(got) {
			t.Errorf("%q: ASCII name %q is not safe", deref(c.name), got)
		}
		if strings.ContainsAny(download, "/\\\"'\u202E") {
			t.Errorf("%q: DownloadName %q has a separator, quote or override", deref(c.name), download)
		}
	}
	if got := asciiFileName(DownloadName(nil, XLSX)); got != "routes.xlsx" {
		t.Errorf("ASCII name of no optimization = %q", got)
	}
}

func TestContentDisposition(t *testing.T) {
	ascii := optNamed(ptr("Tuesday deliveries"), fixtureCreated)
	if got, want := ContentDisposition(DownloadName(ascii, XLSX)), `attachment; filename="tuesday-deliveries-2026-11-23.xlsx"`; got != want {
		t.Errorf("ASCII name: %s, want %s", got, want)
	}
	for _, name := range []string{"Tournée du mardi", "火曜日の配達", "توصيلات الثلاثاء", "Große Straße 🚚", "a\"b;c=d%e"} {
		opt := optNamed(ptr(name), fixtureCreated)
		v := ContentDisposition(DownloadName(opt, CSV))
		// A header parser (Go's mime, RFC 2231/5987 aware) prefers filename*
		// and gets the UTF-8 name back; the filename= form is the ASCII one.
		disp, params, err := mime.ParseMediaType(v)
		if err != nil || disp != "attachment" {
			t.Fatalf("%q: %s does not parse: %v", name, v, err)
		}
		if params["filename"] != DownloadName(opt, CSV) {
			t.Errorf("%q: %s decodes to %q, want %q", name, v, params["filename"], DownloadName(opt, CSV))
		}
		wantASCII := `filename="` + asciiFileName(DownloadName(opt, CSV)) + `"`
		if !strings.Contains(v, wantASCII) {
			t.Errorf("%q: %s lacks %s", name, v, wantASCII)
		}
		if isASCII(DownloadName(opt, CSV)) == strings.Contains(v, "filename*=") {
			t.Errorf("%q: %s: filename* must be there exactly when the name is not ASCII", name, v)
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				t.Fatalf("%q: header value has byte %#x", name, v[i])
			}
		}
	}
	// Any text is made safe, not only DownloadName's.
	v := ContentDisposition("../ev\"il\r\n\u202Efdp.exe")
	if strings.ContainsAny(v, "\r\n/") || strings.Count(v, `"`) != 2 {
		t.Errorf("unsafe value %q", v)
	}
	if _, params, err := mime.ParseMediaType(v); err != nil || strings.ContainsAny(params["filename"], "/\\\"\u202E\r\n") {
		t.Errorf("%q parses to %q (%v)", v, params["filename"], err)
	}
	if ct := ContentType(XLSX); ct != "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" {
		t.Errorf("xlsx content type %q", ct)
	}
	if ct := ContentType(CSV); ct != "text/csv; charset=utf-8" {
		t.Errorf("csv content type %q", ct)
	}
}
