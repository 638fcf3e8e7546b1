//go:build !race

package vrp

// raceEnabled: under the race detector the search runs 5 to 20 times
// slower (see raceBudget).
const raceEnabled = false
