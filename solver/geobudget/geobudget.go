// Package geobudget shares an installation's one geocoding rate among its
// solves: the public Nominatim allows one request a second for all of
// them, so the manager geocodes every solve through one client, and each
// solve is admitted here before a request is sent. Its addresses are
// counted and their wait estimated at the configured rate, behind the
// addresses other solves are still waiting for; a solve that would wait
// longer than the limit fails at once, and one that will take a while is
// told so up front.
//
// The controllers hold the Budget; the solve pipeline counts the addresses
// to admit and a Ticket's requests down as they are sent.
package geobudget

import (
	"fmt"
	"math"
	"sync"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// DefaultSlowAfter is the estimated wait past which a solve is told up
// front that geocoding will take a while.
const DefaultSlowAfter = time.Minute

// EstimateWait is how long n addresses take at rate requests per second
// behind waiting addresses already queued on the same rate; a rate of zero
// or less is unlimited. Retries and the burst are left out: the estimate
// is what the rate alone costs.
func EstimateWait(n, waiting int, rate float64) time.Duration {
	if n <= 0 || rate <= 0 || math.IsInf(rate, 1) || math.IsNaN(rate) {
		return 0
	}
	return time.Duration(float64(n+max(waiting, 0)) / rate * float64(time.Second))
}

// Budget is the installation's one geocoding rate, shared by every solve
// the manager geocodes. It is safe for concurrent use.
type Budget struct {
	// Rate is the geocoder's requests per second; zero or less is unlimited.
	Rate float64
	// MaxWait is the longest estimated wait a solve is admitted with; zero
	// means no limit.
	MaxWait time.Duration
	// SlowAfter is the estimated wait past which a solve is told it will
	// take a while; zero means DefaultSlowAfter.
	SlowAfter time.Duration

	mu      sync.Mutex
	waiting int // addresses admitted and not asked yet, over all solves
}

// Waiting is how many admitted addresses have not been asked yet.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// Admit reserves n addresses, or returns a geocoding_unavailable Failure
// when their estimated wait exceeds MaxWait (nothing is reserved then).
func (b *Budget) Admit(n int) (*Ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := &Ticket{Addresses: n, Waiting: b.waiting, Rate: b.Rate, Wait: EstimateWait(n, b.waiting, b.Rate), b: b, left: n}
	if b.MaxWait > 0 && t.Wait > b.MaxWait {
		return nil, record.Failf(v1alpha1.ErrorGeocodingUnavailable,
			"%s; the limit is %s: send latitude and longitude for the orders, or raise --nominatim-rate (a Nominatim server of your own allows more) or --geocode-max-wait",
			t.Message(), roundWait(b.MaxWait))
	}
	slow := b.SlowAfter
	if slow <= 0 {
		slow = DefaultSlowAfter
	}
	t.Slow = t.Wait > slow
	b.waiting += n
	return t, nil
}

// Ticket is one solve's admission: the addresses it will ask, what it
// waits behind and the estimate. Release it when geocoding ends.
type Ticket struct {
	// Addresses is how many distinct addresses are neither in the tenant's
	// cache nor among the solve's pending answers.
	Addresses int
	// Waiting is how many addresses of other solves were queued before it.
	Waiting int
	// Rate is the budget's rate.
	Rate float64
	// Wait is the estimate: EstimateWait(Addresses, Waiting, Rate).
	Wait time.Duration
	// Slow is true when Wait is past the budget's SlowAfter.
	Slow bool

	b    *Budget
	mu   sync.Mutex
	left int
}

// Message tells the estimate in words.
func (t *Ticket) Message() string {
	return fmt.Sprintf("%d address(es) need geocoding at %g request(s)/s, about %s with %d already waiting",
		t.Addresses, t.Rate, roundWait(t.Wait), t.Waiting)
}

// roundWait shows a wait to the second.
func roundWait(d time.Duration) time.Duration { return d.Round(time.Second) }

// Asked counts one request sent for the ticket's solve, so the budget's
// backlog shrinks as the solve's addresses are asked; requests past the
// admitted addresses (retries) count for nothing.
func (t *Ticket) Asked() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.left > 0 {
		t.left--
		t.b.mu.Lock()
		t.b.waiting--
		t.b.mu.Unlock()
	}
}

// Release returns the addresses the solve did not ask to the budget; it is
// safe to call more than once and on a nil ticket.
func (t *Ticket) Release() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.mu.Lock()
	t.b.waiting -= t.left
	t.b.mu.Unlock()
	t.left = 0
}
