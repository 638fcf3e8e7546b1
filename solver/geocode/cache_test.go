package geocode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stubGeocoder answers from a map keyed by Query.Key, counting calls; err,
// when set, is returned instead (once, if once is set).
type stubGeocoder struct {
	mu      sync.Mutex
	places  map[string]Result
	err     error
	once    bool
	calls   atomic.Int64
	gate    chan struct{} // when set, calls wait for it
	entered chan struct{} // when set, told about each call
}

func (s *stubGeocoder) Geocode(ctx context.Context, q Query) (Result, bool, error) {
	s.calls.Add(1)
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return Result{}, false, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		err := s.err
		if s.once {
			s.err = nil
		}
		return Result{}, false, err
	}
	r, ok := s.places[q.Key()]
	return r, ok, nil
}

// memStore is a Store in memory.
type memStore struct {
	mu      sync.Mutex
	entries map[string]Entry
}

func newMemStore() *memStore { return &memStore{entries: map[string]Entry{}} }

func (m *memStore) Get(_ context.Context, key string) (Entry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	return e, ok, nil
}

func (m *memStore) Put(_ context.Context, key string, e Entry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries[key] = e
	return nil
}

func (m *memStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

var (
	berlinQ = Query{Address: "Unter den Linden 77", City: "Berlin"}
	berlinR = Result{Lat: 52.5166049, Lon: 13.3801931}
)

func newStub() *stubGeocoder {
	return &stubGeocoder{places: map[string]Result{berlinQ.Key(): berlinR}}
}

func TestQueryKey(t *testing.T) {
	for _, tt := range []struct {
		a, b Query
		same bool
	}{
		{Query{Address: "Unter den Linden 77", City: "Berlin"}, Query{Address: "  unter DEN   linden\t77 ", City: "BERLIN "}, true},
		{Query{Address: "Straße 1"}, Query{Address: "STRASSE 1"}, false},
		{Query{Address: "ÄUSSERE 1"}, Query{Address: "äussere 1"}, true},
		{Query{Address: "Main St 1, Springfield"}, Query{Address: "Main St 1", City: "Springfield"}, false},
		{Query{City: "Berlin"}, Query{Region: "Berlin"}, false},
		{Query{Address: "a|b"}, Query{Address: "a", City: "b"}, false},
	} {
		if got := tt.a.Key() == tt.b.Key(); got != tt.same {
			t.Errorf("%q vs %q: same key = %v, want %v", tt.a.Key(), tt.b.Key(), got, tt.same)
		}
	}
	if got, want := (Query{Address: " Unter  den Linden 77 ", PostalCode: "10117", Country: "DE"}).Key(), "unter den linden 77|||10117|de"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func TestCachedHitsAndMisses(t *testing.T) {
	stub := newStub()
	store := newMemStore()
	c := &Cached{Next: stub, Store: store, Tenant: "acme"}
	ctx := context.Background()

	for i, q := range []Query{berlinQ, {Address: " unter den LINDEN 77", City: "berlin"}, berlinQ} {
		res, found, err := c.Geocode(ctx, q)
		if err != nil || !found || res != berlinR {
			t.Fatalf("call %d: %+v %v %v", i, res, found, err)
		}
	}
	if got := stub.calls.Load(); got != 1 {
		t.Fatalf("Next called %d times, want 1", got)
	}

	// Not found is cached too.
	nowhere := Query{Address: "Nowhere 1"}
	for range 3 {
		if _, found, err := c.Geocode(ctx, nowhere); err != nil || found {
			t.Fatalf("found=%v err=%v, want not found", found, err)
		}
	}
	if got := stub.calls.Load(); got != 2 {
		t.Fatalf("Next called %d times, want 2", got)
	}

	// Another tenant asks for itself.
	globex := &Cached{Next: stub, Store: store, Tenant: "globex"}
	if _, _, err := globex.Geocode(ctx, berlinQ); err != nil {
		t.Fatal(err)
	}
	if got := stub.calls.Load(); got != 3 {
		t.Fatalf("Next called %d times, want 3 (tenants do not share entries)", got)
	}
	if _, ok, _ := store.Get(ctx, CacheKey("acme", berlinQ)); !ok {
		t.Fatal("no entry under the acme key")
	}

	// Another cache of the same tenant over the same store reuses its entries.
	globexAgain := &Cached{Next: stub, Store: store, Tenant: "globex"}
	if _, _, err := globexAgain.Geocode(ctx, berlinQ); err != nil {
		t.Fatal(err)
	}
	if got := stub.calls.Load(); got != 3 {
		t.Fatalf("Next called %d times, want 3 (globex's entry reused)", got)
	}
}

func TestCachedNeverCachesErrors(t *testing.T) {
	for _, e := range []error{ErrUnavailable, fmt.Errorf("nominatim: %w", &StatusError{StatusCode: 400}), ErrNotConfigured, context.DeadlineExceeded} {
		stub := newStub()
		stub.err, stub.once = e, true
		store := newMemStore()
		c := &Cached{Next: stub, Store: store}
		if _, _, err := c.Geocode(context.Background(), berlinQ); !errors.Is(err, e) {
			t.Fatalf("err = %v, want %v", err, e)
		}
		if store.Len() != 0 {
			t.Fatalf("%v was cached", e)
		}
		if res, found, err := c.Geocode(context.Background(), berlinQ); err != nil || !found || res != berlinR {
			t.Fatalf("after %v: %+v %v %v", e, res, found, err)
		}
		if got := stub.calls.Load(); got != 2 {
			t.Fatalf("Next called %d times, want 2", got)
		}
	}
}

func TestCachedTTL(t *testing.T) {
	now := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		ttl, negTTL time.Duration
		q           Query
		after       time.Duration
		asksAgain   bool
	}{
		{"default TTL, 29 days", 0, 0, berlinQ, 29 * 24 * time.Hour, false},
		{"default TTL, 30 days", 0, 0, berlinQ, 30 * 24 * time.Hour, true},
		{"short TTL", time.Hour, 0, berlinQ, 2 * time.Hour, true},
		{"negative uses TTL", time.Hour, 0, Query{Address: "Nowhere 1"}, 30 * time.Minute, false},
		{"negative TTL", 0, time.Hour, Query{Address: "Nowhere 1"}, 2 * time.Hour, true},
		{"negative TTL spares positives", 0, time.Hour, berlinQ, 2 * time.Hour, false},
		{"clock went far back", 0, 0, berlinQ, -2 * time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stub := newStub()
			clock := now
			c := &Cached{Next: stub, Store: newMemStore(), TTL: tt.ttl, NegativeTTL: tt.negTTL, Now: func() time.Time { return clock }}
			if _, _, err := c.Geocode(context.Background(), tt.q); err != nil {
				t.Fatal(err)
			}
			clock = now.Add(tt.after)
			if _, _, err := c.Geocode(context.Background(), tt.q); err != nil {
				t.Fatal(err)
			}
			if got, want := stub.calls.Load(), map[bool]int64{false: 1, true: 2}[tt.asksAgain]; got != want {
				t.Fatalf("Next called %d times, want %d", got, want)
			}
		})
	}
}

// failingStore fails every call.
type failingStore struct{}

func (failingStore) Get(context.Context, string) (Entry, bool, error) {
	return Entry{}, false, errors.New("configmap: connection refused")
}

func (failingStore) Put(context.Context, string, Entry) error {
	return errors.New("configmap: conflict")
}

func TestCachedStoreFailures(t *testing.T) {
	stub := newStub()
	var reported atomic.Int64
	c := &Cached{Next: stub, Store: failingStore{}, OnStoreError: func(error) { reported.Add(1) }}
	for range 2 {
		if res, found, err := c.Geocode(context.Background(), berlinQ); err != nil || !found || res != berlinR {
			t.Fatalf("%+v %v %v", res, found, err)
		}
	}
	if stub.calls.Load() != 2 || reported.Load() != 4 {
		t.Fatalf("Next called %d times, %d store errors reported; want 2 and 4", stub.calls.Load(), reported.Load())
	}

	// No store: no cache.
	c2 := &Cached{Next: stub}
	if _, found, err := c2.Geocode(context.Background(), berlinQ); err != nil || !found {
		t.Fatal(found, err)
	}
}

func TestCachedEmptyQueryPassesThrough(t *testing.T) {
	store := newMemStore()
	c := &Cached{Next: None{}, Store: store}
	if _, _, err := c.Geocode(context.Background(), Query{}); !errors.Is(err, ErrNotConfigured) {
		t.Fatal(err)
	}
	if store.Len() != 0 {
		t.Fatal("an empty query was cached")
	}
}

func TestCachedSharesConcurrentCalls(t *testing.T) {
	stub := newStub()
	stub.gate = make(chan struct{})
	stub.entered = make(chan struct{}, 100)
	c := &Cached{Next: stub, Store: newMemStore()}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if res, found, err := c.Geocode(context.Background(), berlinQ); err != nil || !found || res != berlinR {
				t.Errorf("%+v %v %v", res, found, err)
			}
		})
	}
	<-stub.entered // the first caller is in Next; the others wait for it or find the entry
	close(stub.gate)
	wg.Wait()
	if got := stub.calls.Load(); got != 1 {
		t.Fatalf("Next called %d times, want 1", got)
	}
}

func TestCachedWaiterOutlivesCancelledLeader(t *testing.T) {
	stub := newStub()
	stub.gate = make(chan struct{})
	stub.entered = make(chan struct{}, 10)
	c := &Cached{Next: stub, Store: newMemStore()}

	var joins atomic.Int64
	c.joined = func() { joins.Add(1) }
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderDone := make(chan error, 1)
	go func() {
		_, _, err := c.Geocode(leaderCtx, berlinQ)
		leaderDone <- err
	}()
	<-stub.entered

	waiterDone := make(chan error, 1)
	go func() {
		res, found, err := c.Geocode(context.Background(), berlinQ)
		if err == nil && (!found || res != berlinR) {
			err = fmt.Errorf("%+v %v", res, found)
		}
		waiterDone <- err
	}()
	// The leader's flight is gated: the second caller to reach it joins it.
	for joins.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancelLeader()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v, want context.Canceled", err)
	}
	<-stub.entered // the waiter asks Next itself
	close(stub.gate)
	if err := <-waiterDone; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

// TestCachedNominatim runs the same addresses twice through the cache over
// the fake Nominatim: the second run sends no request.
func TestCachedNominatim(t *testing.T) {
	f := newFake(t, answer(placeHouse))
	n, _ := newClient(t, f, NominatimOptions{})
	c := &Cached{Next: n, Store: newMemStore(), Tenant: "acme"}
	run := func() {
		for i := range 20 {
			if _, found, err := c.Geocode(context.Background(), Query{Address: fmt.Sprintf("Unter den Linden %d", i%10), City: "Berlin"}); err != nil || !found {
				t.Fatal(found, err)
			}
		}
	}
	run()
	if got := f.count.Load(); got != 10 {
		t.Fatalf("first run: %d requests, want 10", got)
	}
	run()
	if got := f.count.Load(); got != 10 {
		t.Fatalf("second run: %d requests in all, want still 10", got)
	}
}

// lateGeocoder answers after release is closed, whatever its ctx says: an
// answer already on the wire when the caller gave up.
type lateGeocoder struct {
	entered, release chan struct{}
}

func (g *lateGeocoder) Geocode(context.Context, Query) (Result, bool, error) {
	close(g.entered)
	<-g.release
	return berlinR, true, nil
}

// A caller whose ctx ends returns at once; the answer that arrives after it
// is still stored, and Wait returns only once it is.
func TestCachedWaitOutlastsCancelledCallers(t *testing.T) {
	next := &lateGeocoder{entered: make(chan struct{}), release: make(chan struct{})}
	store := newMemStore()
	c := &Cached{Next: next, Store: store}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, _, err := c.Geocode(ctx, berlinQ)
		done <- err
	}()
	<-next.entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v, want context.Canceled", err)
	}
	time.AfterFunc(50*time.Millisecond, func() { close(next.release) })
	c.Wait()
	if store.Len() != 1 {
		t.Fatalf("Wait returned with %d answers stored, want the late one", store.Len())
	}
	c.Wait() // nothing running: returns at once
}
