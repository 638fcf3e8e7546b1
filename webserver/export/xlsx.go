package export

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Sheet names of the workbook besides the route sheets.
const (
	summarySheet    = "Summary"
	unassignedSheet = "Unassigned"
)

// secondsPerDay turns seconds since midnight into a spreadsheet time value
// (a fraction of a day).
const secondsPerDay = 86400

// Number formats. Times of day use hh:mm; a time past midnight and a
// duration use [h]:mm, which keeps counting hours ("25:30") instead of
// wrapping to the next day.
const (
	fmtTime     = "hh:mm"
	fmtLongTime = "[h]:mm"
	fmtKm       = "0.0"
	fmtCoord    = "0.000000"
	fmtPercent  = "0.0%"
	numFmtInt   = 1 // built-in "0"
)

// styles are the workbook's cell styles (excelize style ids).
type styles struct {
	title, label, header          int
	text, wrap, integer, number   int
	time, longTime, km, coord, pc int

	// defs are the styles by id, to derive shaded ones from.
	defs map[int]excelize.Style
	// shaded maps a cell style to its shaded twin, which sets a route's
	// start, breaks and end apart from its stops; made only for a
	// workbook that has such rows, so that the others keep their styles.
	shaded map[int]int
}

// shadeFill is the background of a route's rows other than stops.
var shadeFill = excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"EDEDED"}}

// addShaded makes the shaded twin of each style a route row uses.
func (st *styles) addShaded(f *excelize.File) error {
	st.shaded = map[int]int{}
	for _, id := range []int{st.text, st.wrap, st.integer, st.number, st.time, st.longTime, st.coord} {
		s := st.defs[id]
		s.Fill = shadeFill
		shaded, err := f.NewStyle(&s)
		if err != nil {
			return err
		}
		st.shaded[id] = shaded
	}
	return nil
}

// shade is c in its shaded style.
func (st *styles) shade(c excelize.Cell) excelize.Cell {
	if id, ok := st.shaded[c.StyleID]; ok {
		c.StyleID = id
	}
	return c
}

func newStyles(f *excelize.File) (*styles, error) {
	border := []excelize.Border{
		{Type: "left", Color: "BFBFBF", Style: 1},
		{Type: "right", Color: "BFBFBF", Style: 1},
		{Type: "top", Color: "BFBFBF", Style: 1},
		{Type: "bottom", Color: "BFBFBF", Style: 1},
	}
	top := &excelize.Alignment{Vertical: "top"}
	custom := func(code string) *string { return &code }
	st := styles{defs: map[int]excelize.Style{}}
	for _, d := range []struct {
		id *int
		s  excelize.Style
	}{
		{&st.title, excelize.Style{Font: &excelize.Font{Bold: true, Size: 13}, Alignment: &excelize.Alignment{Vertical: "center"}}},
		{&st.label, excelize.Style{
			Font: &excelize.Font{Bold: true}, Border: border, Alignment: top,
			Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"F2F2F2"}},
		}},
		{&st.header, excelize.Style{
			Font: &excelize.Font{Bold: true}, Border: border,
			Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9E1F2"}},
			Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
		}},
		{&st.text, excelize.Style{Border: border, Alignment: top}},
		{&st.wrap, excelize.Style{Border: border, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}}},
		{&st.integer, excelize.Style{Border: border, Alignment: top, NumFmt: numFmtInt}},
		{&st.number, excelize.Style{Border: border, Alignment: top}},
		{&st.time, excelize.Style{Border: border, Alignment: top, CustomNumFmt: custom(fmtTime)}},
		{&st.longTime, excelize.Style{Border: border, Alignment: top, CustomNumFmt: custom(fmtLongTime)}},
		{&st.km, excelize.Style{Border: border, Alignment: top, CustomNumFmt: custom(fmtKm)}},
		{&st.coord, excelize.Style{Border: border, Alignment: top, CustomNumFmt: custom(fmtCoord)}},
		{&st.pc, excelize.Style{Border: border, Alignment: top, CustomNumFmt: custom(fmtPercent)}},
	} {
		id, err := f.NewStyle(&d.s)
		if err != nil {
			return nil, err
		}
		*d.id = id
		st.defs[id] = d.s
	}
	return &st, nil
}

// timeCell is a time of day (seconds since the depot's midnight) as a
// spreadsheet time value; past midnight it is shown as 24:00 and beyond.
func (st *styles) timeCell(s int) excelize.Cell {
	style := st.time
	if s >= secondsPerDay {
		style = st.longTime
	}
	return excelize.Cell{StyleID: style, Value: float64(s) / secondsPerDay}
}

// durationCell is a duration in seconds, shown as [h]:mm.
func (st *styles) durationCell(s int64) excelize.Cell {
	return excelize.Cell{StyleID: st.longTime, Value: float64(s) / secondsPerDay}
}

// Text cells are always written as strings (inline strings, t="inlineStr",
// never a <f> formula element), so a spreadsheet never evaluates them: a
// customer called "=HYPERLINK(...)" is text in the workbook whatever we do.
// The leading quote of cellText is kept all the same, as in the csv, so that
// a sheet saved as csv from Excel, or copied into another sheet, stays inert.
func textCell(style int, s string) excelize.Cell {
	if s == "" {
		return excelize.Cell{StyleID: style} // a styled, empty cell
	}
	return excelize.Cell{StyleID: style, Value: s}
}

func writeXLSX(w io.Writer, p *plan, driver bool) (err error) {
	f := excelize.NewFile()
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	st, err := newStyles(f)
	if err != nil {
		return err
	}
	if p.fleet.activity {
		if err := st.addShaded(f); err != nil {
			return err
		}
	}
	docProps := &excelize.DocProperties{Title: p.title, Creator: "routeopt", Subject: "Routes"}
	if !p.created.IsZero() {
		docProps.Created = p.created.Format(time.RFC3339)
		docProps.Modified = docProps.Created
	}
	if err := f.SetDocProps(docProps); err != nil {
		return err
	}

	if err := f.SetSheetName("Sheet1", summarySheet); err != nil {
		return err
	}
	names := newSheetNames(summarySheet)
	if len(p.unassigned) > 0 {
		names.reserve(unassignedSheet)
	}
	if err := writeSummary(f, st, p); err != nil {
		return fmt.Errorf("export: summary sheet: %w", err)
	}
	for i := range p.routes {
		name := names.add(p.routes[i].vehicleRef)
		if err := writeRoute(f, st, p, &p.routes[i], name, driver); err != nil {
			return fmt.Errorf("export: route sheet %q: %w", name, err)
		}
	}
	if len(p.unassigned) > 0 {
		if err := writeUnassigned(f, st, p); err != nil {
			return fmt.Errorf("export: unassigned sheet: %w", err)
		}
	}
	// The Summary (the template's first sheet) is the active one already.
	// Do not call SetActiveSheet: it parses every streamed sheet back into
	// memory (40 % of the time of an export).
	return writeZip(f, w)
}

// writeZip writes the archive straight into w. excelize's own Write builds
// the whole archive in a bytes.Buffer and then copies it; its ZipWriter hook
// lets the archive writer wrap w instead, so the parts go out as they are
// compressed and the buffer it passes stays empty.
func writeZip(f *excelize.File, w io.Writer) error {
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(w) })
	buf, err := f.WriteToBuffer()
	if err != nil {
		return err
	}
	if buf.Len() != 0 {
		// A future excelize that post-processes its buffer (encryption, zip64
		// fix-ups) would have written a second copy: refuse rather than send
		// a corrupt file.
		return errors.New("export: excelize wrote into its own buffer; the direct zip writer is not supported by this version")
	}
	return nil
}

// setupSheet makes a sheet print well: landscape, one page wide, as many
// pages high as needed, narrow margins, the sheet name and page numbers in
// the footer, and the rows titleFrom..titleTo repeated on top of every
// printed page (print titles). It is called before the sheet's stream writer
// exists, because the stream writer writes the sheet's properties first.
func setupSheet(f *excelize.File, sheet string, p *plan, titleFrom, titleTo int) error {
	fit := true
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	orientation, one, zero, size := "landscape", 1, 0, p.paperSize
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{
		Size: &size, Orientation: &orientation, FitToWidth: &one, FitToHeight: &zero,
	}); err != nil {
		return err
	}
	side, edge, hf := 0.4, 0.6, 0.3
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{
		Left: &side, Right: &side, Top: &edge, Bottom: &edge, Header: &hf, Footer: &hf,
	}); err != nil {
		return err
	}
	if err := f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: "&L&A&RPage &P of &N"}); err != nil {
		return err
	}
	return f.SetDefinedName(&excelize.DefinedName{
		Name:     "_xlnm.Print_Titles",
		RefersTo: fmt.Sprintf("%s!$%d:$%d", quoteSheet(sheet), titleFrom, titleTo),
		Scope:    sheet,
	})
}

// quoteSheet quotes a sheet name for a formula reference.
func quoteSheet(name string) string {
	return "'" + strings.ReplaceAll(name, "'", "''") + "'"
}

func freeze(sw *excelize.StreamWriter, rows int) error {
	cell := "A" + strconv.Itoa(rows+1)
	return sw.SetPanes(&excelize.Panes{
		Freeze: true, YSplit: rows, TopLeftCell: cell, ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: cell, ActiveCell: cell, Pane: "bottomLeft"}},
	})
}

// widths tracks the widest content of each column, in characters.
type widths []float64

func (ws widths) text(col int, s string) {
	if w := displayWidth(s); w > ws[col] {
		ws[col] = w
	}
}

// header counts a header's longest word: headers wrap.
func (ws widths) header(col int, s string) {
	for _, word := range strings.Fields(s) {
		ws.text(col, word)
	}
}

// final is each column's width: its content plus padding, within
// [minW, maxW].
func (ws widths) final(minW, maxW func(col int) float64) []float64 {
	out := make([]float64, len(ws))
	for i, w := range ws {
		out[i] = min(max(w+2, minW(i)), maxW(i))
	}
	return out
}

// setCols sets the column widths. The stream writer puts each new column
// before the ones it has, and Excel wants them in ascending order: so the
// last column goes first.
func setCols(sw *excelize.StreamWriter, width []float64) error {
	for i := len(width) - 1; i >= 0; i-- {
		if err := sw.SetColWidth(i+1, i+1, width[i]); err != nil {
			return err
		}
	}
	return nil
}

// lineHeight is the height of one line of the default font (Calibri 11),
// in points.
const lineHeight = 15

// rowHeight is the height a row needs for its wrapped cells (0: the default
// height of one line). Spreadsheets do not agree on growing rows by
// themselves when a file is opened (LibreOffice does not), so the height is
// written: greedy word wrapping of each wrapped cell in its column's width.
func rowHeight(texts []string, width []float64, wrap []bool) float64 {
	lines := 1
	for i, s := range texts {
		if wrap[i] && s != "" {
			lines = max(lines, wrappedLines(s, width[i]))
		}
	}
	if lines == 1 {
		return 0
	}
	return min(float64(lines*lineHeight), excelize.MaxRowHeight)
}

// wrappedLines estimates the lines s takes when wrapped in a column width
// characters wide.
func wrappedLines(s string, width float64) int {
	capacity := max(width-1, 1)
	lines := 0
	for _, para := range strings.Split(s, "\n") {
		lines++
		used := 0.0
		for _, word := range strings.Fields(para) {
			w := displayWidth(word)
			switch {
			case used == 0:
			case used+1+w <= capacity:
				used++
			default:
				lines++
				used = 0
			}
			for w > capacity { // a word longer than the line breaks inside
				lines++
				w -= capacity
			}
			used += w
		}
	}
	return lines
}

func cellName(col, row int) string {
	name, _ := excelize.CoordinatesToCellName(col, row)
	return name
}

// headerRow writes a header row, tall enough for its wrapped headers.
func headerRow(sw *excelize.StreamWriter, st *styles, row int, headers []string, width []float64) error {
	cells := make([]any, len(headers))
	wrap := make([]bool, len(headers))
	for i, h := range headers {
		cells[i], wrap[i] = textCell(st.header, h), true
	}
	return sw.SetRow(cellName(1, row), cells, excelize.RowOpts{Height: rowHeight(headers, width, wrap)})
}

// The summary: the name, KPIs in two label/value pairs, then one row per
// vehicle. With fleet constraints the vehicle table also says where each
// vehicle starts and ends (after Return) and its load and capacity in each
// named dimension (at the end).
var summaryCols = []string{"Vehicle", "Driver", "Departure", "Return", "Stops", "Distance (km)", "Load", "Capacity", "Utilization"}

// summaryHeaders are the vehicle table's headers, and the index of its
// Stops column (the first after the start and end).
func (p *plan) summaryHeaders() (headers []string, stops int) {
	headers = append(headers, summaryCols[:4]...)
	if p.fleet.places {
		headers = append(headers, "Start", "End")
	}
	stops = len(headers)
	headers = append(headers, summaryCols[4:]...)
	for _, d := range p.fleet.dims {
		headers = append(headers, cellText("Load "+d), cellText("Capacity "+d))
	}
	return headers, stops
}

func writeSummary(f *excelize.File, st *styles, p *plan) error {
	k := p.kpis
	label := func(s string) excelize.Cell { return textCell(st.label, s) }
	intCell := func(v int) excelize.Cell { return excelize.Cell{StyleID: st.integer, Value: v} }
	created := ""
	if !p.created.IsZero() {
		created = p.created.Format("2006-01-02 15:04") + " UTC"
	}
	const (
		blockFirstRow = 2
		depotRow      = 1  // index in block
		tableHeader   = 10 // after a blank row 9
	)
	block := [][]any{
		{label("Strategy"), textCell(st.text, p.strategy), nil, label("Created"), textCell(st.text, created)},
		{label("Depot"), textCell(st.text, p.depot)},
		{label("Orders total"), intCell(k.OrdersTotal), nil, label("Vehicles available"), intCell(k.VehiclesAvailable)},
		{label("Orders assigned"), intCell(k.OrdersAssigned), nil, label("Vehicles used"), intCell(k.VehiclesUsed)},
		{label("Orders unassigned"), intCell(k.OrdersUnassigned), nil, label("Average utilization"), excelize.Cell{StyleID: st.pc, Value: k.AvgUtilization}},
		{label("Distance (km)"), excelize.Cell{StyleID: st.km, Value: float64(k.DistanceM) / 1000}, nil, label("Late stops"), intCell(k.LateStops)},
		{label("Drive time"), st.durationCell(k.DriveSeconds), nil, label("Route time"), st.durationCell(k.RouteSeconds)},
	}

	// Widths: the title (row 1) and the depot overflow into the empty
	// cells to their right, so they are not measured.
	headers, stopsCol := p.summaryHeaders()
	// The start and end of the fleet constraints, when present, come
	// before Stops; loads and capacities per dimension after Utilization.
	placeCols := stopsCol - 4
	loadCol, dimCol := 6+placeCols, len(summaryCols)+placeCols
	ws := make(widths, len(headers))
	for i, h := range headers {
		ws.header(i, h)
	}
	for r, row := range block {
		if r == depotRow {
			continue
		}
		for i, v := range row {
			if c, ok := v.(excelize.Cell); ok {
				if text, ok := c.Value.(string); ok {
					ws.text(i, text)
				} else {
					ws.text(i, "00000.0") // a number or a time
				}
			}
		}
	}
	for _, v := range p.vehicles {
		ws.text(0, v.vehicle)
		ws.text(1, v.driver)
		ws.text(loadCol, strconv.FormatFloat(v.load, 'f', -1, 64))
		ws.text(loadCol+1, strconv.FormatFloat(v.capacity, 'f', -1, 64))
		if p.fleet.places {
			ws.text(4, v.start)
			ws.text(5, v.end)
		}
		for d := range p.fleet.dims {
			ws.text(dimCol+2*d, amountText(v.loads, d))
			ws.text(dimCol+2*d+1, amountText(v.capacities, d))
		}
	}
	width := ws.final(func(int) float64 { return 8 }, func(col int) float64 {
		if col <= 1 || col >= 4 && col < stopsCol {
			return 30
		}
		return 24
	})

	// Printed, the vehicle table's header row repeats on every page; on
	// screen everything down to it stays in view.
	if err := setupSheet(f, summarySheet, p, tableHeader, tableHeader); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(summarySheet)
	if err != nil {
		return err
	}
	if err := freeze(sw, tableHeader); err != nil {
		return err
	}
	if err := setCols(sw, width); err != nil {
		return err
	}
	if err := sw.SetRow("A1", []any{textCell(st.title, p.title)}, excelize.RowOpts{Height: 22}); err != nil {
		return err
	}
	for i, row := range block {
		if err := sw.SetRow(cellName(1, blockFirstRow+i), row); err != nil {
			return err
		}
	}
	if err := headerRow(sw, st, tableHeader, headers, width); err != nil {
		return err
	}
	for i, v := range p.vehicles {
		row := []any{
			textCell(st.text, v.vehicle), textCell(st.text, v.driver),
			textCell(st.text, ""), textCell(st.text, ""),
			excelize.Cell{StyleID: st.integer, Value: v.stops},
			excelize.Cell{StyleID: st.km, Value: float64(v.distanceM) / 1000},
			excelize.Cell{StyleID: st.number, Value: v.load},
			excelize.Cell{StyleID: st.number, Value: v.capacity},
			textCell(st.text, ""),
		}
		if v.used {
			row[2], row[3] = st.timeCell(v.departS), st.timeCell(v.returnS)
		}
		if v.capacity > 0 {
			row[8] = excelize.Cell{StyleID: st.pc, Value: v.load / v.capacity}
		}
		if p.fleet.places {
			row = slices.Insert(row, 4, any(textCell(st.wrap, v.start)), any(textCell(st.wrap, v.end)))
		}
		for d := range p.fleet.dims {
			row = append(row, amountCell(st, v.loads, d), amountCell(st, v.capacities, d))
		}
		var opts []excelize.RowOpts
		if p.fleet.places {
			opts = append(opts, excelize.RowOpts{Height: rowHeight([]string{v.start, v.end}, width[4:6], []bool{true, true})})
		}
		if err := sw.SetRow(cellName(1, tableHeader+1+i), row, opts...); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// routeTitle is the line on top of a route sheet with driver instructions.
func routeTitle(r *routePlan) string {
	driver := r.driver
	if driver == "" {
		driver = "—"
	}
	end := "Return: " + hhmm(r.returnS)
	switch {
	case r.openEnd:
		end = "Ends at the last stop: " + hhmm(r.returnS)
	case r.end != "":
		end = "End: " + hhmm(r.returnS)
	}
	return fmt.Sprintf("Driver: %s  ·  Vehicle: %s  ·  Departure: %s  ·  %s  ·  %d stops  ·  %s km",
		driver, r.vehicle, hhmm(r.departS), end, len(r.stops),
		strconv.FormatFloat(float64(r.distanceM)/1000, 'f', 1, 64))
}

// stopText is a row's cell as text: what is measured for widths and
// heights (the csv writes the same).
func stopText(s *stopRow, c column) string {
	switch {
	case (c.id == colLat || c.id == colLon) && !s.placed:
		return ""
	case c.id == colLat:
		return strconv.FormatFloat(s.lat, 'f', 6, 64)
	case c.id == colLon:
		return strconv.FormatFloat(s.lon, 'f', 6, 64)
	}
	return csvField(s, c)
}

func writeRoute(f *excelize.File, st *styles, p *plan, r *routePlan, sheet string, driver bool) error {
	if _, err := f.NewSheet(sheet); err != nil {
		return err
	}
	cols := p.stopColumns(driver)
	header := 1
	if driver {
		header = 2 // the title line, then the header
	}
	headers := make([]string, len(cols))
	wrap := make([]bool, len(cols))
	ws := make(widths, len(cols))
	for i, c := range cols {
		headers[i], wrap[i] = p.header(c), c.spec().wrap
		ws.header(i, headers[i])
	}
	texts := make([][]string, len(r.rows))
	for j := range r.rows {
		texts[j] = make([]string, len(cols))
		for i, c := range cols {
			texts[j][i] = stopText(&r.rows[j], c)
			ws.text(i, texts[j][i])
		}
	}
	width := ws.final(
		func(i int) float64 { return cols[i].spec().minWidth },
		func(i int) float64 { return cols[i].spec().maxWidth })

	if err := setupSheet(f, sheet, p, 1, header); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	if err := freeze(sw, header); err != nil {
		return err
	}
	if err := setCols(sw, width); err != nil {
		return err
	}
	if driver {
		if err := sw.SetRow("A1", []any{textCell(st.title, routeTitle(r))}, excelize.RowOpts{Height: 24}); err != nil {
			return err
		}
	}
	if err := headerRow(sw, st, header, headers, width); err != nil {
		return err
	}
	row := make([]any, len(cols))
	for j := range r.rows {
		for i, c := range cols {
			cell := stopCell(st, &r.rows[j], c)
			if r.rows[j].kind != rowStop {
				cell = st.shade(cell)
			}
			row[i] = cell
		}
		opts := excelize.RowOpts{Height: rowHeight(texts[j], width, wrap)}
		if err := sw.SetRow(cellName(1, header+1+j), row, opts); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// amountText is the d-th of amounts as text, "" when absent.
func amountText(amounts []amount, d int) string {
	if d < len(amounts) && amounts[d].set {
		return strconv.FormatFloat(amounts[d].value, 'f', -1, 64)
	}
	return ""
}

// amountCell is the d-th of amounts as a number, an empty cell when absent.
func amountCell(st *styles, amounts []amount, d int) excelize.Cell {
	if d < len(amounts) && amounts[d].set {
		return excelize.Cell{StyleID: st.number, Value: amounts[d].value}
	}
	return textCell(st.text, "")
}

func stopCell(st *styles, s *stopRow, c column) excelize.Cell {
	stop := s.kind == rowStop
	switch c.id {
	case colActivity:
		return textCell(st.wrap, s.activity)
	case colSeq:
		if !stop {
			return textCell(st.text, "")
		}
		return excelize.Cell{StyleID: st.integer, Value: s.seq}
	case colArrival:
		return st.timeCell(s.arrivalS)
	case colWindow:
		return textCell(st.text, s.window)
	case colOrderRef:
		return textCell(st.wrap, s.orderRef)
	case colCustomer:
		return textCell(st.wrap, s.customer)
	case colAddress:
		return textCell(st.wrap, s.address)
	case colPhone:
		return textCell(st.wrap, phoneText(s.phone, XLSX))
	case colNotes:
		return textCell(st.wrap, s.notes)
	case colService:
		if !stop {
			return textCell(st.text, "")
		}
		return excelize.Cell{StyleID: st.number, Value: s.serviceMinutes}
	case colSkills:
		return textCell(st.wrap, s.skills)
	case colLoad:
		return amountCell(st, s.loads, c.dim)
	case colLat, colLon:
		if !s.placed {
			return textCell(st.text, "")
		}
		v := s.lat
		if c.id == colLon {
			v = s.lon
		}
		return excelize.Cell{StyleID: st.coord, Value: v}
	}
	return excelize.Cell{}
}

var unassignedCols = []string{"Order ref", "Reason", "Message"}

func writeUnassigned(f *excelize.File, st *styles, p *plan) error {
	if _, err := f.NewSheet(unassignedSheet); err != nil {
		return err
	}
	ws := make(widths, len(unassignedCols))
	for i, h := range unassignedCols {
		ws.header(i, h)
	}
	for _, u := range p.unassigned {
		ws.text(0, u.orderRef)
		ws.text(1, u.reason)
		ws.text(2, u.message)
	}
	maxW := []float64{24, 22, 90}
	width := ws.final(func(int) float64 { return 10 }, func(i int) float64 { return maxW[i] })
	wrap := []bool{true, false, true}

	if err := setupSheet(f, unassignedSheet, p, 1, 1); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(unassignedSheet)
	if err != nil {
		return err
	}
	if err := freeze(sw, 1); err != nil {
		return err
	}
	if err := setCols(sw, width); err != nil {
		return err
	}
	if err := headerRow(sw, st, 1, unassignedCols, width); err != nil {
		return err
	}
	for i, u := range p.unassigned {
		cells := []any{textCell(st.wrap, u.orderRef), textCell(st.text, u.reason), textCell(st.wrap, u.message)}
		opts := excelize.RowOpts{Height: rowHeight([]string{u.orderRef, u.reason, u.message}, width, wrap)}
		if err := sw.SetRow(cellName(1, i+2), cells, opts); err != nil {
			return err
		}
	}
	return sw.Flush()
}
