package geocode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Places in Nominatim's jsonv2 /search format, as the public server answers
// (shapes copied from real answers; ids and importance are illustrative).
const (
	licence = `Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright`

	// An address point: Unter den Linden 77, Berlin.
	placeHouse = `{"place_id":131548218,"licence":"` + licence + `","osm_type":"node","osm_id":2445567870,"lat":"52.5166049","lon":"13.3801931","category":"place","type":"house","place_rank":30,"importance":0.00000999999999995449,"addresstype":"place","name":"","display_name":"77, Unter den Linden, Mitte, Berlin, 10117, Deutschland","boundingbox":["52.5165549","52.5166549","13.3801431","13.3802431"]}`
	// A point of interest.
	placePOI = `{"place_id":131857567,"licence":"` + licence + `","osm_type":"way","osm_id":518071791,"lat":"52.5162699","lon":"13.3777034","category":"tourism","type":"attraction","place_rank":30,"importance":0.6205056914755075,"addresstype":"tourism","name":"Brandenburger Tor","display_name":"Brandenburger Tor, Pariser Platz, Mitte, Berlin, 10117, Deutschland","boundingbox":["52.5161167","52.5164167","13.3775003","13.3778765"]}`
	// A whole street.
	placeStreet = `{"place_id":130803413,"licence":"` + licence + `","osm_type":"way","osm_id":4045102,"lat":"52.5173885","lon":"13.3887508","category":"highway","type":"primary","place_rank":26,"importance":0.1767150924856493,"addresstype":"road","name":"Unter den Linden","display_name":"Unter den Linden, Mitte, Berlin, 10117, Deutschland","boundingbox":["52.5165289","52.5179386","13.3795052","13.3965779"]}`
	// A postcode area.
	placePostcode = `{"place_id":129512345,"licence":"` + licence + `","osm_type":"relation","osm_id":1393715,"lat":"52.5185631","lon":"13.3858547","category":"boundary","type":"postal_code","place_rank":21,"importance":0.12000999999999995,"addresstype":"postcode","name":"10117","display_name":"10117, Mitte, Berlin, Deutschland","boundingbox":["52.5036942","52.5234498","13.3669946","13.4048734"]}`
	// A city.
	placeCity = `{"place_id":132102478,"licence":"` + licence + `","osm_type":"relation","osm_id":62369,"lat":"52.4009309","lon":"13.0591397","category":"boundary","type":"administrative","place_rank":16,"importance":0.6517606046170354,"addresstype":"city","name":"Potsdam","display_name":"Potsdam, Brandenburg, Deutschland","boundingbox":["52.3420411","52.5146122","12.8867630","13.1681984"]}`
)

// fakeNominatim is an httptest Nominatim /search endpoint. Each request is
// answered by the next entry of script, then by def. It counts requests and
// the most requests in flight at once, and records every query.
type fakeNominatim struct {
	srv *httptest.Server

	mu      sync.Mutex
	script  []http.HandlerFunc
	def     http.HandlerFunc
	queries []url.Values
	agents  []string
	paths   []string

	count, inflight, maxInflight atomic.Int64
	release                      chan struct{} // closed on cleanup, ends slow handlers
}

func newFake(t *testing.T, def http.HandlerFunc, script ...http.HandlerFunc) *fakeNominatim {
	t.Helper()
	f := &fakeNominatim{script: script, def: def, release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		close(f.release)
		f.srv.Close()
	})
	return f
}

func (f *fakeNominatim) serve(w http.ResponseWriter, r *http.Request) {
	in := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxInflight.Load()
		if in <= m || f.maxInflight.CompareAndSwap(m, in) {
			break
		}
	}
	f.count.Add(1)
	f.mu.Lock()
	f.queries = append(f.queries, r.URL.Query())
	f.agents = append(f.agents, r.Header.Get("User-Agent"))
	f.paths = append(f.paths, r.URL.Path)
	h := f.def
	if len(f.script) > 0 {
		h, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	h(w, r)
}

func (f *fakeNominatim) lastQuery() url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[len(f.queries)-1]
}

// answer writes a 200 jsonv2 answer with the given places.
func answer(places ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = fmt.Fprintf(w, "[%s]", strings.Join(places, ","))
	}
}

// status writes an error status with a body and headers (key, value pairs).
func status(code int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// slow answers only when the client gives up or the test ends.
func (f *fakeNominatim) slow(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.release:
	}
}

// fakeClock is a clock advanced only by the client's sleeps.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// newClient returns a client of f with no rate limit, fast backoff and a
// fake clock, unless opts says otherwise.
func newClient(t *testing.T, f *fakeNominatim, opts NominatimOptions) (*Nominatim, *fakeClock) {
	t.Helper()
	opts.BaseURL = f.srv.URL
	if opts.RatePerSecond == 0 {
		opts.RatePerSecond = -1
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff = time.Millisecond
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 10 * time.Second
	}
	n, err := NewNominatim(opts)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Now()} // starts at the real time, for context deadlines
	n.sleep, n.now = clock.Sleep, clock.Now
	return n, clock
}

var house = Query{Address: "Unter den Linden 77", City: "Berlin", PostalCode: "10117", Country: "Germany"}

func TestNominatimAnswers(t *testing.T) {
	tests := []struct {
		name      string
		q         Query
		answer    http.HandlerFunc
		found     bool
		lat, lon  float64
		approx    bool
		wantError bool
	}{
		{name: "house", q: house, answer: answer(placeHouse), found: true, lat: 52.5166049, lon: 13.3801931},
		{name: "point of interest", q: Query{Address: "Brandenburger Tor, Berlin"}, answer: answer(placePOI), found: true, lat: 52.5162699, lon: 13.3777034},
		{name: "street, no house number asked", q: Query{Address: "Unter den Linden", City: "Berlin"}, answer: answer(placeStreet), found: true, lat: 52.5173885, lon: 13.3887508},
		{name: "street for a house number", q: house, answer: answer(placeStreet), found: true, lat: 52.5173885, lon: 13.3887508, approx: true},
		{name: "postcode", q: Query{PostalCode: "10117", Country: "DE"}, answer: answer(placePostcode), found: true, lat: 52.5185631, lon: 13.3858547, approx: true},
		{name: "city", q: Query{Address: "Nowhere Street 1", City: "Potsdam"}, answer: answer(placeCity), found: true, lat: 52.4009309, lon: 13.0591397, approx: true},
		{name: "first of several", q: house, answer: answer(placeHouse, placeStreet), found: true, lat: 52.5166049, lon: 13.3801931},
		{name: "not found", q: house, answer: answer(), found: false},
		{name: "numbers for coordinates", q: house, answer: answer(`{"place_id":1,"lat":52.5,"lon":13.25,"category":"building","type":"yes","place_rank":30,"addresstype":"building"}`), found: true, lat: 52.5, lon: 13.25},
		{name: "latitude out of range", q: house, answer: answer(`{"place_id":1,"lat":"91","lon":"13","place_rank":30}`), wantError: true},
		{name: "latitude not a number", q: house, answer: answer(`{"place_id":1,"lat":"north","lon":"13","place_rank":30}`), wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.answer)
			n, _ := newClient(t, f, NominatimOptions{})
			res, found, err := n.Geocode(context.Background(), tt.q)
			if tt.wantError {
				if err == nil || errors.Is(err, ErrUnavailable) {
					t.Fatalf("err = %v, want a per-query error (not unavailable)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if found != tt.found {
				t.Fatalf("found = %v, want %v", found, tt.found)
			}
			want := Result{Lat: tt.lat, Lon: tt.lon, Approximate: tt.approx}
			if found && res != want {
				t.Fatalf("result = %+v, want %+v", res, want)
			}
			if got := f.count.Load(); got != 1 {
				t.Fatalf("%d requests, want 1", got)
			}
		})
	}
}

func TestNominatimRequest(t *testing.T) {
	base := map[string]string{"format": "jsonv2", "limit": "1", "addressdetails": "0"}
	tests := []struct {
		name string
		q    Query
		want map[string]string
	}{
		{
			name: "structured",
			q:    Query{Address: " Unter den  Linden 77 ", City: "Berlin", Region: "Berlin", PostalCode: "10117", Country: "Germany"},
			want: map[string]string{"street": "Unter den Linden 77", "city": "Berlin", "state": "Berlin", "postalcode": "10117", "country": "Germany"},
		},
		{
			name: "country code becomes countrycodes",
			q:    Query{Address: "Unter den Linden 77", City: "Berlin", Country: "DE"},
			want: map[string]string{"street": "Unter den Linden 77", "city": "Berlin", "countrycodes": "de"},
		},
		{
			name: "address line only is free-form",
			q:    Query{Address: "Unter den Linden 77, 10117 Berlin"},
			want: map[string]string{"q": "Unter den Linden 77, 10117 Berlin"},
		},
		{
			name: "address line and country code stay free-form",
			q:    Query{Address: "Unter den Linden 77, Berlin", Country: "de"},
			want: map[string]string{"q": "Unter den Linden 77, Berlin", "countrycodes": "de"},
		},
		{
			name: "no street",
			q:    Query{City: "Potsdam", Region: "Brandenburg"},
			want: map[string]string{"city": "Potsdam", "state": "Brandenburg"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, answer(placeHouse))
			n, _ := newClient(t, f, NominatimOptions{})
			if _, _, err := n.Geocode(context.Background(), tt.q); err != nil {
				t.Fatal(err)
			}
			got := f.lastQuery()
			want := map[string]string{}
			for k, v := range base {
				want[k] = v
			}
			for k, v := range tt.want {
				want[k] = v
			}
			if len(got) != len(want) {
				t.Errorf("sent %v, want %v", got, want)
			}
			for k, v := range want {
				if got.Get(k) != v || len(got[k]) != 1 {
					t.Errorf("%s = %q, want %q (sent %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestNominatimHeadersAndBaseURL(t *testing.T) {
	f := newFake(t, answer(placeHouse))
	// A base URL with a path prefix and a trailing slash.
	n, err := NewNominatim(NominatimOptions{BaseURL: f.srv.URL + "/nominatim/", Email: "ops@example.com", RatePerSecond: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Geocode(context.Background(), house); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	path, agent := f.paths[0], f.agents[0]
	f.mu.Unlock()
	if path != "/nominatim/search" {
		t.Errorf("path = %q, want /nominatim/search", path)
	}
	if agent != DefaultUserAgent || !strings.Contains(agent, "routeopt") {
		t.Errorf("User-Agent = %q, want %q", agent, DefaultUserAgent)
	}
	if got := f.lastQuery().Get("email"); got != "ops@example.com" {
		t.Errorf("email = %q", got)
	}

	n2, _ := newClient(t, f, NominatimOptions{UserAgent: "acme-routing/2.1 (ops@acme.example)"})
	if _, _, err := n2.Geocode(context.Background(), house); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	agent = f.agents[1]
	f.mu.Unlock()
	if agent != "acme-routing/2.1 (ops@acme.example)" {
		t.Errorf("User-Agent = %q", agent)
	}
	if f.lastQuery().Has("email") {
		t.Errorf("email sent without being configured")
	}
}

func TestNewNominatimOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts NominatimOptions
		ok   bool
	}{
		{"no base URL", NominatimOptions{}, false},
		{"not http", NominatimOptions{BaseURL: "ftp://example.com"}, false},
		{"no host", NominatimOptions{BaseURL: "http://"}, false},
		{"self-hosted, fast", NominatimOptions{BaseURL: "http://nominatim:8080", RatePerSecond: 50, MaxConcurrent: 8}, true},
		{"public, default rate", NominatimOptions{BaseURL: PublicNominatimURL}, true},
		{"public, too fast", NominatimOptions{BaseURL: PublicNominatimURL, RatePerSecond: 5}, false},
		{"public, unlimited", NominatimOptions{BaseURL: PublicNominatimURL + "/", RatePerSecond: -1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewNominatim(tt.opts)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestNominatimEmptyQuery(t *testing.T) {
	f := newFake(t, answer(placeHouse))
	n, _ := newClient(t, f, NominatimOptions{})
	_, found, err := n.Geocode(context.Background(), Query{Address: "  ", City: "\t"})
	if !errors.Is(err, ErrEmptyQuery) || found || errors.Is(err, ErrUnavailable) {
		t.Fatalf("found=%v err=%v, want ErrEmptyQuery", found, err)
	}
	if f.count.Load() != 0 {
		t.Fatal("an empty query was sent")
	}
}

func TestNominatimFailures(t *testing.T) {
	const retries = 2
	tests := []struct {
		name        string
		script      []http.HandlerFunc
		def         http.HandlerFunc
		found       bool
		unavailable bool // the error wraps ErrUnavailable
		otherError  bool // an error that does not
		status      int  // the *StatusError's code, when one is expected
		requests    int64
		minSleep    time.Duration // at least one sleep this long (Retry-After)
	}{
		{name: "503 then found", script: []http.HandlerFunc{status(503, "busy")}, def: answer(placeHouse), found: true, requests: 2},
		{name: "500 then 502 then not found", script: []http.HandlerFunc{status(500, ""), status(502, "<html>bad gateway</html>")}, def: answer(), requests: 3},
		{name: "5xx persists", def: status(503, "Service Unavailable"), unavailable: true, status: 503, requests: retries + 1},
		{name: "500 persists", def: status(500, `{"error":{"code":500,"message":"Internal Server Error"}}`), unavailable: true, status: 500, requests: retries + 1},
		{
			name:     "429 honours Retry-After",
			script:   []http.HandlerFunc{status(429, `{"error":{"code":429,"message":"Too Many Requests"}}`, "Retry-After", "3")},
			def:      answer(placeHouse),
			found:    true,
			requests: 2, minSleep: 3 * time.Second,
		},
		{name: "429 persists", def: status(429, "slow down", "Retry-After", "1"), unavailable: true, status: 429, requests: retries + 1, minSleep: time.Second},
		{name: "429 asks too long a wait", def: status(429, "", "Retry-After", "3600"), unavailable: true, status: 429, requests: 1},
		{name: "400 is the query's fault", def: status(400, `{"error":{"code":400,"message":"Structured query parameters(amenity, street, city, county, state, postalcode, country) cannot be used together with 'q' parameter."}}`), otherError: true, status: 400, requests: 1},
		{name: "403 blocked", def: status(403, "<html><body>Access blocked</body></html>"), otherError: true, status: 403, requests: 1},
		{name: "404", def: status(404, "Not Found"), otherError: true, status: 404, requests: 1},
		{name: "200 with HTML", def: status(200, "<html>captive portal</html>"), unavailable: true, requests: 1},
		{name: "200 with an error object", def: status(200, `{"error":"Unable to connect to database"}`), unavailable: true, requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.def, tt.script...)
			var attempts atomic.Int64
			n, clock := newClient(t, f, NominatimOptions{MaxRetries: retries, OnRequest: func(RequestInfo) { attempts.Add(1) }})
			_, found, err := n.Geocode(context.Background(), house)
			switch {
			case tt.unavailable:
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("err = %v, want ErrUnavailable", err)
				}
			case tt.otherError:
				if err == nil || errors.Is(err, ErrUnavailable) {
					t.Fatalf("err = %v, want an error that is not ErrUnavailable", err)
				}
			default:
				if err != nil || found != tt.found {
					t.Fatalf("found=%v err=%v, want found=%v", found, err, tt.found)
				}
			}
			if tt.status != 0 {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != tt.status {
					t.Fatalf("err = %v, want a *StatusError %d", err, tt.status)
				}
			}
			if got := f.count.Load(); got != tt.requests {
				t.Fatalf("%d requests, want %d", got, tt.requests)
			}
			if got := attempts.Load(); got != tt.requests {
				t.Fatalf("OnRequest called %d times, want %d", got, tt.requests)
			}
			if tt.minSleep > 0 {
				clock.mu.Lock()
				sleeps := clock.sleeps
				clock.mu.Unlock()
				longest := time.Duration(0)
				for _, d := range sleeps {
					longest = max(longest, d)
				}
				if longest < tt.minSleep {
					t.Fatalf("sleeps %v, want one of at least %s", sleeps, tt.minSleep)
				}
			}
		})
	}
}

func TestNominatimNetworkError(t *testing.T) {
	f := newFake(t, answer(placeHouse))
	n, _ := newClient(t, f, NominatimOptions{MaxRetries: 2, Email: "secret@example.com"})
	f.srv.Close() // connection refused from now on
	_, _, err := n.Geocode(context.Background(), house)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "secret@example.com") || strings.Contains(err.Error(), "street=") {
		t.Fatalf("the error leaks the request URL: %v", err)
	}
}

func TestNominatimTimeout(t *testing.T) {
	f := newFake(t, nil)
	f.def = f.slow
	n, _ := newClient(t, f, NominatimOptions{Timeout: 30 * time.Millisecond, MaxRetries: 1})
	_, _, err := n.Geocode(context.Background(), house)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("err = %v, want ErrUnavailable after timeouts", err)
	}
	if got := f.count.Load(); got != 2 {
		t.Fatalf("%d requests, want 2", got)
	}

	// A slow first answer, then a fast one: the retry succeeds.
	f2 := newFake(t, answer(placeHouse), nil)
	f2.script[0] = f2.slow
	n2, _ := newClient(t, f2, NominatimOptions{Timeout: 30 * time.Millisecond, MaxRetries: 1})
	if _, found, err := n2.Geocode(context.Background(), house); err != nil || !found {
		t.Fatalf("found=%v err=%v, want found", found, err)
	}
}

func TestNominatimCallerContext(t *testing.T) {
	f := newFake(t, nil)
	f.def = f.slow
	n, _ := newClient(t, f, NominatimOptions{Timeout: 10 * time.Second})

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for f.count.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, _, err := n.Geocode(ctx, house)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want context.Canceled and not ErrUnavailable", err)
	}

	// A deadline too close for the backoff ends the retries at once.
	f2 := newFake(t, status(503, ""))
	n2, clock := newClient(t, f2, NominatimOptions{MinBackoff: time.Hour, MaxBackoff: time.Hour})
	ctx2, cancel2 := context.WithDeadline(context.Background(), clock.Now().Add(time.Minute))
	defer cancel2()
	_, _, err = n2.Geocode(ctx2, house)
	if !errors.Is(err, ErrUnavailable) || f2.count.Load() != 1 {
		t.Fatalf("err = %v after %d requests, want ErrUnavailable after 1", err, f2.count.Load())
	}
}

// TestNominatimRateLimit counts the requests the fake server saw and checks
// only a lower bound on the time: N requests at rate r (burst 1) cannot
// finish in less than (N-1)/r.
func TestNominatimRateLimit(t *testing.T) {
	const (
		perSecond = 50.0
		requests  = 11
	)
	f := newFake(t, answer(placeHouse))
	n, err := NewNominatim(NominatimOptions{BaseURL: f.srv.URL, RatePerSecond: perSecond, MaxConcurrent: 4})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for i := range requests {
		wg.Go(func() {
			_, _, err := n.Geocode(context.Background(), Query{Address: fmt.Sprintf("Unter den Linden %d", i), City: "Berlin"})
			errs <- err
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := f.count.Load(); got != requests {
		t.Fatalf("%d requests, want %d", got, requests)
	}
	if least := time.Duration(float64(requests-1) / perSecond * float64(time.Second)); elapsed < least {
		t.Fatalf("%d requests at %g/s took %s, want at least %s", requests, perSecond, elapsed, least)
	}
}

func TestNominatimConcurrency(t *testing.T) {
	const limit = 3
	gate := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		answer(placeHouse)(w, r)
	})
	n, _ := newClient(t, f, NominatimOptions{MaxConcurrent: limit})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, _, err := n.Geocode(context.Background(), house); err != nil {
				t.Error(err)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.inflight.Load() < limit && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := f.inflight.Load(); got != limit {
		t.Fatalf("%d requests in flight, want %d", got, limit)
	}
	close(gate)
	wg.Wait()
	if got := f.maxInflight.Load(); got > limit {
		t.Fatalf("%d requests were in flight at once, limit %d", got, limit)
	}
	if got := f.count.Load(); got != 10 {
		t.Fatalf("%d requests, want 10", got)
	}
}

func TestApproximateRule(t *testing.T) {
	tests := []struct {
		name            string
		rank            int
		category, typ   string
		addressType     string
		askedNumber     bool
		wantApproximate bool
	}{
		{"house", 30, "place", "house", "place", true, false},
		{"building", 30, "building", "yes", "building", true, false},
		{"shop", 30, "shop", "supermarket", "shop", false, false},
		{"street, no number asked", 26, "highway", "residential", "road", false, false},
		{"street, number asked", 26, "highway", "residential", "road", true, true},
		{"minor street, number asked", 27, "highway", "service", "road", true, true},
		{"postcode", 21, "place", "postcode", "postcode", false, true},
		{"postcode by type only", 30, "place", "postcode", "", false, true},
		{"suburb", 20, "boundary", "administrative", "suburb", false, true},
		{"city", 16, "place", "city", "city", false, true},
		{"village with a high rank", 26, "place", "village", "village", false, true},
		{"country", 4, "boundary", "administrative", "country", false, true},
		{"boundary with a high rank", 28, "boundary", "administrative", "", false, true},
		{"no rank", 0, "place", "house", "place", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := nominatimPlace{PlaceRank: flexInt(tt.rank), Category: tt.category, Type: tt.typ, AddressType: tt.addressType}
			if got := p.approximate(tt.askedNumber); got != tt.wantApproximate {
				t.Fatalf("approximate = %v, want %v", got, tt.wantApproximate)
			}
		})
	}
}

func TestParseNominatim(t *testing.T) {
	for _, tt := range []struct {
		body   string
		places int
		ok     bool
	}{
		{"[]", 0, true},
		{" [ ] \n", 0, true},
		{"[" + placeHouse + "," + placeStreet + "]", 2, true},
		{`[{"place_id":1,"lat":"1","lon":"2","place_rank":"30"}]`, 1, true},
		{"", 0, false},
		{"null", 0, false},
		{"{}", 0, false},
		{`{"error":{"code":400,"message":"bad"}}`, 0, false},
		{"<html></html>", 0, false},
		{`[{"lat":{}}]`, 0, false},
		{`[{"place_rank":"high"}]`, 0, false},
	} {
		places, err := parseNominatim([]byte(tt.body))
		if (err == nil) != tt.ok || len(places) != tt.places {
			t.Errorf("parseNominatim(%.40q) = %d places, %v; want %d, ok=%v", tt.body, len(places), err, tt.places, tt.ok)
		}
	}
}

func FuzzParseNominatim(f *testing.F) {
	for _, seed := range []string{
		"[]", "[" + placeHouse + "]", "[" + placeStreet + "," + placeCity + "]", "[" + placePostcode + "]",
		`[{"lat":1e400,"lon":"-0","place_rank":1e10}]`, `{"error":"x"}`, "null", `[null]`, `[{"lat":"NaN","lon":"Inf"}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// What a failed answer says goes into error messages: one line,
		// at most 200 bytes and an ellipsis.
		if msg := errorMessage(body); len(msg) > 200+len("…") || strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("error message %q", msg)
		}
		places, err := parseNominatim(body)
		if err != nil {
			return
		}
		for _, p := range places {
			lat, lon, err := p.coordinates()
			if err == nil && (lat < -90 || lat > 90 || lon < -180 || lon > 180 || math.IsNaN(lat) || math.IsNaN(lon)) {
				t.Fatalf("coordinates out of range: %v %v", lat, lon)
			}
			if p.approximate(false) && !p.approximate(true) {
				t.Fatalf("%+v is approximate without a house number asked for, exact with one", p)
			}
		}
	})
}
