package matrix

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	polyline "github.com/twpayne/go-polyline"
)

// fakeOSRM is an osrm-routed stand-in that answers in OSRM's JSON. Its
// table values are computed from the coordinates it receives (fakeTravel),
// so a test can check every cell; it enforces --max-table-size and
// --max-viaroute-size like the real server.
type fakeOSRM struct {
	t        *testing.T
	srv      *httptest.Server
	maxTable int // 0 means 100
	maxRoute int // 0 means 500
	done     chan struct{}

	// intercept, when set, may answer a request itself (n counts all
	// requests from 1); it returns false to let the fake answer normally.
	intercept func(n int, w http.ResponseWriter, r *http.Request) bool
	// unreachable marks points no route reaches (null cells).
	unreachable func(p Point) bool

	mu        sync.Mutex
	requests  int
	tables    int // table requests answered Ok
	routes    int // route requests answered Ok
	maxCoords int // most coordinates in a table request
	urls      []string
}

func newFakeOSRM(t *testing.T) *fakeOSRM {
	f := &fakeOSRM{t: t, done: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.done)
		f.srv.Close()
	})
	return f
}

// client is an OSRM provider for the fake with fast retries.
func (f *fakeOSRM) client() *OSRM {
	return &OSRM{BaseURL: f.srv.URL, Backoff: 1, HTTPClient: f.srv.Client()}
}

// hang blocks until the client gives up on the request.
func (f *fakeOSRM) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.done:
	}
}

func (f *fakeOSRM) snapshot() (requests, tables, routes, maxCoords int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, f.tables, f.routes, f.maxCoords
}

// fakeTravel is the fake's road distance (m) and duration (s) from a to b:
// haversine-based, asymmetric (it depends on the source's longitude, so a
// transposed cell is caught) and fractional (so rounding is checked).
func fakeTravel(a, b Point) (metres, seconds float64) {
	if a == b {
		return 0, 0
	}
	frac := a.Lon*1000 - math.Floor(a.Lon*1000)
	metres = GreatCircleMetres(a, b)*1.27 + 40*frac + 0.25
	return metres, metres/8.9 + 1.5
}

func osrmJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func osrmErr(w http.ResponseWriter, code, message string) {
	osrmJSON(w, http.StatusBadRequest, map[string]string{"code": code, "message": message})
}

type fakeWaypoint struct {
	Hint     string     `json:"hint"`
	Distance float64    `json:"distance"`
	Name     string     `json:"name"`
	Location [2]float64 `json:"location"`
}

func waypoints(pts []Point) []fakeWaypoint {
	out := make([]fakeWaypoint, len(pts))
	for i, p := range pts {
		out[i] = fakeWaypoint{Hint: "KSoKADRYroqUBAEAEAAAABkAAAAGAAAAAAAAABAAAAAZAAAABgAAAAAAAADoAAAA", Distance: 4.2, Name: "Unter den Linden", Location: [2]float64{p.Lon, p.Lat}}
	}
	return out
}

func (f *fakeOSRM) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	n := f.requests
	f.urls = append(f.urls, r.URL.String())
	f.mu.Unlock()
	if f.intercept != nil && f.intercept(n, w, r) {
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[1] != "v1" || parts[2] != "driving" || (parts[0] != "table" && parts[0] != "route") {
		osrmJSON(w, http.StatusBadRequest, map[string]string{"code": "InvalidUrl", "message": "URL string malformed close to position 1: \"/" + parts[0] + "\""})
		return
	}
	var pts []Point
	for c := range strings.SplitSeq(parts[3], ";") {
		lon, lat, ok := strings.Cut(c, ",")
		x, err1 := strconv.ParseFloat(lon, 64)
		y, err2 := strconv.ParseFloat(lat, 64)
		if !ok || err1 != nil || err2 != nil || x < -180 || x > 180 || y < -90 || y > 90 {
			osrmErr(w, "InvalidQuery", "Query string malformed close to position 0")
			return
		}
		pts = append(pts, Point{Lat: y, Lon: x})
	}
	if parts[0] == "table" {
		f.table(w, r, pts)
	} else {
		f.route(w, r, pts)
	}
}

// indices parses OSRM's sources / destinations parameter.
func indices(v string, n int) ([]int, bool) {
	if v == "" || v == "all" {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out, true
	}
	var out []int
	for s := range strings.SplitSeq(v, ";") {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= n {
			return nil, false
		}
		out = append(out, i)
	}
	return out, true
}

func (f *fakeOSRM) table(w http.ResponseWriter, r *http.Request, pts []Point) {
	limit := f.maxTable
	if limit == 0 {
		limit = 100
	}
	if len(pts) > limit {
		osrmErr(w, "TooBig", "Too many table coordinates")
		return
	}
	q := r.URL.Query()
	ann := map[string]bool{}
	for a := range strings.SplitSeq(q.Get("annotations"), ",") {
		ann[a] = true
	}
	if q.Get("annotations") != "" && !ann["duration"] && !ann["distance"] {
		osrmErr(w, "InvalidOptions", "Options are invalid")
		return
	}
	src, ok1 := indices(q.Get("sources"), len(pts))
	dst, ok2 := indices(q.Get("destinations"), len(pts))
	if !ok1 || !ok2 {
		osrmErr(w, "InvalidOptions", "Options are invalid")
		return
	}
	if len(src)*len(dst) > limit*limit {
		osrmErr(w, "TooBig", "Too many table coordinates")
		return
	}
	durations := make([][]*float64, len(src))
	distances := make([][]*float64, len(src))
	for i, a := range src {
		durations[i] = make([]*float64, len(dst))
		distances[i] = make([]*float64, len(dst))
		for j, b := range dst {
			pa, pb := pts[a], pts[b]
			if pa != pb && f.unreachable != nil && (f.unreachable(pa) || f.unreachable(pb)) {
				continue
			}
			d, s := fakeTravel(pa, pb)
			distances[i][j], durations[i][j] = &d, &s
		}
	}
	srcPts := make([]Point, len(src))
	for i, a := range src {
		srcPts[i] = pts[a]
	}
	dstPts := make([]Point, len(dst))
	for j, b := range dst {
		dstPts[j] = pts[b]
	}
	resp := map[string]any{"code": "Ok", "sources": waypoints(srcPts), "destinations": waypoints(dstPts)}
	if q.Get("annotations") == "" || ann["duration"] {
		resp["durations"] = durations
	}
	if ann["distance"] {
		resp["distances"] = distances
	}
	f.mu.Lock()
	f.tables++
	f.maxCoords = max(f.maxCoords, len(pts))
	f.mu.Unlock()
	osrmJSON(w, http.StatusOK, resp)
}

// fakeRoadPath is the fake's road shape through pts: each leg bends through
// a point north of its middle, on the 1e-5 grid of polyline precision 5.
func fakeRoadPath(pts []Point) []Point {
	grid := func(p Point) Point {
		return Point{Lat: math.Round(p.Lat*1e5) / 1e5, Lon: math.Round(p.Lon*1e5) / 1e5}
	}
	var out []Point
	for i, p := range pts {
		if i > 0 {
			prev := pts[i-1]
			out = append(out, grid(Point{Lat: (prev.Lat+p.Lat)/2 + 0.0004, Lon: (prev.Lon + p.Lon) / 2}))
		}
		out = append(out, grid(p))
	}
	return out
}

func (f *fakeOSRM) route(w http.ResponseWriter, r *http.Request, pts []Point) {
	limit := f.maxRoute
	if limit == 0 {
		limit = 500
	}
	if len(pts) > limit {
		osrmErr(w, "TooBig", fmt.Sprintf("Number of entries %d is higher than current maximum (%d)", len(pts), limit))
		return
	}
	q := r.URL.Query()
	if q.Get("overview") != "full" || q.Get("geometries") != "polyline" {
		osrmErr(w, "InvalidOptions", "Options are invalid")
		return
	}
	if len(pts) < 2 {
		osrmErr(w, "InvalidOptions", "Number of coordinates needs to be at least two.")
		return
	}
	path := fakeRoadPath(pts)
	coords := make([][]float64, len(path))
	for i, p := range path {
		coords[i] = []float64{p.Lat, p.Lon}
	}
	type leg struct {
		Steps    []any   `json:"steps"`
		Summary  string  `json:"summary"`
		Weight   float64 `json:"weight"`
		Duration float64 `json:"duration"`
		Distance float64 `json:"distance"`
	}
	var legs []leg
	var dist, dur float64
	for i := 1; i < len(pts); i++ {
		d, s := fakeTravel(pts[i-1], pts[i])
		legs = append(legs, leg{Steps: []any{}, Weight: s, Duration: s, Distance: d})
		dist += d
		dur += s
	}
	f.mu.Lock()
	f.routes++
	f.mu.Unlock()
	osrmJSON(w, http.StatusOK, map[string]any{
		"code": "Ok",
		"routes": []map[string]any{{
			"geometry":    string(polyline.EncodeCoords(coords)),
			"legs":        legs,
			"distance":    dist,
			"duration":    dur,
			"weight_name": "routability",
			"weight":      dur,
		}},
		"waypoints": waypoints(pts),
	})
}
