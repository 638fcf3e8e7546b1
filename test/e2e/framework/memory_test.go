package framework

import (
	"os"
	"testing"
	"time"
)

func TestRSSOfThisProcess(t *testing.T) {
	rss, err := RSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Fatalf("RSS of the test binary = %d, %v; want at least 1 MiB", rss, err)
	}
}

func TestLastRun(t *testing.T) {
	samples := []MemorySample{{Pid: 1}, {Pid: 1}, {Pid: 2}, {Pid: 3}, {Pid: 3}}
	if got := LastRun(samples); len(got) != 2 || got[0].Pid != 3 {
		t.Errorf("LastRun = %+v, want the two readings of pid 3", got)
	}
	if got := LastRun(nil); got != nil {
		t.Errorf("LastRun(nil) = %+v", got)
	}
}

// series makes a reading every 5 s for n readings, RSS from f(i).
func series(n int, f func(i int) int64) []MemorySample {
	out := make([]MemorySample, n)
	for i := range out {
		out[i] = MemorySample{At: time.Duration(i) * 5 * time.Second, Pid: 1, RSS: f(i)}
	}
	return out
}

func TestMemoryTrend(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		samples []MemorySample
		growing bool
		slope   func(float64) bool
	}{
		"flat": {
			samples: series(30, func(int) int64 { return 100 * mib }),
			slope:   func(s float64) bool { return s == 0 },
		},
		// A garbage-collected heap: up and down by 40 MiB every other
		// reading; the least-squares line tilts a little at the ends.
		"sawtooth": {
			samples: series(30, func(i int) int64 { return int64(100+40*(i%2)) * mib }),
			slope:   func(s float64) bool { return s > -4*mib && s < 4*mib },
		},
		// A warm-up that fills caches, then flat.
		"warm-up then flat": {
			samples: series(30, func(i int) int64 { return int64(min(i, 6)*20+50) * mib }),
			slope:   func(s float64) bool { return s == 0 },
		},
		// 4 MiB per reading, 48 MiB a minute.
		"leak": {
			samples: series(30, func(i int) int64 { return int64(100+4*i) * mib }),
			growing: true,
			slope:   func(s float64) bool { return s > 47*mib && s < 49*mib },
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tr := MemoryTrend(c.samples, 30*time.Second)
			if tr.Samples != 24 {
				t.Errorf("%d readings after the warm-up, want 24", tr.Samples)
			}
			if got := tr.Growing(0.1, 16*mib); got != c.growing {
				t.Errorf("Growing = %v, want %v (%+v)", got, c.growing, tr)
			}
			if !c.slope(tr.SlopePerMinute) {
				t.Errorf("slope %.0f bytes a minute is off", tr.SlopePerMinute)
			}
		})
	}
	if tr := MemoryTrend(series(8, func(i int) int64 { return int64(i) * 100 * mib }), 30*time.Second); tr.Samples != 0 || tr.Growing(0, 0) {
		t.Errorf("two readings after the warm-up give %+v, want no judgement", tr)
	}
}
