package store

import (
	"math"
	"testing"

	polyline "github.com/twpayne/go-polyline"

	"routeopt.io/routeopt/api/v1alpha1"
)

// FuzzStraightLegs: the fallback polyline of a route whose road geometry
// is too large to store runs from the road's first point (the depot)
// through every stop and back, or is empty when the road does not decode.
func FuzzStraightLegs(f *testing.F) {
	f.Add("_p~iF~ps|U_ulLnnqC_mqNvxq`@", 52.5301, 13.3849, uint8(3))
	f.Add("", 0.0, 0.0, uint8(1))
	f.Add("?", -90.0, 180.0, uint8(0))
	f.Add("_p~iF", 1e-5, -1e-5, uint8(200))
	f.Fuzz(func(t *testing.T, road string, lat, lon float64, n uint8) {
		if math.IsNaN(lat) || math.IsNaN(lon) || math.Abs(lat) > 90 || math.Abs(lon) > 180 {
			return // stops are validated coordinates
		}
		lat, lon = math.Round(lat*1e5)/1e5, math.Round(lon*1e5)/1e5
		stops := make([]v1alpha1.Stop, n)
		for i := range stops {
			stops[i] = v1alpha1.Stop{Seq: i + 1, Latitude: lat, Longitude: lon}
		}
		line := straightLegs(road, stops)
		roadCoords, _, roadErr := polyline.DecodeCoords([]byte(road))
		if roadErr != nil || len(roadCoords) == 0 {
			if line != "" {
				t.Fatalf("road %q does not decode, straight legs %q", road, line)
			}
			return
		}
		depot := roadCoords[0]
		if math.Abs(depot[0]) > 90 || math.Abs(depot[1]) > 180 {
			return // not a road this service stored: its depot is a valid coordinate
		}
		coords, rest, err := polyline.DecodeCoords([]byte(line))
		if err != nil || len(rest) > 0 || len(coords) != len(stops)+2 {
			t.Fatalf("straight legs %q decode to %d points, %v; want %d", line, len(coords), err, len(stops)+2)
		}
		for i, c := range coords {
			want := []float64{lat, lon}
			if i == 0 || i == len(coords)-1 {
				want = depot
			}
			if math.Abs(c[0]-want[0]) > 1e-5 || math.Abs(c[1]-want[1]) > 1e-5 {
				t.Fatalf("point %d is %v, want %v", i, c, want)
			}
		}
	})
}
