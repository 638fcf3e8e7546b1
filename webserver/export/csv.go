package export

import (
	"encoding/csv"
	"io"
	"strconv"
)

// utf8BOM makes Excel read the file as UTF-8 (without it, accented and
// non-Latin text turns into mojibake).
const utf8BOM = "\ufeff"

// writeCSV writes one RFC 4180 file (CRLF line ends, quotes where needed),
// UTF-8 with a BOM: a header row, then one row per stop ordered by route
// (the result's route order) and by seq, with the route's start, breaks and
// end between them when the request had them. The columns are the route
// sheets' after a vehicle column (and a driver column with driver
// instructions). Unassigned orders are not in the csv (they have no stop
// row); the workbook lists them.
func writeCSV(w io.Writer, p *plan, driver bool) error {
	if _, err := io.WriteString(w, utf8BOM); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	cols := p.stopColumns(driver)

	header := make([]string, 0, len(cols)+2)
	header = append(header, "Vehicle")
	if driver {
		header = append(header, "Driver")
	}
	for _, c := range cols {
		header = append(header, p.header(c))
	}
	if err := cw.Write(header); err != nil {
		return err
	}

	rec := make([]string, 0, len(header))
	for i := range p.routes {
		r := &p.routes[i]
		for j := range r.rows {
			s := &r.rows[j]
			rec = append(rec[:0], r.vehicle)
			if driver {
				rec = append(rec, r.driver)
			}
			for _, c := range cols {
				rec = append(rec, csvField(s, c))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvField is a row's cell of column c as text. The other rows than stops
// leave the stop's own columns (seq, service, the order's fields) empty, and
// coordinates where they have no place (a break, an open route's end).
func csvField(s *stopRow, c column) string {
	switch c.id {
	case colActivity:
		return s.activity
	case colSeq:
		if s.kind != rowStop {
			return ""
		}
		return strconv.Itoa(s.seq)
	case colArrival:
		return hhmm(s.arrivalS)
	case colWindow:
		return s.window
	case colOrderRef:
		return s.orderRef
	case colCustomer:
		return s.customer
	case colAddress:
		return s.address
	case colPhone:
		return phoneText(s.phone, CSV)
	case colNotes:
		return s.notes
	case colService:
		if s.kind != rowStop {
			return ""
		}
		return strconv.FormatFloat(s.serviceMinutes, 'f', -1, 64)
	case colSkills:
		return s.skills
	case colLoad:
		if a := s.load(c.dim); a.set {
			return strconv.FormatFloat(a.value, 'f', -1, 64)
		}
		return ""
	case colLat:
		if !s.placed {
			return ""
		}
		return strconv.FormatFloat(s.lat, 'f', -1, 64)
	case colLon:
		if !s.placed {
			return ""
		}
		return strconv.FormatFloat(s.lon, 'f', -1, 64)
	}
	return ""
}
