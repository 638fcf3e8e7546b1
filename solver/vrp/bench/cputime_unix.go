//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used so far, to
// report timings that a busy machine does not inflate; 0 when unknown.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// CPUClock returns a clock that advances with the process's CPU time, for
// vrp.Options.Now; it falls back to time.Now where CPU time is unknown.
func CPUClock() func() time.Time {
	if cpuTime() == 0 {
		return time.Now
	}
	base := time.Now()
	return func() time.Time { return base.Add(cpuTime()) }
}
