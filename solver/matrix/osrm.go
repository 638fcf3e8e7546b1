package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	polyline "github.com/twpayne/go-polyline"
	"golang.org/x/sync/errgroup"

	"routeopt.io/routeopt/solver/httpkit"
)

// Defaults of the OSRM provider. DefaultOSRMMaxTableSize and
// DefaultOSRMMaxRouteSize are osrm-routed's own defaults (--max-table-size
// and --max-viaroute-size).
const (
	DefaultOSRMProfile      = "driving"
	DefaultOSRMMaxTableSize = 100
	DefaultOSRMMaxRouteSize = 500
	DefaultOSRMConcurrency  = 4
	DefaultOSRMTimeout      = 30 * time.Second
	DefaultOSRMRetries      = 3
	DefaultOSRMBackoff      = 250 * time.Millisecond
)

// maxOSRMBackoff caps the wait between two attempts, Retry-After included.
const maxOSRMBackoff = 10 * time.Second

// maxOSRMBody caps the size of one response body.
const maxOSRMBody = 64 << 20

// OSRM computes road distances and durations with an OSRM server
// (osrm-routed): the table service for the matrices, the route service for
// road geometry. The zero value of every field but BaseURL is a sensible
// default. An OSRM must not be modified while in use; it is safe for
// concurrent use otherwise.
//
// Matrix splits the points into chunks that respect MaxTableSize (see
// README.md), asks for them in parallel, retries 429, 5xx, timeouts and
// network errors, and fills pairs OSRM cannot route (null cells) with a
// Fallback estimate listed in Matrix.Estimated, or fails with ErrNoRoute
// when FailOnUnreachable is set.
type OSRM struct {
	// BaseURL is the server, for example "http://osrm:5000"; required.
	BaseURL string
	// Profile is the routing profile in the URL; "driving" when empty.
	Profile string
	// MaxTableSize is the server's --max-table-size: no table request
	// carries more coordinates; 100 when zero.
	MaxTableSize int
	// MaxRouteSize is the server's --max-viaroute-size: longer paths are
	// asked for in pieces; 500 when zero.
	MaxRouteSize int
	// Concurrency bounds parallel table requests; 4 when zero.
	Concurrency int
	// Timeout bounds each HTTP attempt; 30 s when zero.
	Timeout time.Duration
	// Retries is the number of attempts after the first for retryable
	// failures; 3 when zero, none when negative.
	Retries int
	// Backoff is the first wait between attempts, doubled each retry with
	// jitter; 250 ms when zero.
	Backoff time.Duration
	// HTTPClient sends the requests; http.DefaultClient when nil.
	HTTPClient *http.Client
	// UserAgent is sent with every request; "routeopt" when empty.
	UserAgent string
	// FailOnUnreachable makes Matrix fail with ErrNoRoute when OSRM finds
	// no route between two points, instead of estimating the pair.
	FailOnUnreachable bool
	// Fallback estimates pairs OSRM cannot route; Haversine defaults when zero.
	Fallback Haversine
	// OnRequest, when set, is called after every HTTP attempt with the
	// service ("table" or "route") and the attempt's error (nil on success),
	// for metrics. It must be safe for concurrent use.
	OnRequest func(service string, err error)
}

// ErrNoRoute reports that OSRM found no road route between two points.
var ErrNoRoute = errors.New("no road route between points")

// OSRMError is an answer of the OSRM server with a code other than "Ok",
// for example "NoSegment" (a point is too far from any road), "NoRoute",
// "InvalidQuery", "InvalidOptions" or "TooBig" (the request exceeds the
// server's limits: lower MaxTableSize or MaxRouteSize). It is not retried.
type OSRMError struct {
	Service    string // "table" or "route"
	Code       string // OSRM's code
	Message    string // OSRM's message
	HTTPStatus int
	// Point is the index, in the caller's points or path, of the point OSRM
	// names in its message (NoSegment); -1 when none.
	Point int
}

func (e *OSRMError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "osrm %s: %s", e.Service, e.Code)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Point >= 0 {
		fmt.Fprintf(&b, " (point %d)", e.Point)
	}
	switch e.Code {
	case "NoSegment":
		b.WriteString("; the point is too far from any road of the map")
	case "TooBig":
		b.WriteString("; the request exceeds the server's limits (check MaxTableSize / MaxRouteSize against --max-table-size / --max-viaroute-size)")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoRoute) true for OSRM's "NoRoute".
func (e *OSRMError) Is(target error) bool {
	return target == ErrNoRoute && e.Code == "NoRoute"
}

func (o *OSRM) profile() string { return orDefault(o.Profile, DefaultOSRMProfile) }
func (o *OSRM) tableSize() int  { return cmpInt(o.MaxTableSize, DefaultOSRMMaxTableSize) }
func (o *OSRM) routeSize() int  { return cmpInt(o.MaxRouteSize, DefaultOSRMMaxRouteSize) }
func (o *OSRM) concurrency() int {
	return cmpInt(o.Concurrency, DefaultOSRMConcurrency)
}

func (o *OSRM) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultOSRMTimeout
}

func (o *OSRM) attempts() int {
	switch {
	case o.Retries < 0:
		return 1
	case o.Retries == 0:
		return 1 + DefaultOSRMRetries
	}
	return 1 + o.Retries
}

func (o *OSRM) client() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return http.DefaultClient
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func cmpInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// check validates the configuration.
func (o *OSRM) check() error {
	if o.BaseURL == "" {
		return errors.New("osrm: BaseURL is required")
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("osrm: BaseURL %q is not an http(s) URL", o.BaseURL)
	}
	if strings.ContainsAny(o.profile(), "/?#;, ") {
		return fmt.Errorf("osrm: invalid profile %q", o.profile())
	}
	if o.tableSize() < 2 {
		return fmt.Errorf("osrm: MaxTableSize %d must be at least 2", o.MaxTableSize)
	}
	if o.routeSize() < 2 {
		return fmt.Errorf("osrm: MaxRouteSize %d must be at least 2", o.MaxRouteSize)
	}
	return nil
}

func checkPoints(points []Point) error {
	for i, p := range points {
		if math.IsNaN(p.Lat) || math.IsNaN(p.Lon) || p.Lat < -90 || p.Lat > 90 || p.Lon < -180 || p.Lon > 180 {
			return fmt.Errorf("osrm: point %d (%v, %v) is not a valid coordinate", i, p.Lat, p.Lon)
		}
	}
	return nil
}

// serviceURL is {base}/{service}/v1/{profile}/{lon,lat;...}?{query}.
func (o *OSRM) serviceURL(service string, coords []Point, query url.Values) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(o.BaseURL, "/"))
	b.WriteString("/" + service + "/v1/" + url.PathEscape(o.profile()) + "/")
	for i, p := range coords {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(strconv.FormatFloat(p.Lon, 'f', 6, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(p.Lat, 'f', 6, 64))
	}
	// url.Values.Encode would escape the ';' and ',' of index lists, which
	// OSRM accepts but which make logs unreadable.
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k) + "=" + query.Get(k))
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// Table service.

// tile is one table request: the caller's points it carries and which blocks
// of the final matrix it fills. Every request asks for all its coordinates
// as sources and destinations, so sources and destinations are omitted.
type tile struct {
	idx  []int    // indices into the caller's points, in request order
	own  [][2]int // (source block, destination block) pairs this tile writes
	desc string
}

// tiles splits n points into k blocks of at most max/2 points (sizes differ
// by at most one) and makes one request per pair of blocks {I, J}, I < J:
// its max or fewer coordinates, all-to-all, give the four blocks II, IJ, JI
// and JJ. The tile writes IJ and JI, and each diagonal block II once (in the
// tile {I, I+1}, the last block in the tile {k-2, k-1}), so tiles never write
// the same cell. n <= max is a single request. k(k-1)/2 requests in all:
// 501 points with max 100 are 11 blocks of 45 or 46 and 55 requests.
func tiles(n, maxSize int) []tile {
	if n <= maxSize {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return []tile{{idx: idx, own: [][2]int{{0, 0}}, desc: fmt.Sprintf("points 0-%d", n-1)}}
	}
	half := maxSize / 2
	k := (n + half - 1) / half
	bounds := make([]int, k+1)
	for b := range k + 1 {
		bounds[b] = b * n / k
	}
	var out []tile
	for i := range k {
		for j := i + 1; j < k; j++ {
			t := tile{own: [][2]int{{i, j}, {j, i}}}
			if j == i+1 {
				t.own = append(t.own, [2]int{i, i})
				if j == k-1 {
					t.own = append(t.own, [2]int{j, j})
				}
			}
			for p := bounds[i]; p < bounds[i+1]; p++ {
				t.idx = append(t.idx, p)
			}
			for p := bounds[j]; p < bounds[j+1]; p++ {
				t.idx = append(t.idx, p)
			}
			t.desc = fmt.Sprintf("points %d-%d and %d-%d", bounds[i], bounds[i+1]-1, bounds[j], bounds[j+1]-1)
			out = append(out, t)
		}
	}
	return out
}

// blockOf maps each point to its block for the tiling of tiles(n, max).
func blockOf(n, maxSize int) []int {
	out := make([]int, n)
	if n <= maxSize {
		return out
	}
	half := maxSize / 2
	k := (n + half - 1) / half
	for b := range k {
		for p := b * n / k; p < (b+1)*n/k; p++ {
			out[p] = b
		}
	}
	return out
}

// Matrix implements Provider with OSRM's table service. The returned
// Matrix's Geometry asks the route service for road shapes.
func (o *OSRM) Matrix(ctx context.Context, points []Point) (*Matrix, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := checkPoints(points); err != nil {
		return nil, err
	}
	n := len(points)
	m := &Matrix{Distance: make([][]int, n), Duration: make([][]int, n), Geometry: o.Route}
	for i := range n {
		m.Distance[i] = make([]int, n)
		m.Duration[i] = make([]int, n)
	}
	if n < 2 {
		return m, nil
	}
	block := blockOf(n, o.tableSize())
	work := tiles(n, o.tableSize())

	// Tiles write disjoint cells of m, so only Estimated needs the lock.
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.concurrency())
	for _, t := range work {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			est, err := o.fillTile(gctx, points, t, block, m)
			if err != nil {
				return err
			}
			mu.Lock()
			m.Estimated = append(m.Estimated, est...)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(m.Estimated, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return m, nil
}

// fillTile runs one table request and writes the cells the tile owns. It
// returns the pairs it estimated because OSRM had no route.
func (o *OSRM) fillTile(ctx context.Context, points []Point, t tile, block []int, m *Matrix) ([][2]int, error) {
	coords := make([]Point, len(t.idx))
	for a, g := range t.idx {
		coords[a] = points[g]
	}
	u := o.serviceURL("table", coords, url.Values{"annotations": {"distance,duration"}})
	var tab *table
	err := o.do(ctx, "table", u, t.desc, func(body []byte) error {
		var err error
		tab, err = decodeTable(body, len(coords), len(coords))
		return err
	})
	if err != nil {
		var oe *OSRMError
		if errors.As(err, &oe) && oe.Point >= 0 && oe.Point < len(t.idx) {
			oe.Point = t.idx[oe.Point]
		}
		return nil, err
	}
	owns := func(bi, bj int) bool {
		for _, p := range t.own {
			if p[0] == bi && p[1] == bj {
				return true
			}
		}
		return false
	}
	var estimated [][2]int
	for a, gi := range t.idx {
		for b, gj := range t.idx {
			if gi == gj || !owns(block[gi], block[gj]) {
				continue
			}
			d, s := tab.distance[a][b], tab.duration[a][b]
			if d < 0 || s < 0 {
				if o.FailOnUnreachable {
					return nil, fmt.Errorf("osrm table: %w from point %d to point %d", ErrNoRoute, gi, gj)
				}
				d, s = o.Fallback.estimate(points[gi], points[gj])
				estimated = append(estimated, [2]int{gi, gj})
			}
			m.Distance[gi][gj] = int(math.Round(d))
			m.Duration[gi][gj] = int(math.Round(s))
		}
	}
	return estimated, nil
}

// estimate is the Haversine distance and duration of one pair; invalid
// settings fall back to the defaults.
func (h Haversine) estimate(a, b Point) (metres, seconds float64) {
	circuity, speed := h.Circuity, h.SpeedKmh
	if circuity < 1 || speed <= 0 {
		circuity, speed = DefaultCircuity, DefaultSpeedKmh
	}
	d := GreatCircleMetres(a, b) * circuity
	return d, d / (speed * 1000 / 3600)
}

// osrmWaypoint is a snapped coordinate of a table or route answer.
type osrmWaypoint struct {
	Hint     string     `json:"hint"`
	Distance float64    `json:"distance"`
	Name     string     `json:"name"`
	Location [2]float64 `json:"location"`
}

type tableResponse struct {
	Code         string         `json:"code"`
	Message      string         `json:"message"`
	Durations    [][]*float64   `json:"durations"`
	Distances    [][]*float64   `json:"distances"`
	Sources      []osrmWaypoint `json:"sources"`
	Destinations []osrmWaypoint `json:"destinations"`
}

// table is a decoded table answer; -1 marks a null (unroutable) cell.
type table struct {
	duration, distance [][]float64
}

// maxCell bounds plausible values (metres or seconds) so rounding to int
// cannot overflow.
const maxCell = 1e12

// decodeTable decodes and checks an "Ok" table answer of nSrc × nDst cells.
func decodeTable(body []byte, nSrc, nDst int) (*table, error) {
	var r tableResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("osrm table: malformed answer: %w", err)
	}
	if r.Code != "Ok" {
		return nil, fmt.Errorf("osrm table: answer code %q", r.Code)
	}
	if r.Distances == nil {
		return nil, errors.New("osrm table: the answer has no distances (annotations=distance needs OSRM 5.18 or later)")
	}
	grid := func(name string, in [][]*float64) ([][]float64, error) {
		if len(in) != nSrc {
			return nil, fmt.Errorf("osrm table: %s has %d rows, want %d", name, len(in), nSrc)
		}
		out := make([][]float64, nSrc)
		for i, row := range in {
			if len(row) != nDst {
				return nil, fmt.Errorf("osrm table: %s row %d has %d cells, want %d", name, i, len(row), nDst)
			}
			out[i] = make([]float64, nDst)
			for j, v := range row {
				switch {
				case v == nil:
					out[i][j] = -1
				case *v < 0 || *v > maxCell || math.IsNaN(*v):
					return nil, fmt.Errorf("osrm table: %s[%d][%d] = %v is out of range", name, i, j, *v)
				default:
					out[i][j] = *v
				}
			}
		}
		return out, nil
	}
	var t table
	var err error
	if t.duration, err = grid("durations", r.Durations); err != nil {
		return nil, err
	}
	if t.distance, err = grid("distances", r.Distances); err != nil {
		return nil, err
	}
	// A pair is routable only when both annotations are.
	for i := range t.duration {
		for j := range t.duration[i] {
			if t.duration[i][j] < 0 || t.distance[i][j] < 0 {
				t.duration[i][j], t.distance[i][j] = -1, -1
			}
		}
	}
	return &t, nil
}

// ---------------------------------------------------------------------------
// Route service.

type routeResponse struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Routes  []struct {
		Geometry string  `json:"geometry"`
		Distance float64 `json:"distance"`
		Duration float64 `json:"duration"`
	} `json:"routes"`
	Waypoints []osrmWaypoint `json:"waypoints"`
}

// decodeRoute decodes an "Ok" route answer into its first route's points.
func decodeRoute(body []byte) ([]Point, error) {
	var r routeResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("osrm route: malformed answer: %w", err)
	}
	if r.Code != "Ok" {
		return nil, fmt.Errorf("osrm route: answer code %q", r.Code)
	}
	if len(r.Routes) == 0 {
		return nil, fmt.Errorf("osrm route: %w (no route in the answer)", ErrNoRoute)
	}
	coords, rest, err := polyline.DecodeCoords([]byte(r.Routes[0].Geometry))
	if err != nil {
		return nil, fmt.Errorf("osrm route: malformed geometry: %w", err)
	}
	if len(rest) > 0 {
		return nil, errors.New("osrm route: malformed geometry: trailing bytes")
	}
	out := make([]Point, 0, len(coords))
	for _, c := range coords {
		if len(c) != 2 {
			return nil, errors.New("osrm route: malformed geometry")
		}
		// The decoder sums float deltas; rounding back to the 1e-5 grid
		// removes the drift so joined pieces meet exactly.
		p := Point{Lat: math.Round(c[0]*1e5) / 1e5, Lon: math.Round(c[1]*1e5) / 1e5}
		if math.IsNaN(p.Lat) || math.IsNaN(p.Lon) || math.Abs(p.Lat) > 90 || math.Abs(p.Lon) > 180 {
			return nil, fmt.Errorf("osrm route: geometry point (%v, %v) out of range", p.Lat, p.Lon)
		}
		out = append(out, p)
	}
	return out, nil
}

// Route returns the road geometry of a path through the given points, in
// order (for a vehicle: depot, stops, depot), decoded from OSRM's
// polyline (precision 5). Paths longer than MaxRouteSize are asked for in
// pieces that share their end points; the pieces are joined without
// repeating the shared point. It is the Geometry of the Matrix that OSRM
// returns. Errors are *OSRMError (for example NoRoute), or wrap
// ErrUnavailable when the server cannot be reached; callers can fall back
// to straight legs.
func (o *OSRM) Route(ctx context.Context, path []Point) ([]Point, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := checkPoints(path); err != nil {
		return nil, err
	}
	if len(path) < 2 {
		return slices.Clone(path), nil
	}
	size := o.routeSize()
	var out []Point
	for start := 0; start < len(path)-1; start += size - 1 {
		end := min(start+size, len(path))
		u := o.serviceURL("route", path[start:end], url.Values{
			"overview":   {"full"},
			"geometries": {"polyline"},
			"steps":      {"false"},
		})
		var piece []Point
		err := o.do(ctx, "route", u, fmt.Sprintf("points %d-%d", start, end-1), func(body []byte) error {
			var err error
			piece, err = decodeRoute(body)
			return err
		})
		if err != nil {
			var oe *OSRMError
			if errors.As(err, &oe) && oe.Point >= 0 {
				oe.Point += start
			}
			return nil, err
		}
		if len(out) > 0 && len(piece) > 0 && piece[0] == out[len(out)-1] {
			piece = piece[1:]
		}
		out = append(out, piece...)
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// HTTP with retries.

var pointInMessage = regexp.MustCompile(`coordinate (\d+)`)

// retrier is the retry policy of one service's requests.
func (o *OSRM) retrier(service string) *httpkit.Retrier {
	base := o.Backoff
	if base <= 0 {
		base = DefaultOSRMBackoff
	}
	return &httpkit.Retrier{
		Service:    "osrm " + service,
		Attempts:   o.attempts(),
		MinBackoff: base,
		MaxBackoff: maxOSRMBackoff,
	}
}

// do GETs u until decode accepts the body, retrying what is worth retrying.
func (o *OSRM) do(ctx context.Context, service, u, desc string, decode func([]byte) error) error {
	err := o.retrier(service).Do(ctx, func(ctx context.Context, _ int) error {
		err := o.attempt(ctx, service, u, decode)
		if o.OnRequest != nil {
			o.OnRequest(service, err)
		}
		return err
	})
	var re *httpkit.RetryError
	if errors.As(err, &re) {
		return fmt.Errorf("%w: %w (%s)", ErrUnavailable, err, desc)
	}
	return err
}

// attempt sends one request; a failure worth retrying is an
// *httpkit.AttemptError.
func (o *OSRM) attempt(ctx context.Context, service, u string, decode func([]byte) error) error {
	header := http.Header{"Accept": {"application/json"}, "User-Agent": {orDefault(o.UserAgent, "routeopt")}}
	resp, err := httpkit.Get(ctx, o.client(), u, header, o.timeout(), maxOSRMBody)
	if err != nil {
		if errors.Is(err, httpkit.ErrTooLarge) {
			return fmt.Errorf("%w: osrm %s: %w", ErrUnavailable, service, err)
		}
		return err
	}
	if httpkit.Transient(resp.Status) {
		return httpkit.RetryStatus(resp, fmt.Errorf("osrm %s: HTTP %d: %s", service, resp.Status, snippet(resp.Body)), time.Now())
	}
	var envelope struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(resp.Body, &envelope); err != nil || envelope.Code == "" {
		// Not OSRM talking: a proxy's error page or a wrong BaseURL.
		return fmt.Errorf("%w: osrm %s: HTTP %d without an OSRM answer: %s", ErrUnavailable, service, resp.Status, snippet(resp.Body))
	}
	if envelope.Code != "Ok" {
		oe := &OSRMError{Service: service, Code: envelope.Code, Message: envelope.Message, HTTPStatus: resp.Status, Point: -1}
		if m := pointInMessage.FindStringSubmatch(envelope.Message); m != nil {
			if p, err := strconv.Atoi(m[1]); err == nil {
				oe.Point = p
			}
		}
		return oe
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("%w: osrm %s: HTTP %d with code Ok", ErrUnavailable, service, resp.Status)
	}
	return decode(resp.Body)
}

func snippet(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) > 200 {
		body = append(body[:200:200], "..."...)
	}
	return strconv.Quote(string(body))
}
