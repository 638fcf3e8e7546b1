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
// (the result's route order) and by seq. The columns are the route sheets'
// after a vehicle column (and a driver column with driver instructions).
// Unassigned orders are not in the csv (they have no stop row); the workbook
// lists them.
func writeCSV(w io.Writer, p *plan, driver bool) error {
	if _, err := io.WriteString(w, utf8BOM); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	cols := stopColumns(driver)

	header := make([]string, 0, len(cols)+2)
	header = append(header, "Vehicle")
	if driver {
		header = append(header, "Driver")
	}
	for _, c := range cols {
		header = append(header, stopCols[c].header)
	}
	if err := cw.Write(header); err != nil {
		return err
	}

	rec := make([]string, 0, len(header))
	for i := range p.routes {
		r := &p.routes[i]
		for j := range r.stops {
			s := &r.stops[j]
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

func csvField(s *stopRow, c colID) string {
	switch c {
	case colSeq:
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
		return strconv.FormatFloat(s.serviceMinutes, 'f', -1, 64)
	case colLat:
		return strconv.FormatFloat(s.lat, 'f', -1, 64)
	case colLon:
		return strconv.FormatFloat(s.lon, 'f', -1, 64)
	}
	return ""
}
