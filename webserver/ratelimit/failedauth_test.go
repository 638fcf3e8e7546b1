package ratelimit

import (
	"testing"
	"time"
)

func TestAuthFailureLimiter(t *testing.T) {
	l := NewFailedAuth(1, 3)
	now := time.Unix(1_700_000_000, 0)
	if blocked, _ := l.Blocked("192.0.2.1", now); blocked {
		t.Fatal("a source that never failed is blocked")
	}
	for i := range 3 {
		if blocked, _ := l.Blocked("192.0.2.1", now); blocked {
			t.Fatalf("blocked after %d failures of a burst of 3", i)
		}
		l.Failed("192.0.2.1", now)
	}
	blocked, wait := l.Blocked("192.0.2.1", now)
	if !blocked || wait <= 0 || wait > time.Second {
		t.Fatalf("after the burst: blocked %v, wait %s; want blocked for at most 1 s", blocked, wait)
	}
	if blocked, _ := l.Blocked("192.0.2.2", now); blocked {
		t.Error("another source is blocked too")
	}
	if blocked, _ := l.Blocked("192.0.2.1", now.Add(wait)); blocked {
		t.Errorf("still blocked after the wait it gave (%s)", wait)
	}
}

func TestAuthFailureLimiterForgetsLeastRecentSources(t *testing.T) {
	l := NewFailedAuth(1, 1)
	now := time.Unix(1_700_000_000, 0)
	l.Failed("first", now)
	for i := range maxFailingSources {
		l.Failed(string(rune('a'+i%26))+time.Duration(i).String(), now)
	}
	if got := l.buckets.Len(); got != maxFailingSources {
		t.Errorf("%d sources remembered, want at most %d", got, maxFailingSources)
	}
	if blocked, _ := l.Blocked("first", now); blocked {
		t.Error("the least recently failing source is still remembered")
	}
}

func TestSourceKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":                  "192.0.2.7",
		"::ffff:192.0.2.7":           "192.0.2.7",
		"2001:db8:1:2:aaaa::1":       "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff::99": "2001:db8:1:2::/64",
		"not an address":             "not an address",
	} {
		if got := SourceKey(in); got != want {
			t.Errorf("SourceKey(%q) = %q, want %q", in, got, want)
		}
	}
}
