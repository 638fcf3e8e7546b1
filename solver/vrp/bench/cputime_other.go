//go:build !unix

package bench

import "time"

// cpuTime is unknown on this platform.
func cpuTime() time.Duration { return 0 }

// CPUClock is time.Now where CPU time is unknown.
func CPUClock() func() time.Time { return time.Now }
