package controllers

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

var (
	toRunning   = &transition{state: v1alpha1.StateRunning, reason: v1alpha1.ReasonStarted, message: "Handed to the solver"}
	toQueued    = &transition{state: v1alpha1.StateQueued, reason: v1alpha1.ReasonQueued, message: "Waiting for a solver"}
	toCompleted = &transition{state: v1alpha1.StateCompleted, reason: v1alpha1.ReasonCompleted, message: "The result is ready"}
	toCancelled = &transition{state: v1alpha1.StateCancelled, reason: v1alpha1.ReasonCancelled, message: "Cancelled by the caller"}
)

func running(out Outcome) observation {
	return observation{State: v1alpha1.StateRunning, HasFinalizer: true, Outcome: &out}
}

func lost(f freshCopy) observation {
	o := running(Outcome{Phase: PhaseUnknown})
	o.Fresh = &f
	return o
}

func TestDecide(t *testing.T) {
	notTenant := "namespace default is not a routeopt tenant"
	solverFailure := &record.Failure{Code: v1alpha1.ErrorDeadlineExceeded, Message: "the solve job ran past its deadline"}
	cancelling := []action{actStop, actFinish, actMergeGeocodes, actWrite}
	ending := []action{actFinish, actMergeGeocodes, actWrite}

	cases := []struct {
		name string
		obs  observation
		want decision
	}{
		{name: "new: asks for the namespace", obs: observation{},
			want: decision{need: needTenancy}},
		{name: "new outside a tenant fails", obs: observation{NotTenant: &notTenant},
			want: decision{actions: []action{actWrite}, status: &transition{state: v1alpha1.StateFailed, reason: v1alpha1.ReasonFailed, message: notTenant,
				failure: &record.Failure{Code: v1alpha1.ErrorInternal, Message: notTenant}}}},
		{name: "new in a tenant is queued", obs: observation{NotTenant: ptr.To("")},
			want: decision{actions: []action{actWrite}, status: toQueued}},

		{name: "queued: asks for the queue", obs: observation{State: v1alpha1.StateQueued},
			want: decision{need: needSlot}},
		{name: "queued without a slot waits for slotFreed", obs: observation{State: v1alpha1.StateQueued, SlotFree: ptr.To(false)},
			want: decision{}},
		{name: "queued with a slot: finalizer, running, start", obs: observation{State: v1alpha1.StateQueued, SlotFree: ptr.To(true)},
			want: decision{actions: []action{actEnsureFinalizer, actWrite, actStart}, status: toRunning, requeueAfter: runningPoll}},
		{name: "queued with a slot and the finalizer", obs: observation{State: v1alpha1.StateQueued, SlotFree: ptr.To(true), HasFinalizer: true},
			want: decision{actions: []action{actWrite, actStart}, status: toRunning, requeueAfter: runningPoll}},

		{name: "cancel while new", obs: observation{Cancel: true},
			want: decision{actions: cancelling, status: toCancelled}},
		{name: "cancel while queued", obs: observation{State: v1alpha1.StateQueued, Cancel: true},
			want: decision{actions: cancelling, status: toCancelled}},
		{name: "cancel while running: the runner is not asked", obs: observation{State: v1alpha1.StateRunning, Cancel: true, HasFinalizer: true},
			want: decision{actions: cancelling, status: toCancelled}},

		{name: "running: asks the runner", obs: observation{State: v1alpha1.StateRunning, HasFinalizer: true},
			want: decision{need: needOutcome}},
		{name: "running phase running polls", obs: running(Outcome{Phase: PhaseRunning}),
			want: decision{requeueAfter: runningPoll}},
		{name: "running without the finalizer (an earlier version) gets it",
			obs:  observation{State: v1alpha1.StateRunning, Outcome: &Outcome{Phase: PhaseRunning}},
			want: decision{actions: []action{actEnsureFinalizer}, requeueAfter: runningPoll}},
		{name: "lost solve: asks the API server", obs: running(Outcome{Phase: PhaseUnknown}),
			want: decision{need: needFresh}},
		{name: "lost solve still running there restarts", obs: lost(freshCopy{Found: true, SameUID: true, State: v1alpha1.StateRunning}),
			want: decision{actions: []action{actRestart}, requeueAfter: runningPoll}},
		{name: "lost solve cancelled there: stale cache", obs: lost(freshCopy{Found: true, SameUID: true, Cancel: true, State: v1alpha1.StateRunning}),
			want: decision{requeueAfter: staleRequeue}},
		{name: "lost solve finished there: stale cache", obs: lost(freshCopy{Found: true, SameUID: true, State: v1alpha1.StateCompleted}),
			want: decision{requeueAfter: staleRequeue}},
		{name: "lost solve of a recreated optimization: stale cache", obs: lost(freshCopy{Found: true, State: v1alpha1.StateRunning}),
			want: decision{requeueAfter: staleRequeue}},
		{name: "lost solve of a deleted optimization", obs: lost(freshCopy{}),
			want: decision{}},
		{name: "succeeded: finish and complete", obs: running(Outcome{Phase: PhaseSucceeded}),
			want: decision{actions: ending, status: toCompleted}},
		{name: "failed: finish and fail with the runner's failure", obs: running(Outcome{Phase: PhaseFailed, Failure: solverFailure}),
			want: decision{actions: ending, status: &transition{state: v1alpha1.StateFailed, reason: v1alpha1.ReasonFailed,
				message: solverFailure.Message, failure: solverFailure}}},
		{name: "failed without a failure still fails", obs: running(Outcome{Phase: PhaseFailed}),
			want: decision{actions: ending, status: &transition{state: v1alpha1.StateFailed, reason: v1alpha1.ReasonFailed,
				message: "the solve failed", failure: &record.Failure{Code: v1alpha1.ErrorSolver, Message: "the solve failed"}}}},

		{name: "completed: forget, drop the finalizer, keep", obs: observation{State: v1alpha1.StateCompleted, HasFinalizer: true},
			want: decision{actions: []action{actForget, actRemoveFinalizer}}},
		{name: "failed without the finalizer: forget", obs: observation{State: v1alpha1.StateFailed},
			want: decision{actions: []action{actForget}}},
		{name: "cancelled and asked to cancel again", obs: observation{State: v1alpha1.StateCancelled, Cancel: true},
			want: decision{actions: []action{actForget}}},

		{name: "deleting while running stops first", obs: observation{State: v1alpha1.StateRunning, Deleting: true, HasFinalizer: true},
			want: decision{actions: []action{actRelease, actForget, actRemoveFinalizer}}},
		{name: "deleting a cancelled running one stops it", obs: observation{State: v1alpha1.StateRunning, Deleting: true, Cancel: true, HasFinalizer: true},
			want: decision{actions: []action{actRelease, actForget, actRemoveFinalizer}}},
		{name: "deleting one held by another finalizer is stopped all the same", obs: observation{State: v1alpha1.StateQueued, Deleting: true},
			want: decision{actions: []action{actRelease, actForget}}},
		{name: "deleting a terminal one", obs: observation{State: v1alpha1.StateCompleted, Deleting: true, HasFinalizer: true},
			want: decision{actions: []action{actForget, actRemoveFinalizer}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decide(c.obs)
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(decision{}, transition{}), cmp.Comparer(actionsEqual)); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

// actionsEqual treats nil and empty action lists alike, as Reconcile does.
func actionsEqual(a, b []action) bool {
	return slices.Equal(a, b)
}

// TestDecideRetention drives a terminal optimization through its
// retention on a fake clock.
func TestDecideRetention(t *testing.T) {
	finished := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(finished)
	const retention = 24 * time.Hour

	cases := []struct {
		name      string
		after     time.Duration
		retention time.Duration
		finished  time.Time
		want      decision
	}{
		{name: "just finished: requeue after the whole retention", retention: retention, finished: finished,
			want: decision{actions: []action{actForget}, requeueAfter: retention}},
		{name: "part way: requeue after exactly the time left", after: 90 * time.Minute, retention: retention, finished: finished,
			want: decision{actions: []action{actForget}, requeueAfter: retention - 90*time.Minute}},
		{name: "at the end: delete", after: retention, retention: retention, finished: finished,
			want: decision{actions: []action{actForget, actDelete}}},
		{name: "past the end: delete", after: retention + time.Second, retention: retention, finished: finished,
			want: decision{actions: []action{actForget, actDelete}}},
		{name: "retention 0 keeps it", after: 365 * 24 * time.Hour, finished: finished,
			want: decision{actions: []action{actForget}}},
		{name: "no finishedAt keeps it", after: 365 * 24 * time.Hour, retention: retention,
			want: decision{actions: []action{actForget}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk.SetTime(finished.Add(c.after))
			obs := observation{State: v1alpha1.StateCompleted, FinishedAt: c.finished, Now: clk.Now(), Retention: c.retention}
			got := decide(obs)
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(decision{}, transition{})); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideAsksEachInputOnce plays Reconcile's gathering loop over every
// state, flag and runner answer: decide must settle without asking for an
// input twice, and ask only for the inputs its state needs.
func TestDecideAsksEachInputOnce(t *testing.T) {
	states := []v1alpha1.State{"", v1alpha1.StateQueued, v1alpha1.StateRunning,
		v1alpha1.StateCompleted, v1alpha1.StateFailed, v1alpha1.StateCancelled}
	allowed := map[v1alpha1.State][]need{
		"":                    {needTenancy},
		v1alpha1.StateQueued:  {needSlot},
		v1alpha1.StateRunning: {needOutcome, needFresh},
	}
	for _, state := range states {
		for _, flags := range [][2]bool{{false, false}, {true, false}, {false, true}} {
			for _, phase := range []Phase{PhaseUnknown, PhaseRunning, PhaseSucceeded, PhaseFailed} {
				obs := observation{State: state, Cancel: flags[0], Deleting: flags[1]}
				asked := map[need]bool{}
				for {
					d := decide(obs)
					if d.need == needNothing {
						if d.status != nil && !slices.Contains(d.actions, actWrite) {
							t.Errorf("%q %v %v: a status without a write", state, flags, phase)
						}
						break
					}
					if asked[d.need] {
						t.Fatalf("%q %v %v: asked for %s twice", state, flags, phase, d.need)
					}
					if flags != [2]bool{} || !slices.Contains(allowed[state], d.need) {
						t.Errorf("%q %v %v: asked for %s", state, flags, phase, d.need)
					}
					asked[d.need] = true
					switch d.need {
					case needTenancy:
						obs.NotTenant = ptr.To("")
					case needSlot:
						obs.SlotFree = ptr.To(true)
					case needOutcome:
						obs.Outcome = &Outcome{Phase: phase}
					case needFresh:
						obs.Fresh = &freshCopy{Found: true, SameUID: true, State: v1alpha1.StateRunning}
					}
				}
			}
		}
	}
}

func TestWithStateLabel(t *testing.T) {
	write := func(to *transition, actions ...action) decision { return decision{actions: actions, status: to} }
	cases := []struct {
		name string
		obs  observation
		d    decision
		want []action
	}{
		{name: "a write labels the new state, after the start",
			obs: observation{State: v1alpha1.StateQueued, StateLabel: "queued"}, d: write(toRunning, actWrite, actStart), want: []action{actWrite, actStart, actLabel}},
		{name: "first write of a new optimization",
			obs: observation{}, d: write(toQueued, actWrite), want: []action{actWrite, actLabel}},
		{name: "a stale label is fixed without a write",
			obs: observation{State: v1alpha1.StateFailed, StateLabel: "running"}, d: decision{actions: []action{actForget}}, want: []action{actForget, actLabel}},
		{name: "a label that matches is left alone",
			obs: observation{State: v1alpha1.StateRunning, StateLabel: "running"}, d: decision{requeueAfter: runningPoll}, want: nil},
		{name: "a status without a write does not count",
			obs: observation{State: v1alpha1.StateRunning, StateLabel: "running"}, d: decision{status: toCompleted}, want: nil},
		{name: "an optimization being deleted is left alone",
			obs: observation{State: v1alpha1.StateRunning, Deleting: true}, d: decision{actions: []action{actRelease}}, want: []action{actRelease}},
		{name: "one about to be deleted is left alone",
			obs: observation{State: v1alpha1.StateCompleted}, d: decision{actions: []action{actForget, actDelete}}, want: []action{actForget, actDelete}},
		{name: "no state yet, nothing to label",
			obs: observation{}, d: decision{}, want: nil},
		{name: "an input still missing",
			obs: observation{State: v1alpha1.StateQueued}, d: decision{need: needSlot}, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := withStateLabel(tc.obs, tc.d)
			if diff := cmp.Diff(tc.want, got.actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}
