package controllers

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// What the Job runner reports while the manager geocodes a solve, and when
// it may create the Job.
func TestGeocodingOutcome(t *testing.T) {
	failure := record.Failf(v1alpha1.ErrorGeocodingUnavailable, "100 address(es) need geocoding")
	for _, tc := range []struct {
		name      string
		run       *backgroundRun // nil: none known
		wantKnown bool
		want      Outcome
		wantWait  bool // start: the Job must wait
	}{
		{name: "none known", run: nil},
		{name: "geocoding", run: &backgroundRun{}, wantKnown: true, want: Outcome{Phase: PhaseRunning}, wantWait: true},
		{name: "refused or failed", run: &backgroundRun{done: true, err: failure}, wantKnown: true, want: Outcome{Phase: PhaseFailed, Failure: failure}, wantWait: true},
		{name: "manager shutting down", run: &backgroundRun{done: true, err: context.Canceled}, wantKnown: true, want: Outcome{Phase: PhaseRunning}, wantWait: true},
		{name: "geocoded: the Job may start", run: &backgroundRun{done: true}, wantKnown: true, want: Outcome{Phase: PhaseSucceeded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGeocoding(context.Background(), nil, nil, nil)
			opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "opt", UID: "uid-1"}}
			if tc.run != nil {
				tc.run.cancel = func() {}
				g.add(opt.UID, tc.run)
			}
			out, known := g.observe(opt)
			if known != tc.wantKnown || out.Phase != tc.want.Phase || out.Failure != tc.want.Failure {
				t.Errorf("observe = %+v, %v; want %+v, %v", out, known, tc.want, tc.wantKnown)
			}
			if tc.run == nil {
				return
			}
			if wait, err := g.start(context.Background(), opt); err != nil || wait != tc.wantWait {
				t.Errorf("start = %v, %v; want wait %v", wait, err, tc.wantWait)
			}
			g.forget(opt.UID)
			if _, known := g.observe(opt); known != !tc.run.done {
				t.Errorf("after forget known = %v, want %v (only finished geocoding is forgotten)", known, !tc.run.done)
			}
			g.stop(opt.UID)
			if _, known := g.observe(opt); known {
				t.Error("known after stop")
			}
		})
	}
}
