package geocode

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultCacheTTL is how long a cached answer is used: 30 days.
const DefaultCacheTTL = 30 * 24 * time.Hour

// Entry is a cached answer: a position (Found) or "no such place" (!Found).
// Errors are never cached.
type Entry struct {
	Result Result `json:"result"`
	Found  bool   `json:"found"`
	// Stored is when the answer was received; Cached compares it with its
	// TTL, so a changed TTL applies to entries already stored.
	Stored time.Time `json:"stored"`
}

// Store keeps cache entries by key (see CacheKey). Implementations must be
// safe for concurrent use. A per-tenant ConfigMap store may hash the keys:
// they contain the query's text and are not valid ConfigMap keys.
type Store interface {
	// Get returns the entry for key; ok is false when there is none.
	Get(ctx context.Context, key string) (e Entry, ok bool, err error)
	// Put stores e under key, replacing any entry.
	Put(ctx context.Context, key string, e Entry) error
}

// CacheKey is the cache key of q for tenant: tenant + "|" + q.Key().
func CacheKey(tenant string, q Query) string {
	return tenant + "|" + q.Key()
}

// Cached answers from Store when it can and asks Next otherwise, storing
// positive and negative (not found) answers for TTL; errors are never
// stored. Identical queries asked concurrently share one call to Next.
// Store failures do not fail a query: a failed Get asks Next, a failed Put
// still returns the answer; both are reported to OnStoreError.
//
// Keys are scoped by Tenant. A nil Store disables caching. Use a *Cached
// (it holds a mutex).
type Cached struct {
	Next  Geocoder
	Store Store
	// TTL is how long an answer is used; zero means DefaultCacheTTL.
	TTL time.Duration
	// NegativeTTL is how long a "not found" answer is used; zero means TTL.
	NegativeTTL time.Duration
	// Tenant scopes the keys: tenants never share entries.
	Tenant string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnStoreError, when set, is told about failed Store calls.
	OnStoreError func(err error)

	// flights shares one call to Next among identical concurrent queries.
	flights singleflight.Group
	// joined, in tests, hears each caller that waits on a flight.
	joined func()

	// running counts the flights between their start and their Put (see
	// Wait); idle is told when it reaches zero.
	mu      sync.Mutex
	running int
	idle    *sync.Cond
}

// flightAnswer is a flight's outcome.
type flightAnswer struct {
	res   Result
	found bool
}

var _ Geocoder = (*Cached)(nil)

// Geocode implements Geocoder.
func (c *Cached) Geocode(ctx context.Context, q Query) (Result, bool, error) {
	if q.Empty() || c.Store == nil {
		return c.Next.Geocode(ctx, q)
	}
	key := CacheKey(c.Tenant, q)
	if e, ok := c.lookup(ctx, key); ok {
		return e.Result, e.Found, nil
	}
	for {
		// The flight runs on the first caller's ctx; the others wait on
		// their own.
		led := false // whether this caller's function ran the flight
		ch := c.flights.DoChan(key, func() (any, error) {
			led = true
			c.begin()
			defer c.end()
			// A flight that ended since the lookup above has stored its
			// answer (a failing store was reported by that lookup).
			if e, ok, _ := c.fresh(ctx, key); ok {
				return flightAnswer{e.Result, e.Found}, nil
			}
			res, found, err := c.Next.Geocode(ctx, q)
			if err != nil {
				return flightAnswer{}, err
			}
			if !found {
				res = Result{}
			}
			// Store even when ctx has just ended: the answer is good.
			c.storeError(c.Store.Put(context.WithoutCancel(ctx), key, Entry{Result: res, Found: found, Stored: c.now()}))
			return flightAnswer{res, found}, nil
		})
		if c.joined != nil {
			c.joined()
		}
		select {
		case r := <-ch:
			// The first caller gave up on its own context: ask again.
			if !led && r.Err != nil && isContextErr(r.Err) && ctx.Err() == nil {
				continue
			}
			a, _ := r.Val.(flightAnswer)
			return a.res, a.found, r.Err
		case <-ctx.Done():
			return Result{}, false, ctx.Err()
		}
	}
}

// Wait returns once every flight that has started has ended, its answer
// stored. A caller whose ctx ends returns at once and leaves its flight
// running; an answer that arrives meanwhile is still stored, so a caller
// that saves the Store when its queries are cancelled waits first.
func (c *Cached) Wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.running > 0 {
		c.idleCond().Wait()
	}
}

func (c *Cached) begin() {
	c.mu.Lock()
	c.running++
	c.mu.Unlock()
}

func (c *Cached) end() {
	c.mu.Lock()
	if c.running--; c.running == 0 {
		c.idleCond().Broadcast()
	}
	c.mu.Unlock()
}

// idleCond is idle, made on first use; c.mu must be held.
func (c *Cached) idleCond() *sync.Cond {
	if c.idle == nil {
		c.idle = sync.NewCond(&c.mu)
	}
	return c.idle
}

// lookup returns a fresh entry for key, reporting a store that fails.
func (c *Cached) lookup(ctx context.Context, key string) (Entry, bool) {
	e, ok, err := c.fresh(ctx, key)
	if err != nil {
		c.storeError(err)
	}
	return e, ok
}

// fresh returns the entry of key when it has not expired.
func (c *Cached) fresh(ctx context.Context, key string) (Entry, bool, error) {
	e, ok, err := c.Store.Get(ctx, key)
	if err != nil || !ok {
		return Entry{}, false, err
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	if !e.Found && c.NegativeTTL > 0 {
		ttl = c.NegativeTTL
	}
	age := c.now().Sub(e.Stored)
	if age >= ttl || age < -time.Hour { // expired, or stored in the future by a bad clock
		return Entry{}, false, nil
	}
	return e, true, nil
}

func (c *Cached) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Cached) storeError(err error) {
	if err != nil && c.OnStoreError != nil {
		c.OnStoreError(err)
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
