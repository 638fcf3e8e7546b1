package kubebudget

import (
	"context"
	"errors"
	"testing"
	"time"
)

// answeringProbe is a probe that keeps being answered until the test ends.
func answeringProbe(t *testing.T) *Probe {
	p := NewProbe(nil, "")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			p.answered.Store(time.Now().UnixNano())
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		probe     func(*testing.T) *Probe
		stop      bool
		wantCause error
	}{
		{"silent API server: ends at the budget", func(*testing.T) *Probe { return NewProbe(nil, "") }, false, errSilent},
		{"answering API server: ends at the longest wait", answeringProbe, false, errSlow},
		{"answered request: ends when stopped", answeringProbe, true, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(context.Background(), 50*time.Millisecond, 300*time.Millisecond, tc.probe(t))
			if b.Cause() != nil {
				t.Fatal("a budget has a cause before its first call")
			}
			ctx := b.Context()
			if tc.stop {
				b.Stop()
			} else {
				defer b.Stop()
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the request's Kubernetes context never ended")
			}
			if got := b.Cause(); !errors.Is(got, tc.wantCause) {
				t.Errorf("cause %v, want %v", got, tc.wantCause)
			}
		})
	}
}

func TestProbeAnswering(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	var none *Probe
	if none.Answering(now, time.Second) {
		t.Error("no probe counts as answering")
	}
	p := NewProbe(nil, "")
	if p.Answering(now, time.Second) {
		t.Error("a probe never answered counts as answering")
	}
	p.answered.Store(now.Add(-time.Second).UnixNano())
	if !p.Answering(now, time.Second) {
		t.Error("an answer one window ago does not count")
	}
	if p.Answering(now.Add(time.Nanosecond), time.Second) {
		t.Error("an answer older than the window counts")
	}
}
