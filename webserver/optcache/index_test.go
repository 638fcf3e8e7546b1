package optcache

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
)

func TestIndex(t *testing.T) {
	idx := NewIndex()
	base := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	mk := func(ns, name string, second int) *v1alpha1.Optimization {
		o := &v1alpha1.Optimization{}
		o.Namespace, o.Name = ns, name
		o.CreationTimestamp = metav1.NewTime(base.Add(time.Duration(second) * time.Second))
		return o
	}
	// Out of order, with a tie on the timestamp and another namespace.
	for _, o := range []*v1alpha1.Optimization{mk("a", "b", 1), mk("a", "d", 3), mk("a", "a", 1), mk("b", "x", 9), mk("a", "c", 2)} {
		idx.Upsert(o)
	}
	names := func(items []*v1alpha1.Optimization) []string {
		var out []string
		for _, o := range items {
			out = append(out, o.Name)
		}
		return out
	}
	page, total := idx.Page("a", 0, 10)
	if want := []string{"d", "c", "b", "a"}; !slices.Equal(names(page), want) || total != 4 {
		t.Fatalf("page = %v (total %d), want %v (4)", names(page), total, want)
	}
	idx.Upsert(mk("a", "c", 2)) // an update keeps one copy in place
	idx.Remove("a", "d")
	page, total = idx.Page("a", 1, 2)
	if want := []string{"b", "a"}; !slices.Equal(names(page), want) || total != 3 {
		t.Fatalf("after update and delete: %v (total %d), want %v (3)", names(page), total, want)
	}
	if page, total := idx.Page("a", 3, 2); len(page) != 0 || total != 3 {
		t.Fatalf("past the end: %v %d", names(page), total)
	}
	if page, total := idx.Page("none", 0, 2); len(page) != 0 || total != 0 {
		t.Fatalf("unknown namespace: %v %d", names(page), total)
	}
	for i := range 100 {
		idx.Upsert(mk("big", fmt.Sprintf("o%03d", i), i%7))
	}
	all, _ := idx.Page("big", 0, 100)
	if !slices.IsSortedFunc(all, newerFirst) {
		t.Fatal("index not sorted newest first")
	}
}
