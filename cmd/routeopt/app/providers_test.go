package app

import (
	"slices"
	"strings"
	"testing"
	"time"

	"routeopt.io/routeopt/solver/geocode"
)

// Solve Jobs get the manager's providers, except that a Job never asks a
// geocoding server: the manager geocodes with its one client, so the
// installation's rate is one budget.
func TestProviderArgsAndBudget(t *testing.T) {
	for _, tc := range []struct {
		name         string
		flags        []string
		wantGeocoder string
		wantRate     float64
		wantMaxWait  time.Duration
	}{
		{"defaults", nil, "--geocoder=none", 1, 30 * time.Minute},
		{"nominatim", []string{"--geocoder=nominatim", "--nominatim-url=http://nominatim.internal", "--nominatim-rate=4", "--geocode-max-wait=5m"}, "--geocoder=prefetched", 4, 5 * time.Minute},
		{"rate 0 is the client's default", []string{"--geocoder=nominatim", "--nominatim-url=http://n", "--nominatim-rate=0", "--geocode-max-wait=0"}, "--geocoder=prefetched", geocode.DefaultNominatimRate, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewProviderOptions(tc.flags...)
			if err != nil {
				t.Fatal(err)
			}
			args := o.args()
			if !slices.Contains(args, tc.wantGeocoder) {
				t.Errorf("job args %v lack %s", args, tc.wantGeocoder)
			}
			if slices.ContainsFunc(args, func(a string) bool {
				return strings.HasPrefix(a, "--nominatim-") || strings.HasPrefix(a, "--geocode-max-wait")
			}) {
				t.Errorf("job args %v carry Nominatim or budget flags", args)
			}
			// The Job parses what it is given.
			job, err := NewProviderOptions(args...)
			if err != nil {
				t.Fatalf("a solve Job cannot parse %v: %v", args, err)
			}
			if _, err := job.SolvePipeline(nil); err != nil {
				t.Errorf("a solve Job cannot build its pipeline from %v: %v", args, err)
			}
			b := o.budget()
			if b.Rate != tc.wantRate || b.MaxWait != tc.wantMaxWait {
				t.Errorf("budget rate %g max wait %s, want %g %s", b.Rate, b.MaxWait, tc.wantRate, tc.wantMaxWait)
			}
		})
	}
}
