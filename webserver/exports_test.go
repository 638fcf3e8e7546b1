package webserver

import (
	"bytes"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/export"
	"routeopt.io/routeopt/webserver/schema"
)

// The formats an export request may name are the ones package export
// renders: the download handler hands the requested format straight to it.
func TestExportFormatsAreRendered(t *testing.T) {
	if !slices.Contains(schema.ExportFormats, schema.DefaultExportFormat) {
		t.Errorf("the default format %q is not one of %v", schema.DefaultExportFormat, schema.ExportFormats)
	}
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Name: "3f0c1a2e-6b1d-4d7e-9c55-0d1f2a3b4c5d"}}
	result := &v1alpha1.Result{ID: opt.Name, Status: v1alpha1.StateCompleted}
	for _, f := range schema.ExportFormats {
		var out bytes.Buffer
		if err := export.Write(&out, opt, result, export.Options{Format: export.Format(f)}); err != nil || out.Len() == 0 {
			t.Errorf("format %q: %v, %d bytes", f, err, out.Len())
		}
		if ct := export.ContentType(export.Format(f)); ct == "application/octet-stream" {
			t.Errorf("format %q has no content type of its own", f)
		}
	}
}
