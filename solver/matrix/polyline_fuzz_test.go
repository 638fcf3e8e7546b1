package matrix

import (
	"encoding/binary"
	"encoding/json"
	"testing"

	polyline "github.com/twpayne/go-polyline"
)

// FuzzRouteGeometry: OSRM's route geometry, a polyline of points on the
// 1e-5 degree grid, decodes to exactly those points however long the
// route and however far apart its points (the decoder's float sums are
// rounded back to the grid).
func FuzzRouteGeometry(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255})
	f.Add([]byte("a route across the antimeridian and back, twice over"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var want []Point
		var coords [][]float64
		for ; len(data) >= 8 && len(want) < 2000; data = data[8:] {
			lat := int64(binary.LittleEndian.Uint32(data))%18_000_001 - 9_000_000
			lon := int64(binary.LittleEndian.Uint32(data[4:]))%36_000_001 - 18_000_000
			want = append(want, Point{Lat: float64(lat) / 1e5, Lon: float64(lon) / 1e5})
			coords = append(coords, []float64{float64(lat) / 1e5, float64(lon) / 1e5})
		}
		body, err := json.Marshal(map[string]any{"code": "Ok", "routes": []map[string]any{{"geometry": string(polyline.EncodeCoords(coords)), "distance": 1, "duration": 1}}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeRoute(body)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%d points: decoded %d, %v", len(want), len(got), err)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("point %d: %v decodes as %v", i, want[i], got[i])
			}
		}
	})
}
