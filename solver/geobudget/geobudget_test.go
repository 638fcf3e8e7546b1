package geobudget

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

func TestEstimateWait(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, waiting int
		rate       float64
		want       time.Duration
	}{
		{"nothing to ask", 0, 50, 1, 0},
		{"one a second", 130, 0, 1, 130 * time.Second},
		{"behind others", 10, 30, 1, 40 * time.Second},
		{"faster server", 100, 20, 4, 30 * time.Second},
		{"fractional rate", 3, 0, 0.5, 6 * time.Second},
		{"unlimited (negative)", 500, 0, -1, 0},
		{"unlimited (infinite)", 500, 0, math.Inf(1), 0},
		{"negative backlog is none", 10, -5, 1, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EstimateWait(tc.n, tc.waiting, tc.rate); got != tc.want {
				t.Errorf("EstimateWait(%d, %d, %g) = %s, want %s", tc.n, tc.waiting, tc.rate, got, tc.want)
			}
		})
	}
}

func TestBudgetAdmits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budget   *Budget
		waiting  int // admitted before, not asked yet
		n        int
		wantFail string // substring of the failure; "" admits
		wantSlow bool
	}{
		{name: "fits", budget: &Budget{Rate: 1, MaxWait: 30 * time.Minute}, n: 50},
		{name: "slow but fits", budget: &Budget{Rate: 1, MaxWait: 30 * time.Minute}, n: 120, wantSlow: true},
		{name: "custom slow threshold", budget: &Budget{Rate: 1, SlowAfter: 10 * time.Second}, n: 20, wantSlow: true},
		{name: "too many", budget: &Budget{Rate: 1, MaxWait: 30 * time.Minute}, n: 1801,
			wantFail: "1801 address(es) need geocoding at 1 request(s)/s, about 30m1s with 0 already waiting; the limit is 30m0s"},
		{name: "too many behind others", budget: &Budget{Rate: 2, MaxWait: time.Minute}, waiting: 100, n: 30,
			wantFail: "30 address(es) need geocoding at 2 request(s)/s, about 1m5s with 100 already waiting; the limit is 1m0s"},
		{name: "no limit", budget: &Budget{Rate: 1}, n: 5000, wantSlow: true},
		{name: "unlimited rate", budget: &Budget{Rate: -1, MaxWait: time.Second}, n: 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.budget
			if tc.waiting > 0 {
				if _, err := b.Admit(tc.waiting); err != nil {
					t.Fatal(err)
				}
			}
			ticket, err := b.Admit(tc.n)
			if tc.wantFail != "" {
				var f *record.Failure
				if !errors.As(err, &f) || f.Code != v1alpha1.ErrorGeocodingUnavailable || !strings.Contains(f.Message, tc.wantFail) || !strings.Contains(f.Message, "--nominatim-rate") {
					t.Fatalf("admit = %v, want %s containing %q", err, v1alpha1.ErrorGeocodingUnavailable, tc.wantFail)
				}
				if got := b.Waiting(); got != tc.waiting {
					t.Errorf("a refused solve left %d waiting, want %d", got, tc.waiting)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ticket.Slow != tc.wantSlow {
				t.Errorf("slow = %v (%s), want %v", ticket.Slow, ticket.Message(), tc.wantSlow)
			}
			if got := b.Waiting(); got != tc.waiting+tc.n {
				t.Errorf("waiting %d, want %d", got, tc.waiting+tc.n)
			}
		})
	}
}

// TestTicketCountsDown: each request the solve sends shrinks the
// backlog others are estimated behind; Release returns the rest once.
func TestTicketCountsDown(t *testing.T) {
	b := &Budget{Rate: 1}
	ticket, err := b.Admit(3)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		ticket.Asked()
	}
	if got := b.Waiting(); got != 1 {
		t.Errorf("after 2 of 3 requests %d waiting, want 1", got)
	}
	for range 2 { // more requests than admitted (retries) do not go below zero
		ticket.Asked()
	}
	ticket.Release()
	ticket.Release()
	if got := b.Waiting(); got != 0 {
		t.Errorf("after release %d waiting, want 0", got)
	}
}
