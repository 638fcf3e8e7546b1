package ratelimit

import (
	"testing"
	"time"
)

func TestPerKey(t *testing.T) {
	l := NewPerKey(2, 3) // 2 per second, burst 3
	now := time.Unix(1000, 0)
	for i := range 3 {
		if ok, _ := l.Allow("a", now); !ok {
			t.Fatalf("request %d within the burst refused", i+1)
		}
	}
	ok, wait := l.Allow("a", now)
	if ok || wait <= 0 || wait > 500*time.Millisecond {
		t.Fatalf("past the burst: ok %v wait %s, want refused with a wait up to 0.5 s", ok, wait)
	}
	if ok, _ := l.Allow("b", now); !ok {
		t.Fatal("another key was limited")
	}
	if ok, _ := l.Allow("a", now.Add(500*time.Millisecond)); !ok {
		t.Fatal("a refilled token was refused")
	}
	l.Allow("c", now.Add(time.Hour)) // sweeps idle buckets
	if _, kept := l.buckets["a"]; kept {
		t.Fatal("an idle bucket was kept after the sweep")
	}
}
