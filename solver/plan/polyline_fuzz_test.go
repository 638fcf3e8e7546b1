package plan

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	polyline "github.com/twpayne/go-polyline"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
)

// gridPoints reads data as points on the polyline's 1e-5 degree grid, four
// bytes a coordinate, within the valid ranges.
func gridPoints(data []byte) []matrix.Point {
	var out []matrix.Point
	for ; len(data) >= 8 && len(out) < 1000; data = data[8:] {
		lat := int64(binary.LittleEndian.Uint32(data))%18_000_001 - 9_000_000
		lon := int64(binary.LittleEndian.Uint32(data[4:]))%36_000_001 - 18_000_000
		out = append(out, matrix.Point{Lat: float64(lat) / 1e5, Lon: float64(lon) / 1e5})
	}
	return out
}

// FuzzRoutePolyline: a route's polyline, straight legs or road geometry,
// decodes to the very points it was made of (they are on the 1e-5 grid
// the format keeps), whatever their number and spread; geometry that
// cannot be had gives straight legs and a warning.
func FuzzRoutePolyline(f *testing.F) {
	f.Add([]byte{}, false)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, true)
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 1, 2, 3, 4, 5, 6, 7, 8, 64, 66, 15, 0, 128, 132, 30, 0}, false)
	f.Add([]byte("polyline precision is five decimals; deltas carry the rest"), true)
	f.Fuzz(func(t *testing.T, data []byte, roadFails bool) {
		path := gridPoints(data)
		var warnings []v1alpha1.Warning
		geometry := func(context.Context, []matrix.Point) ([]matrix.Point, error) {
			if roadFails {
				return nil, errors.New("OSRM answered 503")
			}
			return path, nil
		}
		line := routePolyline(context.Background(), geometry, path, &warnings, "van-1")
		if roadFails != (len(warnings) == 1) {
			t.Fatalf("road fails %v: warnings %+v", roadFails, warnings)
		}
		coords, rest, err := polyline.DecodeCoords([]byte(line))
		if err != nil || len(rest) > 0 || len(coords) != len(path) {
			t.Fatalf("%d points encode as %q, which decodes to %d points, %q, %v", len(path), line, len(coords), rest, err)
		}
		for i, c := range coords {
			if math.Abs(c[0]-path[i].Lat) > 5e-7 || math.Abs(c[1]-path[i].Lon) > 5e-7 {
				t.Fatalf("point %d %v decodes as %v", i, path[i], c)
			}
		}
	})
}
