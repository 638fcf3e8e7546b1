package solver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/solver/geocode"
)

// GeocodeCacheConfigMap names the ConfigMap of a tenant namespace that keeps
// geocoding answers across optimizations, so an address is asked once per TTL.
const GeocodeCacheConfigMap = "routeopt-geocode-cache"

// geocodeCacheMaxBytes keeps the ConfigMap well under the 1 MiB object limit;
// the oldest answers go first.
const geocodeCacheMaxBytes = 800 << 10

// configMapStore is a geocode.Store over the tenant's cache ConfigMap: read
// once at the start of the geocoding stage, written once at its end. Keys
// are hashed, since addresses are neither valid ConfigMap keys nor worth
// showing in plain text.
type configMapStore struct {
	c         client.Client
	namespace string

	mu      sync.Mutex
	entries map[string]geocode.Entry
	added   map[string]geocode.Entry
}

func cacheKeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// loadGeocodeCache reads the tenant's cache; a missing ConfigMap is empty.
func loadGeocodeCache(ctx context.Context, c client.Client, namespace string) (*configMapStore, error) {
	s := &configMapStore{c: c, namespace: namespace, entries: map[string]geocode.Entry{}, added: map[string]geocode.Entry{}}
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: GeocodeCacheConfigMap}, cm)
	if apierrors.IsNotFound(err) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("unable to read the geocoding cache: %w", err)
	}
	for k, v := range cm.Data {
		var e geocode.Entry
		if json.Unmarshal([]byte(v), &e) == nil {
			s.entries[k] = e
		}
	}
	return s, nil
}

// Get implements geocode.Store.
func (s *configMapStore) Get(_ context.Context, key string) (geocode.Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[cacheKeyHash(key)]
	return e, ok, nil
}

// Put implements geocode.Store; the entry is written by save.
func (s *configMapStore) Put(_ context.Context, key string, e geocode.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := cacheKeyHash(key)
	s.entries[h] = e
	s.added[h] = e
	return nil
}

// save merges the new answers into the ConfigMap, dropping entries older
// than ttl and the oldest ones past the size bound.
func (s *configMapStore) save(ctx context.Context, ttl time.Duration, now time.Time) error {
	s.mu.Lock()
	added := maps.Clone(s.added)
	s.mu.Unlock()
	if len(added) == 0 {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: GeocodeCacheConfigMap}, cm)
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return err
		}
		if create {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: GeocodeCacheConfigMap, Namespace: s.namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "routeopt"},
			}}
		}
		cm.Data = prune(cm.Data, added, ttl, now)
		if create {
			return s.c.Create(ctx, cm)
		}
		return s.c.Update(ctx, cm)
	})
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
