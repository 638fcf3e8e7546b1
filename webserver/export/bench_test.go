package export

import (
	"io"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// The benchmarks of docs/PERFORMANCE.md ("Exports"): 500 stops over 20
// routes (and 5 unassigned orders), every text field filled, driver
// instructions on, written to io.Discard.
//
//	go test -run '^$' -bench 'Write' -benchmem -count 5 ./webserver/export/
//
// Besides time and allocations per export, each reports peak-heap-MiB: the
// most heap memory held by objects (live or not yet collected) seen by a
// sampler every 100 µs while the benchmark ran, and base-heap-MiB: the live
// heap before it (the fixture, the test binary), to subtract.
func BenchmarkWriteXLSX500(b *testing.B) { benchmarkWrite(b, XLSX) }

func BenchmarkWriteCSV500(b *testing.B) { benchmarkWrite(b, CSV) }

func benchmarkWrite(b *testing.B, f Format) {
	opt, res := fixture(500, 20, 5)
	o := Options{Format: f, IncludeDriverInstructions: true}
	var size countingWriter
	if err := Write(&size, opt, res, o); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size.n)
	b.ReportAllocs()
	runtime.GC()
	base := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(base)
	peak := startHeapSampler(100 * time.Microsecond)
	for b.Loop() {
		if err := Write(io.Discard, opt, res, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(base[0].Value.Uint64())/(1<<20), "base-heap-MiB")
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// heapSampler records the largest /memory/classes/heap/objects:bytes seen.
type heapSampler struct {
	done chan struct{}
	wg   sync.WaitGroup
	max  uint64
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func startHeapSampler(every time.Duration) *heapSampler {
	s := &heapSampler{done: make(chan struct{})}
	sample := []metrics.Sample{{Name: heapObjects}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(sample)
			s.max = max(s.max, sample[0].Value.Uint64())
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) stop() uint64 {
	close(s.done)
	s.wg.Wait()
	return s.max
}

// One export of 500 stops allocates well under the 50 MB memory target in
// total (so its peak is below it too), whatever the garbage collector does.
func TestXLSXAllocationBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	opt, res := fixture(500, 20, 5)
	o := Options{Format: XLSX, IncludeDriverInstructions: true}
	if err := Write(io.Discard, opt, res, o); err != nil { // warm up: styles, templates
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := Write(io.Discard, opt, res, o); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	const budget = 50 << 20
	if total := after.TotalAlloc - before.TotalAlloc; total > budget {
		t.Errorf("one xlsx export of 500 stops allocated %d MiB, budget %d MiB", total>>20, budget>>20)
	} else {
		t.Logf("one xlsx export of 500 stops allocated %.1f MiB", float64(total)/(1<<20))
	}
}
