package solver

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// Geocoding within budget: an installation has one geocoding rate (the
// public Nominatim allows one request a second for all of it), so the
// manager geocodes every solve through one client before its solve Job
// starts, and the Job only reads the answers (geocode.Prefetched). Before a
// request is sent, the addresses to ask are counted and the wait estimated
// at the configured rate behind the addresses other solves are still
// waiting for; a solve that would wait longer than the limit fails at once.

// DefaultGeocodeSlowAfter is the estimated wait past which a solve is told
// up front that geocoding will take a while.
const DefaultGeocodeSlowAfter = time.Minute

// NeedsGeocoding reports whether the depot or an order of spec has no
// coordinates; only then is there anything to geocode.
func NeedsGeocoding(spec *v1alpha1.OptimizationSpec) bool {
	if spec.Depot.Latitude == nil || spec.Depot.Longitude == nil {
		return true
	}
	for i := range spec.Orders {
		if spec.Orders[i].Latitude == nil || spec.Orders[i].Longitude == nil {
			return true
		}
	}
	return false
}

// EstimateGeocodeWait is how long n addresses take at rate requests per
// second behind waiting addresses already queued on the same rate; a rate
// of zero or less is unlimited. Retries and the burst are left out: the
// estimate is what the rate alone costs.
func EstimateGeocodeWait(n, waiting int, rate float64) time.Duration {
	if n <= 0 || rate <= 0 || math.IsInf(rate, 1) || math.IsNaN(rate) {
		return 0
	}
	return time.Duration(float64(n+max(waiting, 0)) / rate * float64(time.Second))
}

// GeocodeBudget is the installation's one geocoding rate, shared by every
// solve the manager geocodes. It is safe for concurrent use.
type GeocodeBudget struct {
	// Rate is the geocoder's requests per second; zero or less is unlimited.
	Rate float64
	// MaxWait is the longest estimated wait a solve is admitted with; zero
	// means no limit.
	MaxWait time.Duration
	// SlowAfter is the estimated wait past which a solve is told it will
	// take a while; zero means DefaultGeocodeSlowAfter.
	SlowAfter time.Duration

	mu      sync.Mutex
	waiting int // addresses admitted and not asked yet, over all solves
}

// Waiting is how many admitted addresses have not been asked yet.
func (b *GeocodeBudget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// admit reserves n addresses, or returns a geocoding_unavailable Failure
// when their estimated wait exceeds MaxWait (nothing is reserved then).
func (b *GeocodeBudget) admit(n int) (*GeocodeTicket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := &GeocodeTicket{Addresses: n, Waiting: b.waiting, Rate: b.Rate, Wait: EstimateGeocodeWait(n, b.waiting, b.Rate), b: b, left: n}
	if b.MaxWait > 0 && t.Wait > b.MaxWait {
		return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable,
			"%s; the limit is %s: send latitude and longitude for the orders, or raise --nominatim-rate (a Nominatim server of your own allows more) or --geocode-max-wait",
			t.describe(), roundWait(b.MaxWait))
	}
	slow := b.SlowAfter
	if slow <= 0 {
		slow = DefaultGeocodeSlowAfter
	}
	t.Slow = t.Wait > slow
	b.waiting += n
	return t, nil
}

// GeocodeTicket is one solve's admission: the addresses it will ask, what
// it waits behind and the estimate. Release it when geocoding ends.
type GeocodeTicket struct {
	// Addresses is how many distinct addresses are neither in the tenant's
	// cache nor among the solve's pending answers.
	Addresses int
	// Waiting is how many addresses of other solves were queued before it.
	Waiting int
	// Rate is the budget's rate.
	Rate float64
	// Wait is the estimate: EstimateGeocodeWait(Addresses, Waiting, Rate).
	Wait time.Duration
	// Slow is true when Wait is past the budget's SlowAfter.
	Slow bool

	b    *GeocodeBudget
	mu   sync.Mutex
	left int
}

// Message tells the estimate in words.
func (t *GeocodeTicket) Message() string { return t.describe() }

func (t *GeocodeTicket) describe() string {
	return fmt.Sprintf("%d address(es) need geocoding at %g request(s)/s, about %s with %d already waiting",
		t.Addresses, t.Rate, roundWait(t.Wait), t.Waiting)
}

// roundWait shows a wait to the second.
func roundWait(d time.Duration) time.Duration { return d.Round(time.Second) }

// asked counts one request sent for the ticket's solve.
func (t *GeocodeTicket) asked() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.left > 0 {
		t.left--
		t.b.mu.Lock()
		t.b.waiting--
		t.b.mu.Unlock()
	}
}

// Release returns the addresses the solve did not ask to the budget; it is
// safe to call more than once and on a nil ticket.
func (t *GeocodeTicket) Release() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.mu.Lock()
	t.b.waiting -= t.left
	t.b.mu.Unlock()
	t.left = 0
}

// Pipeline is p with its geocoder counting the ticket's requests down, so
// the budget's backlog shrinks as the solve's addresses are asked; a nil
// ticket gives p.
func (t *GeocodeTicket) Pipeline(p *Pipeline) *Pipeline {
	if t == nil || p.Geocoder == nil {
		return p
	}
	q := *p
	q.Geocoder = &ticketGeocoder{next: p.Geocoder, t: t}
	return &q
}

// ticketGeocoder counts the requests of one solve.
type ticketGeocoder struct {
	next geocode.Geocoder
	t    *GeocodeTicket
}

// Geocode implements geocode.Geocoder.
func (g *ticketGeocoder) Geocode(ctx context.Context, q geocode.Query) (geocode.Result, bool, error) {
	defer g.t.asked()
	return g.next.Geocode(ctx, q)
}

// AdmitGeocoding counts the addresses opt's solve would send to the
// geocoder (distinct, and not fresh in the tenant's cache or the solve's
// pending answers) and admits them on b before any is sent: the returned
// Failure (geocoding_unavailable) says, with the numbers, when they cannot
// be geocoded within b.MaxWait. It reads the Optimization from the API
// server (a cached copy may lack its orders); one cancelled or finished
// meanwhile gives context.Canceled. With no geocoder, or nothing to
// geocode, the ticket is nil.
func (p *Pipeline) AdmitGeocoding(ctx context.Context, key types.NamespacedName, b *GeocodeBudget) (*GeocodeTicket, error) {
	if b == nil || p.Geocoder == nil {
		return nil, nil
	}
	if _, none := p.Geocoder.(geocode.None); none {
		return nil, nil
	}
	opt, err := p.read(ctx, key)
	if err != nil {
		return nil, err
	}
	if !NeedsGeocoding(&opt.Spec) {
		return nil, nil
	}
	geoCache, err := store.LoadGeocodeCache(ctx, p.Client, opt)
	if err != nil {
		return nil, err
	}
	// Distinct queries, as the cache's single flight asks each once.
	keys := map[string]bool{}
	add := func(q geocode.Query) {
		if !q.Empty() {
			keys[geocode.CacheKey(opt.Namespace, q)] = true
		}
	}
	spec := &opt.Spec
	if spec.Depot.Latitude == nil || spec.Depot.Longitude == nil {
		add(geocode.Query{Address: deref(spec.Depot.Address)})
	}
	for i := range spec.Orders {
		if o := &spec.Orders[i]; o.Latitude == nil || o.Longitude == nil {
			add(orderQuery(o))
		}
	}
	ttl, now, n := p.geocodeCacheTTL(), time.Now(), 0
	for key := range keys {
		if e, ok, _ := geoCache.Get(ctx, key); !ok || now.Sub(e.Stored) >= ttl {
			n++
		}
	}
	return b.admit(n)
}

// orderQuery is the geocoding query of an order without coordinates.
func orderQuery(o *v1alpha1.Order) geocode.Query {
	return geocode.Query{Address: deref(o.Address), City: deref(o.City), Region: deref(o.Region), PostalCode: deref(o.PostalCode), Country: deref(o.Country)}
}

// Geocode runs only the geocoding phase of the named Optimization's solve:
// it reports stage geocoding, asks the geocoder for every address not
// answered yet and keeps the answers among the solve's pending answers, so
// that the solve itself (a Job with geocode.Prefetched) finds them all. It
// returns nil when every address has an answer or was refused for good
// (those orders become unassigned in the solve), ctx.Err() when cancelled,
// and a *record.Failure when the solve cannot go on (the depot cannot be
// placed, the geocoder cannot be reached).
func (p *Pipeline) Geocode(ctx context.Context, key types.NamespacedName) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = record.Failf(v1alpha1.ErrorInternal, "geocoding crashed: %v", r)
		}
	}()
	s, err := p.start(ctx, key)
	if err != nil {
		return err
	}
	if !NeedsGeocoding(&s.opt.Spec) {
		return nil
	}
	return s.runPhases(ctx, []phase{geocodingPhase})
}
