package framework

import (
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// RSS is the resident set size of process pid in bytes, VmRSS of
// /proc/<pid>/status.
func RSS(pid int) (int64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, err
	}
	return int64(st.VmRSS), nil
}

// MemorySample is one reading of a process's RSS.
type MemorySample struct {
	// At is the time since the sampler started.
	At time.Duration `json:"at_ns"`
	// Pid tells a restarted process's readings from the previous one's.
	Pid int   `json:"pid"`
	RSS int64 `json:"rss_bytes"`
}

// MemorySampler reads the RSS of named processes at an interval. Each
// process is found through a function, so a process that is killed and
// started again keeps one series, its readings told apart by pid.
type MemorySampler struct {
	start time.Time
	stop  chan struct{}
	done  chan struct{}

	mu     sync.Mutex
	series map[string][]MemorySample
}

// StartMemorySampler samples every interval until Stop; pids maps a name
// to the current pid of its process, or 0 while there is none.
func StartMemorySampler(interval time.Duration, pids map[string]func() int) *MemorySampler {
	m := &MemorySampler{start: time.Now(), stop: make(chan struct{}), done: make(chan struct{}), series: map[string][]MemorySample{}}
	sample := func() {
		at := time.Since(m.start)
		for name, pid := range pids {
			p := pid()
			if p <= 0 {
				continue
			}
			rss, err := RSS(p)
			if err != nil || rss == 0 {
				continue // exited between the lookup and the read (a zombie has no VmRSS)
			}
			m.mu.Lock()
			m.series[name] = append(m.series[name], MemorySample{At: at, Pid: p, RSS: rss})
			m.mu.Unlock()
		}
	}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		sample()
		for {
			select {
			case <-m.stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	return m
}

// Stop ends the sampling.
func (m *MemorySampler) Stop() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// Series is a copy of the readings of name so far.
func (m *MemorySampler) Series(name string) []MemorySample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]MemorySample(nil), m.series[name]...)
}

// LastRun is the readings of the last process (pid) of a series.
func LastRun(samples []MemorySample) []MemorySample {
	if len(samples) == 0 {
		return nil
	}
	pid := samples[len(samples)-1].Pid
	i := len(samples)
	for i > 0 && samples[i-1].Pid == pid {
		i--
	}
	return samples[i:]
}

// Trend summarizes a series of readings after a warm-up.
type Trend struct {
	// Samples counts the readings after the warm-up.
	Samples int `json:"samples"`
	// MiddleMean and LastMean are the mean RSS of the middle and last
	// thirds of those readings, in bytes.
	MiddleMean float64 `json:"middle_mean_bytes"`
	LastMean   float64 `json:"last_mean_bytes"`
	// SlopePerMinute is the least-squares slope of RSS over time, in
	// bytes per minute.
	SlopePerMinute float64 `json:"slope_bytes_per_minute"`
}

// MemoryTrend summarizes the readings taken warmUp or more after the
// first one. Fewer than six readings give a zero Trend.
func MemoryTrend(samples []MemorySample, warmUp time.Duration) Trend {
	if len(samples) == 0 {
		return Trend{}
	}
	from := samples[0].At + warmUp
	var kept []MemorySample
	for _, s := range samples {
		if s.At >= from {
			kept = append(kept, s)
		}
	}
	if len(kept) < 6 {
		return Trend{}
	}
	third := len(kept) / 3
	mean := func(s []MemorySample) float64 {
		sum := 0.0
		for _, x := range s {
			sum += float64(x.RSS)
		}
		return sum / float64(len(s))
	}
	t := Trend{Samples: len(kept), MiddleMean: mean(kept[third : 2*third]), LastMean: mean(kept[len(kept)-third:])}
	var mx, my float64
	for _, s := range kept {
		mx += s.At.Minutes()
		my += float64(s.RSS)
	}
	mx /= float64(len(kept))
	my /= float64(len(kept))
	var sxy, sxx float64
	for _, s := range kept {
		dx := s.At.Minutes() - mx
		sxy += dx * (float64(s.RSS) - my)
		sxx += dx * dx
	}
	if sxx > 0 {
		t.SlopePerMinute = sxy / sxx
	}
	return t
}

// Growing tells whether a Trend shows memory that keeps growing: the mean
// of the last third of the readings exceeds the mean of the middle third
// by more than relative (a fraction of the middle mean) and by more than
// absolute bytes. Thirds, not single readings, because a Go process's RSS
// saws up and down with each garbage collection; the middle third, not the
// first, because caches still fill after the warm-up. A leak that grows
// steadily grows the last third over the middle one by its rate times a
// third of the window, so the window must be long enough for that to
// exceed the tolerance. A Trend of too few readings is not growing: the
// caller reports that it could not judge.
func (t Trend) Growing(relative float64, absolute int64) bool {
	if t.Samples == 0 {
		return false
	}
	growth := t.LastMean - t.MiddleMean
	return growth > relative*t.MiddleMean && growth > float64(absolute)
}
