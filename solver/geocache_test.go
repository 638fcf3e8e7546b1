package solver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"routeopt.io/routeopt/solver/geocode"
)

func TestPruneGeocodeCache(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	entry := func(age time.Duration) string {
		b, _ := json.Marshal(geocode.Entry{Result: geocode.Result{Lat: 1, Lon: 2}, Found: true, Stored: now.Add(-age)})
		return string(b)
	}
	data := map[string]string{
		"fresh":   entry(time.Hour),
		"expired": entry(31 * 24 * time.Hour),
		"garbage": "not json",
		"updated": entry(2 * time.Hour),
	}
	added := map[string]geocode.Entry{
		"new":     {Found: false, Stored: now},
		"updated": {Result: geocode.Result{Lat: 3, Lon: 4}, Found: true, Stored: now},
	}
	got := prune(data, added, 30*24*time.Hour, now)
	for _, want := range []string{"fresh", "new", "updated"} {
		if _, ok := got[want]; !ok {
			t.Errorf("%s dropped", want)
		}
	}
	for _, gone := range []string{"expired", "garbage"} {
		if _, ok := got[gone]; ok {
			t.Errorf("%s kept", gone)
		}
	}
	if !strings.Contains(got["updated"], `"lat":3`) {
		t.Errorf("updated entry not replaced: %s", got["updated"])
	}
}

func TestPruneGeocodeCacheKeepsNewestWithinSize(t *testing.T) {
	now := time.Now()
	added := map[string]geocode.Entry{}
	for i := range 20000 {
		added[strings.Repeat("k", 20)+string(rune('a'+i%26))+time.Duration(i).String()] = geocode.Entry{Found: true, Stored: now.Add(-time.Duration(i) * time.Second)}
	}
	got := prune(nil, added, 30*24*time.Hour, now)
	size := 0
	for k, v := range got {
		size += len(k) + len(v)
	}
	if size > geocodeCacheMaxBytes || len(got) == 0 || len(got) == len(added) {
		t.Fatalf("kept %d of %d entries, %d bytes (bound %d)", len(got), len(added), size, geocodeCacheMaxBytes)
	}
	newest := strings.Repeat("k", 20) + "a" + time.Duration(0).String()
	if _, ok := got[newest]; !ok {
		t.Error("the newest entry was dropped")
	}
}
