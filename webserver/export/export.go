// Package export renders a completed optimization's result as a driver-ready
// file: an xlsx workbook (a summary, one sheet per route, the unassigned
// orders) or one csv file with a row per stop. With the fleet constraints
// of a request, a route also lists its start, breaks and end as rows of
// their own, and the orders' skills and loads have columns. Dispatchers
// print these sheets or send them to drivers' phones, so the package cares
// about what a person reads: times as times, numbers as numbers, text
// exactly as the customer gave it (except for the neutralising quote
// against formula injection), widths that fit, and a page setup that
// prints.
//
// The REST side calls Write with the stored Optimization and Result, and
// names the download with DownloadName and ContentDisposition.
package export

import (
	"errors"
	"fmt"
	"io"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Format is the file format of an export.
type Format string

// The formats of an export (docs/API.md, "ExportIn").
const (
	XLSX Format = "xlsx"
	CSV  Format = "csv"
)

// Options choose what Write renders.
type Options struct {
	// Format is XLSX or CSV.
	Format Format
	// IncludeDriverInstructions adds the customer, phone and notes columns
	// (and, in the workbook, a line naming driver, vehicle and departure on
	// top of each route sheet; in the csv, a driver column). The API's
	// default is true.
	IncludeDriverInstructions bool
}

// ErrUnknownFormat is returned by Write for a format other than XLSX and CSV.
var ErrUnknownFormat = errors.New("export: unknown format")

// Write renders opt's result res as o.Format into w. The csv is written row by
// row; the workbook's sheets are written with excelize's StreamWriter (no
// cell model is kept) and the zip archive goes straight into w. Write does
// not close w. The rows come from the result's own fields; opt supplies
// only what the result does not carry (the title, the depot, each order's
// phone, notes, service minutes, skills and loads, joined to stops by order
// id, the labels of the vehicles' starts and ends, and the drivers, starts
// and ends of unused vehicles).
//
// Everything that can fail except w itself fails before the first byte is
// written (a bad format, a workbook that cannot be built), so a caller that
// gets an error with nothing written can still answer with an error status;
// once bytes went out, an error is w's own (a client gone away).
func Write(w io.Writer, opt *v1alpha1.Optimization, res *v1alpha1.Result, o Options) error {
	if opt == nil || res == nil {
		return errors.New("export: optimization and result are required")
	}
	switch o.Format {
	case XLSX, CSV:
	default:
		return fmt.Errorf("%w %q", ErrUnknownFormat, o.Format)
	}
	p := buildPlan(opt, res)
	if o.Format == CSV {
		return writeCSV(w, p, o.IncludeDriverInstructions)
	}
	return writeXLSX(w, p, o.IncludeDriverInstructions)
}

// ContentType is the MIME type of f (application/octet-stream for an unknown
// format).
func ContentType(f Format) string {
	switch f {
	case XLSX:
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	case CSV:
		return "text/csv; charset=utf-8"
	default:
		return "application/octet-stream"
	}
}
