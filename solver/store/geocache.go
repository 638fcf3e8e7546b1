package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geocode"
)

// GeocodeCacheConfigMap names the ConfigMap of a tenant namespace that keeps
// geocoding answers across optimizations, so an address is asked once per TTL.
const GeocodeCacheConfigMap = "routeopt-geocode-cache"

// geocodeCacheMaxBytes keeps the ConfigMap well under the 1 MiB object limit;
// the oldest answers go first.
const geocodeCacheMaxBytes = 800 << 10

// PendingGeocodesKey is the key of a solve's result ConfigMap that holds the
// geocoding answers it found and the tenant's cache does not have yet. A
// solve may write only its own ConfigMap; the controller merges these into
// the tenant's cache when the optimization ends (MergeGeocodeCache).
const PendingGeocodesKey = "geocoded.json"

// PendingRefusalsKey is the key of a solve's result ConfigMap that holds the
// addresses the geocoder refused (an HTTP 4xx: the query, not the service,
// is at fault) with the geocoder's message, by hashed key. The manager
// geocodes for a solve Job, which asks no geocoder: without these, the Job
// could only say that such an order's address "was not geocoded". They
// never reach the tenant's cache (the next solve asks again) and go when
// the answers are merged.
const PendingRefusalsKey = "geocode-refused.json"

// GeocodeCache is a geocode.Store over the tenant's cache ConfigMap, read
// once at the start of the geocoding stage, and the solve's own pending
// answers, which an earlier attempt of the same solve (a retried pod) may
// have left. New answers are written (KeepSaving) into the solve's own
// ConfigMap. Keys are hashed, since addresses are neither valid ConfigMap
// keys nor worth showing in plain text. It is safe for concurrent use.
type GeocodeCache struct {
	c   client.Client
	opt *v1alpha1.Optimization

	mu      sync.Mutex
	entries map[string]geocode.Entry
	added   map[string]geocode.Entry
	refused map[string]string // hashed key -> the geocoder's message
	dirty   int               // answers and refusals not written yet
	every   int               // Put asks for a write when dirty reaches it; 0: never
	kick    chan struct{}     // asks keepSaving for a write
}

// Incremental writes of a solve's answers, so a retried solve (a restarted
// pod, a Job retry) resumes where the last write left it: a write every
// geocodeSaveEvery answers or geocodeSaveInterval, whichever comes first.
// Each write sends all the solve's answers (one ConfigMap key, about 130
// bytes per address), so 500 addresses cost at most a few dozen patches of
// under 70 KB.
const (
	geocodeSaveEvery    = 25
	geocodeSaveInterval = 10 * time.Second
	// geocodeFinalSaveTimeout bounds every write of the answers; writes
	// run to their end even after the solve's context ended, so a
	// cancelled pod keeps what it paid for (see keepSaving).
	geocodeFinalSaveTimeout = 10 * time.Second
)

func cacheKeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// LoadGeocodeCache reads the tenant's cache and opt's pending answers; a
// missing ConfigMap is empty.
func LoadGeocodeCache(ctx context.Context, c client.Client, opt *v1alpha1.Optimization) (*GeocodeCache, error) {
	s := &GeocodeCache{c: c, opt: opt, entries: map[string]geocode.Entry{}, added: map[string]geocode.Entry{}, refused: map[string]string{}, kick: make(chan struct{}, 1)}
	cache, err := getConfigMap(ctx, c, opt.Namespace, GeocodeCacheConfigMap)
	if err != nil {
		return nil, fmt.Errorf("unable to read the geocoding cache: %w", err)
	}
	for k, v := range cache.Data {
		var e geocode.Entry
		if json.Unmarshal([]byte(v), &e) == nil {
			s.entries[k] = e
		}
	}
	own, err := getConfigMap(ctx, c, opt.Namespace, opt.ResultConfigMapName())
	if err != nil {
		return nil, fmt.Errorf("unable to read the solve's geocoding answers: %w", err)
	}
	for k, e := range pendingGeocodes(own) {
		s.entries[k] = e
		s.added[k] = e
	}
	if raw, ok := own.Data[PendingRefusalsKey]; ok {
		_ = json.Unmarshal([]byte(raw), &s.refused) // a damaged record costs the message, not the solve
	}
	return s, nil
}

// getConfigMap reads a ConfigMap; a missing one is empty.
func getConfigMap(ctx context.Context, c client.Client, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return &corev1.ConfigMap{}, nil
	}
	return cm, err
}

// pendingGeocodes decodes the answers a solve left in its ConfigMap.
func pendingGeocodes(cm *corev1.ConfigMap) map[string]geocode.Entry {
	out := map[string]geocode.Entry{}
	if raw, ok := cm.Data[PendingGeocodesKey]; ok {
		_ = json.Unmarshal([]byte(raw), &out) // a damaged record costs lookups, not the solve
	}
	return out
}

// Get implements geocode.Store.
func (s *GeocodeCache) Get(_ context.Context, key string) (geocode.Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[cacheKeyHash(key)]
	return e, ok, nil
}

// Put implements geocode.Store; the entry is written by save.
func (s *GeocodeCache) Put(_ context.Context, key string, e geocode.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := cacheKeyHash(key)
	s.entries[h] = e
	s.added[h] = e
	s.dirty++
	if s.every > 0 && s.dirty >= s.every {
		select {
		case s.kick <- struct{}{}:
		default: // a write is already asked for
		}
	}
	return nil
}

// Refuse records that the geocoder refused key's query with message; it is
// written with the answers.
func (s *GeocodeCache) Refuse(key, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[cacheKeyHash(key)] = message
	s.dirty++
}

// Refusal is the message the geocoder refused key's query with, if it did
// (in this attempt of the solve or an earlier one).
func (s *GeocodeCache) Refusal(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.refused[cacheKeyHash(key)]
	return m, ok
}

// save writes the solve's answers and refusals into its own ConfigMap when
// some are not written yet. Calls must not overlap (keepSaving serializes
// them).
func (s *GeocodeCache) save(ctx context.Context) error {
	s.mu.Lock()
	n := s.dirty
	raw, err := json.Marshal(s.added)
	var refused any // nil removes the key
	if len(s.refused) > 0 && err == nil {
		var r []byte
		r, err = json.Marshal(s.refused)
		refused = string(r)
	}
	s.mu.Unlock()
	if err != nil || n == 0 {
		return err
	}
	err = patchResultConfigMap(ctx, s.c, s.opt, map[string]any{"data": map[string]any{PendingGeocodesKey: string(raw), PendingRefusalsKey: refused}})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.dirty -= n
	s.mu.Unlock()
	return nil
}

// KeepSaving writes the answers as they come, every geocodeSaveEvery
// answers or geocodeSaveInterval, until stop is called (see keepSaving).
func (s *GeocodeCache) KeepSaving(ctx context.Context) (stop func()) {
	return s.keepSaving(ctx, geocodeSaveEvery, geocodeSaveInterval)
}

// keepSaving writes the answers as they come, every `every` answers or
// `interval`, until stop is called; stop makes the last write, even when
// ctx has ended. A failed write is logged and retried with the next one:
// it costs lookups on a retry, not this solve. Every write runs to its end
// (bounded by geocodeFinalSaveTimeout) even when ctx ends meanwhile: a
// write cancelled on the client side can still reach the API server after
// the last one and put back fewer answers.
func (s *GeocodeCache) keepSaving(ctx context.Context, every int, interval time.Duration) (stop func()) {
	s.mu.Lock()
	s.every = every
	s.mu.Unlock()
	log := ctrl.LoggerFrom(ctx)
	save := func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), geocodeFinalSaveTimeout)
		defer cancel()
		if err := s.save(wctx); err != nil {
			log.Info("Unable to keep the geocoding answers", "error", err.Error())
		}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-s.kick:
			case <-tick.C:
			}
			save()
		}
	}()
	return func() {
		close(done)
		<-finished
		save()
	}
}

// MergeGeocodeCache moves the answers opt's solve found into the tenant's
// cache, dropping entries older than ttl (0: the default) and the oldest
// past the size bound, then removes them and the refusals from opt's
// ConfigMap. It is safe to repeat.
func MergeGeocodeCache(ctx context.Context, c client.Client, opt *v1alpha1.Optimization, ttl time.Duration, now time.Time) error {
	if ttl <= 0 {
		ttl = geocode.DefaultCacheTTL
	}
	own, err := getConfigMap(ctx, c, opt.Namespace, opt.ResultConfigMapName())
	if err != nil {
		return err
	}
	added := pendingGeocodes(own)
	_, answers := own.Data[PendingGeocodesKey]
	if _, refusals := own.Data[PendingRefusalsKey]; !answers && !refusals {
		return nil
	}
	if len(added) > 0 {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cm := &corev1.ConfigMap{}
			err := c.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: GeocodeCacheConfigMap}, cm)
			create := apierrors.IsNotFound(err)
			if err != nil && !create {
				return err
			}
			if create {
				cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Name: GeocodeCacheConfigMap, Namespace: opt.Namespace,
					Labels: map[string]string{"app.kubernetes.io/managed-by": "routeopt"},
				}}
			}
			cm.Data = prune(cm.Data, added, ttl, now)
			if create {
				return c.Create(ctx, cm)
			}
			return c.Update(ctx, cm)
		})
		if err != nil {
			return fmt.Errorf("unable to update the geocoding cache: %w", err)
		}
	}
	return patchResultConfigMap(ctx, c, opt, map[string]any{"data": map[string]any{PendingGeocodesKey: nil, PendingRefusalsKey: nil}})
}

// prune merges added into data, drops expired entries and, past the size
// bound, the oldest ones.
func prune(data map[string]string, added map[string]geocode.Entry, ttl time.Duration, now time.Time) map[string]string {
	type item struct {
		key    string
		value  string
		stored time.Time
	}
	var items []item
	for k, v := range data {
		if _, replaced := added[k]; replaced {
			continue
		}
		var e geocode.Entry
		if json.Unmarshal([]byte(v), &e) != nil || now.Sub(e.Stored) > ttl {
			continue
		}
		items = append(items, item{k, v, e.Stored})
	}
	for k, e := range added {
		b, err := json.Marshal(e)
		if err != nil {
			continue
		}
		items = append(items, item{k, string(b), e.Stored})
	}
	slices.SortFunc(items, func(a, b item) int { return b.stored.Compare(a.stored) }) // newest first
	out := make(map[string]string, len(items))
	size := 0
	for _, it := range items {
		size += len(it.key) + len(it.value)
		if size > geocodeCacheMaxBytes {
			break
		}
		out[it.key] = it.value
	}
	return out
}
