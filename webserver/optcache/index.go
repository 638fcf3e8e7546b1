package optcache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Index keeps every namespace's optimizations sorted newest first, fed
// by the informer, so a list request copies the page it shows and not the
// whole namespace. Objects are the informer's own: never modified.
type Index struct {
	mu   sync.RWMutex
	byNS map[string][]*v1alpha1.Optimization
}

// newerFirst orders by creation time, newest first, then by name (descending).
func newerFirst(a, b *v1alpha1.Optimization) int {
	if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(b.Name, a.Name)
}

// NewIndex is an empty index; Watch feeds it.
func NewIndex() *Index {
	return &Index{byNS: map[string][]*v1alpha1.Optimization{}}
}

// Upsert adds o, or replaces the object of its name.
func (x *Index) Upsert(o *v1alpha1.Optimization) {
	x.mu.Lock()
	defer x.mu.Unlock()
	items := x.removeLocked(o.Namespace, o.Name)
	i, _ := slices.BinarySearchFunc(items, o, newerFirst)
	x.byNS[o.Namespace] = slices.Insert(items, i, o)
}

// Remove drops the object namespace/name, if there is one.
func (x *Index) Remove(namespace, name string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.byNS[namespace] = x.removeLocked(namespace, name)
}

func (x *Index) removeLocked(namespace, name string) []*v1alpha1.Optimization {
	items := x.byNS[namespace]
	if i := slices.IndexFunc(items, func(o *v1alpha1.Optimization) bool { return o.Name == name }); i >= 0 {
		items = slices.Delete(items, i, i+1)
	}
	return items
}

// Page returns up to size optimizations of namespace from offset, and the total.
func (x *Index) Page(namespace string, offset, size int) ([]*v1alpha1.Optimization, int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	items := x.byNS[namespace]
	if offset < 0 || offset >= len(items) {
		return nil, len(items)
	}
	return slices.Clone(items[offset:min(len(items), offset+size)]), len(items)
}

// Watch feeds x from the cache's Optimization informer, so list requests
// need not list the cache. It returns once x has the informer's initial
// contents.
func (x *Index) Watch(ctx context.Context, c cache.Cache) error {
	inf, err := c.GetInformer(ctx, &v1alpha1.Optimization{})
	if err != nil {
		return fmt.Errorf("unable to get the optimization informer: %w", err)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(*v1alpha1.Optimization); ok {
				x.Upsert(o)
			}
		},
		UpdateFunc: func(_, obj any) {
			if o, ok := obj.(*v1alpha1.Optimization); ok {
				x.Upsert(o)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(*v1alpha1.Optimization); ok {
				x.Remove(o.Namespace, o.Name)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("unable to watch optimizations: %w", err)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return fmt.Errorf("the optimization index did not sync")
	}
	return nil
}
