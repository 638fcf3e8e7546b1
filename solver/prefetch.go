package solver

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// Geocoding within budget (package geobudget): the manager geocodes every
// solve through its one client before its solve Job starts, and the Job
// only reads the answers (geocode.Prefetched). AdmitGeocoding counts what a
// solve would ask, and the solve's geocoder counts its ticket down.

// NeedsGeocoding reports whether the depot, an order or a vehicle's start
// or end of spec has no coordinates; only then is there anything to
// geocode.
func NeedsGeocoding(spec *v1alpha1.OptimizationSpec) bool {
	if spec.Depot.Latitude == nil || spec.Depot.Longitude == nil {
		return true
	}
	for _, e := range endLocations(spec) {
		if _, ok := coordinates(e.loc); !ok {
			return true
		}
	}
	for i := range spec.Orders {
		if spec.Orders[i].Latitude == nil || spec.Orders[i].Longitude == nil {
			return true
		}
	}
	return false
}

// counting is p with its geocoder counting t's requests down, so the
// budget's backlog shrinks as the solve's addresses are asked; a nil
// ticket gives p.
func (p *Pipeline) counting(t *geobudget.Ticket) *Pipeline {
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
	t    *geobudget.Ticket
}

// Geocode implements geocode.Geocoder.
func (g *ticketGeocoder) Geocode(ctx context.Context, q geocode.Query) (geocode.Result, bool, error) {
	defer g.t.Asked()
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
func (p *Pipeline) AdmitGeocoding(ctx context.Context, key types.NamespacedName, b *geobudget.Budget) (*geobudget.Ticket, error) {
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
	for _, e := range endLocations(spec) {
		if _, ok := coordinates(e.loc); !ok {
			add(endQuery(e.loc))
		}
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
	return b.Admit(n)
}

// orderQuery is the geocoding query of an order without coordinates.
func orderQuery(o *v1alpha1.Order) geocode.Query {
	return geocode.Query{Address: deref(o.Address), City: deref(o.City), Region: deref(o.Region), PostalCode: deref(o.PostalCode), Country: deref(o.Country)}
}

// Geocode runs only the geocoding phase of the named Optimization's solve:
// it reports stage geocoding, asks the geocoder for every address not
// answered yet and keeps the answers among the solve's pending answers, so
// that the solve itself (a Job with geocode.Prefetched) finds them all.
// Each request counts t (the solve's admission; may be nil) down. It
// returns nil when every address has an answer or was refused for good
// (those orders become unassigned in the solve), ctx.Err() when cancelled,
// and a *record.Failure when the solve cannot go on (the depot cannot be
// placed, the geocoder cannot be reached).
func (p *Pipeline) Geocode(ctx context.Context, key types.NamespacedName, t *geobudget.Ticket) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = record.Failf(v1alpha1.ErrorInternal, "geocoding crashed: %v", r)
		}
	}()
	s, err := p.counting(t).start(ctx, key)
	if err != nil {
		return err
	}
	if !NeedsGeocoding(&s.opt.Spec) {
		return nil
	}
	return s.runPhases(ctx, []phase{geocodingPhase})
}
