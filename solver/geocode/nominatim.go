package geocode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/time/rate"

	"routeopt.io/routeopt/solver/httpkit"
)

// PublicNominatimURL is the OpenStreetMap Foundation's public Nominatim
// server. Its usage policy allows at most one request per second, requires an
// identifying User-Agent and forbids bulk geocoding; run your own server for
// real workloads. It is never used unless configured explicitly.
const PublicNominatimURL = "https://nominatim.openstreetmap.org"

// DefaultUserAgent identifies routeopt to Nominatim when no User-Agent is
// configured. Operators of a shared server should set their own, naming the
// deployment and a contact.
const DefaultUserAgent = "routeopt/1 (self-hosted route optimization; geocoding order addresses)"

// Defaults of NominatimOptions.
const (
	DefaultNominatimRate        = 1.0 // requests per second
	DefaultNominatimConcurrency = 1
	DefaultNominatimTimeout     = 10 * time.Second
	DefaultNominatimRetries     = 3
	DefaultNominatimMinBackoff  = 500 * time.Millisecond
	DefaultNominatimMaxBackoff  = 30 * time.Second
)

// maxResponseBytes bounds the body read from Nominatim (limit=1 answers are
// well under 2 KiB).
const maxResponseBytes = 1 << 20

// ErrEmptyQuery is returned for a query without any address field; no
// request is sent.
var ErrEmptyQuery = errors.New("empty address")

// NominatimOptions configures a Nominatim client. Only BaseURL is required.
type NominatimOptions struct {
	// BaseURL is the server, e.g. "http://nominatim.geo.svc:8080" or
	// PublicNominatimURL; "/search" is appended to its path.
	BaseURL string
	// UserAgent is sent with every request (Nominatim's usage policy
	// requires an identifying one). Empty means DefaultUserAgent.
	UserAgent string
	// Email, when set, is sent as the email parameter so the server's
	// operator can reach you.
	Email string
	// RatePerSecond bounds the requests per second over all callers,
	// retries included. Zero means DefaultNominatimRate (1/s, the public
	// server's limit); a negative value means unlimited. The public server
	// refuses more than 1.
	RatePerSecond float64
	// Burst is the rate limiter's bucket size; zero means 1.
	Burst int
	// MaxConcurrent bounds the requests in flight; zero means
	// DefaultNominatimConcurrency.
	MaxConcurrent int
	// Timeout bounds each HTTP attempt; zero means DefaultNominatimTimeout.
	Timeout time.Duration
	// MaxRetries is how often a failed attempt (network error, timeout, 429
	// or 5xx) is retried; zero means DefaultNominatimRetries, negative means
	// never.
	MaxRetries int
	// MinBackoff and MaxBackoff bound the exponential backoff (with jitter)
	// between attempts; zero means the defaults. A Retry-After header is
	// honoured when it asks for longer than the backoff; one asking for more
	// than MaxBackoff ends the retries at once.
	MinBackoff, MaxBackoff time.Duration
	// HTTPClient sends the requests; nil means a client with
	// http.DefaultTransport.
	HTTPClient *http.Client
	// OnRequest, when set, is called after every HTTP attempt (for
	// metrics). It must be safe for concurrent use.
	OnRequest func(RequestInfo)
}

// RequestInfo describes one HTTP attempt, for OnRequest.
type RequestInfo struct {
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Err is the attempt's failure, nil on success (found or not).
	Err      error
	Duration time.Duration
	// Attempt counts from 0 for the first try of a query.
	Attempt int
}

// StatusError is an HTTP answer other than 200 from Nominatim.
type StatusError struct {
	StatusCode int
	// Message is Nominatim's error message when it sent one.
	Message string
}

func (e *StatusError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
	}
	return fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// Nominatim geocodes with a Nominatim server's /search endpoint
// (format=jsonv2, limit=1). It is safe for concurrent use; the rate limit and
// concurrency bound are shared by all callers.
//
// Classification: an empty answer ([]) is found=false; a network error,
// timeout, 429 or 5xx that persists after the retries, or a 200 whose body is
// not Nominatim JSON, is an error wrapping ErrUnavailable; any other 4xx is a
// *StatusError that does not (the query was refused, not the service down).
// A cancelled or expired ctx yields an error wrapping ctx.Err().
//
// A match is Approximate when it is coarser than a street (place_rank < 26),
// names an area (addresstype city, postcode, suburb, ... or category
// boundary), or is a whole street (place_rank 26-27, addresstype road) for a
// query that asked for a house number (a digit in the street line).
type Nominatim struct {
	search    string      // base URL + "/search"
	header    http.Header // User-Agent and Accept of every request
	email     string
	client    *http.Client
	limiter   *rate.Limiter
	slots     chan struct{}
	timeout   time.Duration
	retries   int
	minB      time.Duration
	maxB      time.Duration
	onRequest func(RequestInfo)

	mu         sync.Mutex
	pauseUntil time.Time // set by a Retry-After, honoured by every caller

	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

var _ Geocoder = (*Nominatim)(nil)

// NewNominatim checks opts and returns a client.
func NewNominatim(opts NominatimOptions) (*Nominatim, error) {
	if strings.TrimSpace(opts.BaseURL) == "" {
		return nil, errors.New("nominatim: a base URL is required")
	}
	u, err := url.Parse(strings.TrimSpace(opts.BaseURL))
	if err != nil {
		return nil, fmt.Errorf("nominatim: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("nominatim: base URL %q must be http(s)://host[/path]", opts.BaseURL)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	u.RawPath = ""

	ua := strings.TrimSpace(opts.UserAgent)
	if ua == "" {
		ua = DefaultUserAgent
	}
	r := opts.RatePerSecond
	switch {
	case r == 0:
		r = DefaultNominatimRate
	case math.IsNaN(r):
		return nil, errors.New("nominatim: rate is NaN")
	}
	if strings.EqualFold(u.Hostname(), "nominatim.openstreetmap.org") && (r < 0 || r > 1) {
		return nil, fmt.Errorf("nominatim: the public server allows at most 1 request per second, not %g", r)
	}
	limit := rate.Limit(r)
	if r < 0 {
		limit = rate.Inf
	}
	burst := opts.Burst
	if burst <= 0 {
		burst = 1
	}
	conc := opts.MaxConcurrent
	if conc <= 0 {
		conc = DefaultNominatimConcurrency
	}
	n := &Nominatim{
		search:    u.String(),
		email:     strings.TrimSpace(opts.Email),
		client:    opts.HTTPClient,
		limiter:   rate.NewLimiter(limit, burst),
		slots:     make(chan struct{}, conc),
		timeout:   orDefault(opts.Timeout, DefaultNominatimTimeout),
		retries:   opts.MaxRetries,
		minB:      orDefault(opts.MinBackoff, DefaultNominatimMinBackoff),
		maxB:      orDefault(opts.MaxBackoff, DefaultNominatimMaxBackoff),
		onRequest: opts.OnRequest,
		header:    http.Header{"User-Agent": {ua}, "Accept": {"application/json"}},
		sleep:     httpkit.Sleep,
		now:       time.Now,
	}
	if n.client == nil {
		n.client = &http.Client{Transport: http.DefaultTransport}
	}
	switch {
	case n.retries == 0:
		n.retries = DefaultNominatimRetries
	case n.retries < 0:
		n.retries = 0
	}
	if n.maxB < n.minB {
		n.maxB = n.minB
	}
	return n, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Geocode implements Geocoder.
func (n *Nominatim) Geocode(ctx context.Context, q Query) (Result, bool, error) {
	if q.Empty() {
		return Result{}, false, ErrEmptyQuery
	}
	params := n.params(q)
	r := httpkit.Retrier{
		Service:             "nominatim",
		Attempts:            n.retries + 1,
		MinBackoff:          n.minB,
		MaxBackoff:          n.maxB,
		AbortLongRetryAfter: true,
		OnRetryAfter:        n.pause,
		Sleep:               n.sleep,
		Now:                 n.now,
	}
	var res Result
	var found bool
	err := r.Do(ctx, func(ctx context.Context, attempt int) error {
		var err error
		res, found, err = n.attempt(ctx, params, attempt)
		return err
	})
	var re *httpkit.RetryError
	switch {
	case err == nil:
		return res, found, nil
	case errors.As(err, &re):
		return Result{}, false, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return Result{}, false, err
}

// params builds the search parameters: structured when any field beside
// Address is set, free-form q= when only Address is. A two-letter Country
// is sent as countrycodes= (an ISO 3166-1 filter), longer ones as country=.
func (n *Nominatim) params(q Query) url.Values {
	v := url.Values{}
	v.Set("format", "jsonv2")
	v.Set("limit", "1")
	v.Set("addressdetails", "0")
	if n.email != "" {
		v.Set("email", n.email)
	}
	clean := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	addr, city, region, postal, country := clean(q.Address), clean(q.City), clean(q.Region), clean(q.PostalCode), clean(q.Country)
	if isCountryCode(country) {
		v.Set("countrycodes", strings.ToLower(country))
		country = ""
	}
	if city == "" && region == "" && postal == "" && country == "" {
		if addr != "" {
			v.Set("q", addr)
			return v
		}
	}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("street", addr)
	set("city", city)
	set("state", region)
	set("postalcode", postal)
	set("country", country)
	return v
}

func isCountryCode(s string) bool {
	if len(s) != 2 {
		return false
	}
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// attempt sends one request under the concurrency bound, the shared pause
// and the rate limit. A retryable failure is an *httpkit.AttemptError.
func (n *Nominatim) attempt(ctx context.Context, params url.Values, attempt int) (res Result, found bool, err error) {
	select {
	case n.slots <- struct{}{}:
	case <-ctx.Done():
		return Result{}, false, ctx.Err()
	}
	defer func() { <-n.slots }()
	if err := n.waitPause(ctx); err != nil {
		return Result{}, false, err
	}
	if err := n.limiter.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return Result{}, false, ctx.Err()
		}
		// The wait would outlast ctx's deadline.
		return Result{}, false, fmt.Errorf("%w: nominatim: rate limit wait exceeds the deadline", ErrUnavailable)
	}

	start := n.now()
	status := 0
	defer func() {
		if n.onRequest != nil {
			n.onRequest(RequestInfo{StatusCode: status, Err: err, Duration: n.now().Sub(start), Attempt: attempt})
		}
	}()
	resp, err := httpkit.Get(ctx, n.client, n.search+"?"+params.Encode(), n.header, n.timeout, maxResponseBytes)
	if err != nil {
		if errors.Is(err, httpkit.ErrTooLarge) {
			return Result{}, false, fmt.Errorf("%w: nominatim: %w", ErrUnavailable, err)
		}
		return Result{}, false, err
	}
	status = resp.Status
	switch {
	case resp.Status == http.StatusOK:
	case httpkit.Transient(resp.Status):
		se := &StatusError{StatusCode: resp.Status, Message: errorMessage(resp.Body)}
		return Result{}, false, httpkit.RetryStatus(resp, se, n.now())
	default:
		return Result{}, false, fmt.Errorf("nominatim: %w", &StatusError{StatusCode: resp.Status, Message: errorMessage(resp.Body)})
	}

	places, err := parseNominatim(resp.Body)
	if err != nil {
		return Result{}, false, fmt.Errorf("%w: nominatim: %w", ErrUnavailable, err)
	}
	if len(places) == 0 {
		return Result{}, false, nil
	}
	p := places[0]
	lat, lon, err := p.coordinates()
	if err != nil {
		return Result{}, false, fmt.Errorf("nominatim: place %d: %w", p.PlaceID, err)
	}
	return Result{Lat: lat, Lon: lon, Approximate: p.approximate(asksHouseNumber(params))}, true, nil
}

// pause makes every caller wait d before its next attempt.
func (n *Nominatim) pause(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if until := n.now().Add(d); until.After(n.pauseUntil) {
		n.pauseUntil = until
	}
}

func (n *Nominatim) waitPause(ctx context.Context) error {
	n.mu.Lock()
	d := n.pauseUntil.Sub(n.now())
	n.mu.Unlock()
	if d <= 0 {
		return nil
	}
	return n.sleep(ctx, d)
}

// errorMessage extracts Nominatim's {"error":{"code":..,"message":".."}} (or
// {"error":".."}) message, else a short excerpt of a plain-text body.
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return truncate(obj.Message)
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return truncate(s)
		}
	}
	s := strings.TrimSpace(string(body))
	if s == "" || strings.HasPrefix(s, "<") { // HTML error pages say nothing useful
		return ""
	}
	return truncate(s)
}

func truncate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		// Cut on a rune boundary.
		cut := 200
		for cut > 0 && !utfStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utfStart(b byte) bool { return b&0xC0 != 0x80 }

// nominatimPlace is one element of a jsonv2 /search answer, e.g.
//
//	{"place_id":132783406,"licence":"Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
//	 "osm_type":"way","osm_id":30896497,"lat":"52.5162699","lon":"13.3777034",
//	 "category":"tourism","type":"attraction","place_rank":30,"importance":0.70,
//	 "addresstype":"tourism","name":"Brandenburger Tor","display_name":"Brandenburger Tor, ...",
//	 "boundingbox":["52.5161167","52.5164167","13.3775003","13.3778765"]}
type nominatimPlace struct {
	PlaceID     int64        `json:"place_id"`
	Licence     string       `json:"licence"`
	OSMType     string       `json:"osm_type"`
	OSMID       int64        `json:"osm_id"`
	Lat         flexString   `json:"lat"`
	Lon         flexString   `json:"lon"`
	Category    string       `json:"category"`
	Type        string       `json:"type"`
	PlaceRank   flexInt      `json:"place_rank"`
	Importance  float64      `json:"importance"`
	AddressType string       `json:"addresstype"`
	Name        string       `json:"name"`
	DisplayName string       `json:"display_name"`
	BoundingBox []flexString `json:"boundingbox"`
}

// flexString accepts a JSON string or number (Nominatim sends coordinates as
// strings; be lenient with servers and proxies that send numbers).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
		return nil
	}
	var num json.Number
	if err := json.Unmarshal(b, &num); err != nil {
		return fmt.Errorf("want a string or a number, got %.20s", b)
	}
	*f = flexString(num.String())
	return nil
}

// flexInt accepts a JSON number or a numeric string (older Nominatim
// versions sent place_rank as a string).
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s == "" {
		return nil
	}
	v, err := strconv.ParseFloat(string(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < math.MinInt32 || v > math.MaxInt32 {
		return fmt.Errorf("place_rank %q is not a number", string(s))
	}
	*f = flexInt(int(v))
	return nil
}

// parseNominatim decodes a jsonv2 /search answer: a JSON array of places.
// An object with an "error" member is reported as that error.
func parseNominatim(body []byte) ([]nominatimPlace, error) {
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") {
		if msg := errorMessage(body); msg != "" {
			return nil, fmt.Errorf("server error: %s", msg)
		}
		return nil, errors.New("answer is an object, not a Nominatim result array")
	}
	var places []nominatimPlace
	if err := json.Unmarshal(body, &places); err != nil {
		return nil, fmt.Errorf("answer is not Nominatim jsonv2: %w", err)
	}
	if places == nil && trimmed != "[]" {
		return nil, errors.New("answer is not a Nominatim result array")
	}
	return places, nil
}

// coordinates parses lat and lon and checks their ranges.
func (p nominatimPlace) coordinates() (lat, lon float64, err error) {
	lat, err = strconv.ParseFloat(strings.TrimSpace(string(p.Lat)), 64)
	if err != nil || math.IsNaN(lat) || lat < -90 || lat > 90 {
		return 0, 0, fmt.Errorf("invalid latitude %q", string(p.Lat))
	}
	lon, err = strconv.ParseFloat(strings.TrimSpace(string(p.Lon)), 64)
	if err != nil || math.IsNaN(lon) || lon < -180 || lon > 180 {
		return 0, 0, fmt.Errorf("invalid longitude %q", string(p.Lon))
	}
	return lat, lon, nil
}

// coarseTypes are Nominatim addresstype/type values that name an area, not a
// spot a van can stop at.
var coarseTypes = map[string]bool{
	"continent": true, "country": true, "country_code": true, "state": true, "region": true,
	"province": true, "state_district": true, "county": true, "district": true,
	"municipality": true, "city": true, "town": true, "village": true, "hamlet": true,
	"borough": true, "suburb": true, "city_district": true, "quarter": true,
	"neighbourhood": true, "city_block": true, "postcode": true, "postal_code": true,
	"administrative": true, "locality": true, "island": true,
}

// streetTypes are addresstype values of a whole street.
var streetTypes = map[string]bool{"road": true, "street": true, "highway": true, "pedestrian": true}

// asksHouseNumber reports whether the street (or free-form) line sent
// contains a digit, i.e. probably a house number.
func asksHouseNumber(params url.Values) bool {
	line := params.Get("street")
	if line == "" {
		line = params.Get("q")
	}
	return strings.ContainsFunc(line, unicode.IsDigit)
}

// approximate is the rule that marks a Nominatim match approximate (the
// pipeline warns geocode_approximate). A match is approximate when
//
//  1. its place_rank is below 26 (missing counts as 0): coarser than a
//     street, i.e. a postcode, neighbourhood, suburb, town, city, county,
//     state or country; or
//  2. its addresstype (or, when that is empty, its type) names an area:
//     city, town, village, hamlet, suburb, quarter, neighbourhood, postcode,
//     county, state, country, administrative and the like, or its category is
//     "boundary"; or
//  3. it is a whole street (place_rank 26 or 27, or addresstype road) while
//     the query asked for a house number (askedNumber: the street or
//     free-form line contains a digit) that Nominatim did not find.
//
// Houses, buildings, shops and other points (place_rank 28 to 30) are exact,
// and so is a street when no house number was asked for.
func (p nominatimPlace) approximate(askedNumber bool) bool {
	if p.PlaceRank < 26 {
		return true
	}
	at := strings.ToLower(p.AddressType)
	if at == "" {
		at = strings.ToLower(p.Type)
	}
	if coarseTypes[at] || strings.EqualFold(p.Category, "boundary") {
		return true
	}
	return askedNumber && (p.PlaceRank <= 27 || streetTypes[at])
}
