package export

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/tealeg/xlsx/v3"

	"routeopt.io/routeopt/api/v1alpha1"
)

// wantText is what a cell must hold for customer text s: s itself, with a
// leading single quote when s begins with = + - @ tab or CR (OWASP), and CR
// or CRLF line breaks as LF. Written independently of cellText on purpose.
func wantText(s string) string {
	out := strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + out
	}
	return out
}

// wantPhoneXLSX is what a workbook cell holds for phone s: as given when
// it has only digits, spaces and + ( ) - . / (nothing a formula could call),
// else wantText(s).
func wantPhoneXLSX(s string) string {
	for _, r := range s {
		if !strings.ContainsRune("0123456789 +()-./", r) {
			return wantText(s)
		}
	}
	return s
}

// wantWindow is the time window text for an order.
func wantWindow(o *v1alpha1.Order) string {
	switch {
	case o.TimeWindowStart != nil && o.TimeWindowEnd != nil:
		return *o.TimeWindowStart + "-" + *o.TimeWindowEnd
	case o.TimeWindowStart != nil:
		return "from " + *o.TimeWindowStart
	case o.TimeWindowEnd != nil:
		return "until " + *o.TimeWindowEnd
	}
	return ""
}

func ordersByID(opt *v1alpha1.Optimization) map[string]*v1alpha1.Order {
	m := map[string]*v1alpha1.Order{}
	for i := range opt.Spec.Orders {
		m[opt.Spec.Orders[i].ID] = &opt.Spec.Orders[i]
	}
	return m
}

func render(t testing.TB, opt *v1alpha1.Optimization, res *v1alpha1.Result, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, opt, res, o); err != nil {
		t.Fatalf("Write(%s): %v", o.Format, err)
	}
	return buf.Bytes()
}

// --- reading the workbook with tealeg/xlsx (a reader that shares no code
// with excelize) ---

func openBook(t *testing.T, data []byte) *xlsx.File {
	t.Helper()
	f, err := xlsx.OpenBinary(data)
	if err != nil {
		t.Fatalf("tealeg/xlsx cannot open the workbook: %v", err)
	}
	return f
}

func sheetNamesOf(f *xlsx.File) []string {
	var names []string
	for _, sh := range f.Sheets {
		names = append(names, sh.Name)
	}
	return names
}

// cell returns the cell at zero-based row and col, failing when the row is
// beyond the sheet (tealeg would silently add it).
func cell(t *testing.T, sh *xlsx.Sheet, row, col int) *xlsx.Cell {
	t.Helper()
	if row >= sh.MaxRow {
		t.Fatalf("sheet %q: row %d asked, the sheet has %d rows", sh.Name, row+1, sh.MaxRow)
	}
	c, err := sh.Cell(row, col)
	if err != nil {
		t.Fatalf("sheet %q: cell (%d,%d): %v", sh.Name, row, col, err)
	}
	return c
}

// tealegText is what tealeg/xlsx reports for an inline string: it trims
// white space at both ends (Excel keeps it, see the XML checks).
func tealegText(s string) string { return strings.Trim(s, " \t\n\r") }

func checkText(t *testing.T, sh *xlsx.Sheet, row, col int, want string) {
	t.Helper()
	c := cell(t, sh, row, col)
	// tealeg/xlsx leaves ST_Xstring escapes as they are stored (Excel
	// decodes "_x005F_x0041_" to "_x0041_"): decode them here.
	if got := unescapeOOXML(c.Value); got != tealegText(want) {
		t.Errorf("sheet %q %s: got %q, want %q", sh.Name, ref(row, col), got, tealegText(want))
	}
	if want != "" && c.Type() != xlsx.CellTypeInline && c.Type() != xlsx.CellTypeString {
		t.Errorf("sheet %q %s: cell type %v, want a string", sh.Name, ref(row, col), c.Type())
	}
	if c.Formula() != "" {
		t.Errorf("sheet %q %s: has formula %q", sh.Name, ref(row, col), c.Formula())
	}
}

func checkNumber(t *testing.T, sh *xlsx.Sheet, row, col int, want, tol float64) {
	t.Helper()
	c := cell(t, sh, row, col)
	if c.Type() != xlsx.CellTypeNumeric {
		t.Errorf("sheet %q %s: type %v, want a number (value %q)", sh.Name, ref(row, col), c.Type(), c.Value)
		return
	}
	got, err := c.Float()
	if err != nil || math.Abs(got-want) > tol {
		t.Errorf("sheet %q %s: got %q, want %v", sh.Name, ref(row, col), c.Value, want)
	}
}

// checkTime checks a time of day: a number equal to seconds/86400 (exactly
// the whole seconds once scaled back) shown as hh:mm, or [h]:mm past
// midnight.
func checkTime(t *testing.T, sh *xlsx.Sheet, row, col int, seconds int) {
	t.Helper()
	c := cell(t, sh, row, col)
	got, err := c.Float()
	if err != nil || c.Type() != xlsx.CellTypeNumeric {
		t.Errorf("sheet %q %s: %q is not a time value", sh.Name, ref(row, col), c.Value)
		return
	}
	if math.Abs(got-float64(seconds)/86400) > 1e-12 || int(math.Round(got*86400)) != seconds {
		t.Errorf("sheet %q %s: time value %v, want %d/86400 = %v", sh.Name, ref(row, col), got, seconds, float64(seconds)/86400)
	}
	wantFmt := "hh:mm"
	if seconds >= 86400 {
		wantFmt = "[h]:mm"
	}
	if c.NumFmt != wantFmt {
		t.Errorf("sheet %q %s: number format %q, want %q", sh.Name, ref(row, col), c.NumFmt, wantFmt)
	}
}

func ref(row, col int) string { return fmt.Sprintf("%c%d", 'A'+col, row+1) }

// --- reading the package XML itself ---

type pkg struct {
	parts map[string][]byte
}

func openPkg(t *testing.T, data []byte) *pkg {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip archive: %v", err)
	}
	p := &pkg{parts: map[string][]byte{}}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		p.parts[f.Name] = b
	}
	return p
}

func (p *pkg) decode(t *testing.T, part string, v any) {
	t.Helper()
	b, ok := p.parts[part]
	if !ok {
		t.Fatalf("part %s missing", part)
	}
	if err := xml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", part, err)
	}
}

type xWorkbook struct {
	Sheets []struct {
		Name string `xml:"name,attr"`
		RID  string `xml:"http://schemas.openxmlformats.org/officeDocument/2006/relationships id,attr"`
	} `xml:"sheets>sheet"`
	DefinedNames []struct {
		Name         string `xml:"name,attr"`
		LocalSheetID *int   `xml:"localSheetId,attr"`
		Value        string `xml:",chardata"`
	} `xml:"definedNames>definedName"`
}

type xRels struct {
	Rels []struct {
		ID     string `xml:"Id,attr"`
		Target string `xml:"Target,attr"`
	} `xml:"Relationship"`
}

type xCell struct {
	R  string  `xml:"r,attr"`
	S  int     `xml:"s,attr"`
	T  string  `xml:"t,attr"`
	F  *string `xml:"f"`
	V  string  `xml:"v"`
	IS *struct {
		T string `xml:"t"`
	} `xml:"is"`
}

type xWorksheet struct {
	SheetPr struct {
		PageSetUpPr struct {
			FitToPage string `xml:"fitToPage,attr"`
		} `xml:"pageSetUpPr"`
	} `xml:"sheetPr"`
	Pane struct {
		YSplit      string `xml:"ySplit,attr"`
		XSplit      string `xml:"xSplit,attr"`
		TopLeftCell string `xml:"topLeftCell,attr"`
		State       string `xml:"state,attr"`
	} `xml:"sheetViews>sheetView>pane"`
	Cols []struct {
		Min   int     `xml:"min,attr"`
		Max   int     `xml:"max,attr"`
		Width float64 `xml:"width,attr"`
	} `xml:"cols>col"`
	Rows []struct {
		R            int     `xml:"r,attr"`
		Ht           float64 `xml:"ht,attr"`
		CustomHeight string  `xml:"customHeight,attr"`
		Cells        []xCell `xml:"c"`
	} `xml:"sheetData>row"`
	PageSetup struct {
		Orientation string `xml:"orientation,attr"`
		FitToWidth  string `xml:"fitToWidth,attr"`
		FitToHeight string `xml:"fitToHeight,attr"`
		PaperSize   string `xml:"paperSize,attr"`
	} `xml:"pageSetup"`
}

type xStyles struct {
	NumFmts []struct {
		ID   int    `xml:"numFmtId,attr"`
		Code string `xml:"formatCode,attr"`
	} `xml:"numFmts>numFmt"`
	CellXfs []struct {
		NumFmtID int `xml:"numFmtId,attr"`
	} `xml:"cellXfs>xf"`
}

// sheets maps each sheet name to its parsed worksheet part, in workbook
// order.
func (p *pkg) sheets(t *testing.T) (names []string, sheets map[string]*xWorksheet, wb *xWorkbook) {
	t.Helper()
	wb = &xWorkbook{}
	p.decode(t, "xl/workbook.xml", wb)
	var rels xRels
	p.decode(t, "xl/_rels/workbook.xml.rels", &rels)
	target := map[string]string{}
	for _, r := range rels.Rels {
		target[r.ID] = r.Target
	}
	sheets = map[string]*xWorksheet{}
	for _, s := range wb.Sheets {
		part := target[s.RID]
		if !strings.HasPrefix(part, "/") {
			part = path.Join("xl", part)
		} else {
			part = strings.TrimPrefix(part, "/")
		}
		ws := &xWorksheet{}
		p.decode(t, part, ws)
		names = append(names, s.Name)
		sheets[s.Name] = ws
	}
	return names, sheets, wb
}

// numFmt is the format code of a cell style (built-in ids by their codes).
func (st *xStyles) numFmt(style int) string {
	if style < 0 || style >= len(st.CellXfs) {
		return fmt.Sprintf("<no style %d>", style)
	}
	id := st.CellXfs[style].NumFmtID
	for _, f := range st.NumFmts {
		if f.ID == id {
			return f.Code
		}
	}
	builtin := map[int]string{0: "General", 1: "0", 2: "0.00", 20: "h:mm", 22: "m/d/yy h:mm"}
	if c, ok := builtin[id]; ok {
		return c
	}
	return "builtin " + strconv.Itoa(id)
}

// cellXML finds a cell of a parsed worksheet by reference.
func (ws *xWorksheet) cell(r string) *xCell {
	for i := range ws.Rows {
		for j := range ws.Rows[i].Cells {
			if ws.Rows[i].Cells[j].R == r {
				return &ws.Rows[i].Cells[j]
			}
		}
	}
	return nil
}

// text is an inline or plain string cell's text as Excel reads it (with
// white space kept).
func (c *xCell) text() string {
	if c == nil {
		return ""
	}
	if c.IS != nil {
		return unescapeOOXML(c.IS.T)
	}
	return c.V
}

// unescapeOOXML decodes the _xHHHH_ escapes of ST_Xstring (ECMA-376 Part 1,
// 22.9.2.19), as Excel does when it reads a string.
func unescapeOOXML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '_' && i+7 <= len(s) && s[i+1] == 'x' && s[i+6] == '_' {
			if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				b.WriteRune(rune(v))
				i += 7
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
