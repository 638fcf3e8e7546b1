package integration

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	polyline "github.com/twpayne/go-polyline"

	"routeopt.io/routeopt/solver/matrix"
)

// fakeNominatim answers /search in Nominatim's jsonv2 format. An address
// containing "nowhere" is not found; one containing "approx" is placed at
// city level; every other address gets a house-level match at a position
// derived from its text, inside Berlin. Down makes it answer 503.
type fakeNominatim struct {
	*httptest.Server
	requests atomic.Int64
	down     atomic.Bool
	latency  time.Duration
}

func newFakeNominatim(t *testing.T, latency time.Duration) *fakeNominatim {
	f := &fakeNominatim{latency: latency}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		time.Sleep(f.latency)
		if f.down.Load() {
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "jsonv2" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":400,"message":"Parameter 'format' must be one of: xml, json, jsonv2, geojson, geocodejson"}}`))
			return
		}
		q := r.URL.Query()
		text := strings.Join([]string{q.Get("q"), q.Get("street"), q.Get("city"), q.Get("postalcode"), q.Get("country")}, " ")
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if strings.Contains(text, "nowhere") {
			_, _ = w.Write([]byte("[]"))
			return
		}
		lat, lon := fakePosition(text)
		rank, addressType, typ, category := 30, "building", "house", "building"
		if strings.Contains(text, "approx") {
			rank, addressType, typ, category = 16, "city", "administrative", "boundary"
		}
		place := []map[string]any{{
			"place_id": 123456, "licence": "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
			"osm_type": "way", "osm_id": 987654, "lat": strconv.FormatFloat(lat, 'f', 7, 64), "lon": strconv.FormatFloat(lon, 'f', 7, 64),
			"category": category, "type": typ, "place_rank": rank, "importance": 0.00001, "addresstype": addressType,
			"name": "", "display_name": text + ", Berlin, Deutschland",
			"boundingbox": []string{fmt.Sprint(lat - 0.0001), fmt.Sprint(lat + 0.0001), fmt.Sprint(lon - 0.0001), fmt.Sprint(lon + 0.0001)},
		}}
		_ = json.NewEncoder(w).Encode(place)
	}))
	t.Cleanup(f.Close)
	return f
}

// fakePosition spreads addresses over central Berlin deterministically.
func fakePosition(text string) (float64, float64) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strings.TrimSpace(text)))
	v := h.Sum64()
	return 52.45 + float64(v%10000)/10000*0.12, 13.30 + float64((v/10000)%10000)/10000*0.20
}

// fakeOSRM answers OSRM's table and route services: table values are
// great-circle based (distance × 1.25, 36 km/h) and routes pass a midpoint
// between consecutive points, so road geometry differs from straight legs.
type fakeOSRM struct {
	*httptest.Server
	requests atomic.Int64
	down     atomic.Bool
}

func newFakeOSRM(t *testing.T) *fakeOSRM {
	f := &fakeOSRM{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if f.down.Load() {
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if len(parts) != 4 || parts[1] != "v1" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":"InvalidUrl","message":"URL string malformed close to position 1"}`))
			return
		}
		var pts []matrix.Point
		for _, c := range strings.Split(parts[3], ";") {
			lon, lat, _ := strings.Cut(c, ",")
			x, _ := strconv.ParseFloat(lon, 64)
			y, _ := strconv.ParseFloat(lat, 64)
			pts = append(pts, matrix.Point{Lat: y, Lon: x})
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch parts[0] {
		case "table":
			if len(pts) > 100 {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"code":"TooBig","message":"Too many table coordinates"}`))
				return
			}
			dist := make([][]float64, len(pts))
			dur := make([][]float64, len(pts))
			var waypoints []map[string]any
			for i := range pts {
				dist[i] = make([]float64, len(pts))
				dur[i] = make([]float64, len(pts))
				for j := range pts {
					d := matrix.GreatCircleMetres(pts[i], pts[j]) * 1.25
					dist[i][j], dur[i][j] = d, d/10
				}
				waypoints = append(waypoints, map[string]any{"hint": "x", "distance": 1.5, "name": "Straße", "location": []float64{pts[i].Lon, pts[i].Lat}})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"code": "Ok", "distances": dist, "durations": dur, "sources": waypoints, "destinations": waypoints})
		case "route":
			var coords [][]float64
			for i, p := range pts {
				if i > 0 {
					prev := pts[i-1]
					coords = append(coords, []float64{(prev.Lat+p.Lat)/2 + 0.001, (prev.Lon + p.Lon) / 2})
				}
				coords = append(coords, []float64{p.Lat, p.Lon})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{
				"code": "Ok",
				"routes": []map[string]any{{
					"geometry": string(polyline.EncodeCoords(coords)), "legs": []any{}, "distance": 1000.0, "duration": 100.0,
					"weight_name": "routability", "weight": 100.0,
				}},
				"waypoints": []any{},
			})
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"code":"InvalidService","message":"Service unknown"}`))
		}
	}))
	t.Cleanup(f.Close)
	return f
}
