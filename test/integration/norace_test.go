//go:build !race

package integration

// raceEnabled: the race detector slows the solver 5 to 20 times, so the
// benchmark-like tests that solve hundreds of orders skip under it.
const raceEnabled = false
