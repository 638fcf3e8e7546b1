package controllers

import (
	"slices"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// The reconciler is split in two, as cluster-api and kueue do: decide is a
// pure function from what is known of an optimization to what to do next,
// and Reconcile does the reads and writes around it. Some inputs cost a
// request and matter only in some states (the namespace only for a new
// optimization, the queue only for a queued one, the runner only for a
// running one, a fresh read only when the runner has lost the solve), so
// decide says which one it lacks (decision.need) and Reconcile gathers it
// and asks again: each input is read at most once, and only when needed.

// need names an input decide lacks before it can decide.
type need int

const (
	needNothing need = iota
	// needTenancy: whether the namespace is a routeopt tenant.
	needTenancy
	// needSlot: whether a solve slot is free for this optimization.
	needSlot
	// needOutcome: what the runner knows of the solve.
	needOutcome
	// needFresh: the API server's own copy, read around the cache.
	needFresh
)

func (n need) String() string {
	return [...]string{"nothing", "tenancy", "slot", "outcome", "fresh"}[n]
}

// observation is what Reconcile knows of one optimization. The fields
// after Retention start nil and are filled only when decide asks.
type observation struct {
	State        v1alpha1.State
	Cancel       bool
	Deleting     bool
	HasFinalizer bool
	// FinishedAt is zero while the optimization has not finished.
	FinishedAt time.Time
	// Now is the reconciler's clock, read once, so decide reads none.
	Now time.Time
	// Retention is how long a terminal optimization is kept; 0 keeps it.
	Retention time.Duration
	// StateLabel is the optimization's v1alpha1.StateLabel, "" when absent.
	StateLabel string

	// NotTenant says why the namespace cannot run solves, "" when it can.
	NotTenant *string
	SlotFree  *bool
	Outcome   *Outcome
	Fresh     *freshCopy
}

// freshCopy is what matters of the API server's own copy before a lost
// solve is started again.
type freshCopy struct {
	// Found is false when the optimization is gone.
	Found bool
	// SameUID is false for a different optimization of the same name.
	SameUID bool
	Cancel  bool
	State   v1alpha1.State
}

// action is one step of a decision; Reconcile performs them in order and
// stops at the first that fails, so that the next reconcile repeats them
// (each is safe to repeat).
type action int

const (
	actEnsureFinalizer action = iota
	// actWrite writes decision.status.
	actWrite
	// actStart hands the optimization to the runner.
	actStart
	// actRestart starts again, from the fresh copy, a solve the runner lost.
	actRestart
	// actStop cancels the solve.
	actStop
	// actFinish releases what the runner made for the solve.
	actFinish
	// actMergeGeocodes keeps the solve's geocoding answers in the tenant's cache.
	actMergeGeocodes
	// actForget drops what the runner keeps in memory.
	actForget
	actRemoveFinalizer
	// actDelete deletes an optimization past its retention.
	actDelete
	// actRelease stops and finishes the solve of an optimization being
	// deleted, best effort: where routeopt may no longer act (a tenant being
	// removed, its RoleBindings gone first) the finalizer goes all the same,
	// as holding it would keep the namespace from being deleted, and its
	// garbage collection removes the Job.
	actRelease
	// actLabel sets v1alpha1.StateLabel to the state the decision leaves.
	actLabel
)

func (a action) String() string {
	return [...]string{"ensureFinalizer", "write", "start", "restart", "stop", "finish",
		"mergeGeocodes", "forget", "removeFinalizer", "delete", "release", "label"}[a]
}

// decision is what to do next for one optimization: gather an input
// (need), or perform actions and come back after requeueAfter (0: when
// something changes).
type decision struct {
	need         need
	status       *transition
	actions      []action
	requeueAfter time.Duration
}

// transition is the state the controller writes next.
type transition struct {
	state   v1alpha1.State
	failure *record.Failure
	reason  string
	message string
}

// decide is the controller's state machine; it reads nothing but obs.
func decide(obs observation) decision {
	switch {
	case obs.Deleting:
		return decideDeleting(obs)
	case obs.State.IsTerminal():
		return decideTerminal(obs)
	case obs.Cancel:
		// Cancelled before or while running: stop what may run, then record.
		return decision{actions: []action{actStop, actFinish, actMergeGeocodes, actWrite},
			status: &transition{state: v1alpha1.StateCancelled, reason: v1alpha1.ReasonCancelled, message: "Cancelled by the caller"}}
	case obs.State == "":
		if obs.NotTenant == nil {
			return decision{need: needTenancy}
		}
		if msg := *obs.NotTenant; msg != "" {
			return decision{actions: []action{actWrite}, status: &transition{state: v1alpha1.StateFailed, reason: v1alpha1.ReasonFailed, message: msg,
				failure: &record.Failure{Code: v1alpha1.ErrorInternal, Message: msg}}}
		}
		return decision{actions: []action{actWrite},
			status: &transition{state: v1alpha1.StateQueued, reason: v1alpha1.ReasonQueued, message: "Waiting for a solver"}}
	case obs.State == v1alpha1.StateQueued:
		if obs.SlotFree == nil {
			return decision{need: needSlot}
		}
		if !*obs.SlotFree {
			// No timer: when a slot frees, slotFreed enqueues the head of
			// the queue, and a manager that starts reconciles every queued
			// one once.
			return decision{}
		}
		// The finalizer comes first, so a solve never runs that a delete
		// could not stop. Running is written before the solve starts, so
		// the record never shows a queued optimization with a solver stage;
		// a Start that fails is retried by the running branch (PhaseUnknown).
		return decision{actions: withFinalizer(obs, actWrite, actStart), requeueAfter: runningPoll,
			status: &transition{state: v1alpha1.StateRunning, reason: v1alpha1.ReasonStarted, message: "Handed to the solver"}}
	}
	return decideRunning(obs)
}

// decideRunning asks the runner how the solve goes. One started by an
// earlier version has no finalizer yet: every branch adds it first.
func decideRunning(obs observation) decision {
	if obs.Outcome == nil {
		return decision{need: needOutcome}
	}
	switch out := obs.Outcome; out.Phase {
	case PhaseUnknown:
		// The solve was lost (a restarted manager, a deleted Job): start it
		// again, unless the API server's copy says it was cancelled or has
		// finished meanwhile and the cache has not caught up.
		if obs.Fresh == nil {
			return decision{need: needFresh}
		}
		f := obs.Fresh
		switch {
		case !f.Found:
			return decision{}
		case !f.SameUID || f.Cancel || f.State != v1alpha1.StateRunning:
			return decision{requeueAfter: staleRequeue}
		}
		return decision{actions: withFinalizer(obs, actRestart), requeueAfter: runningPoll}
	case PhaseSucceeded:
		return decision{actions: withFinalizer(obs, actFinish, actMergeGeocodes, actWrite),
			status: &transition{state: v1alpha1.StateCompleted, reason: v1alpha1.ReasonCompleted, message: "The result is ready"}}
	case PhaseFailed:
		f := out.Failure
		if f == nil {
			f = &record.Failure{Code: v1alpha1.ErrorSolver, Message: "the solve failed"}
		}
		return decision{actions: withFinalizer(obs, actFinish, actMergeGeocodes, actWrite),
			status: &transition{state: v1alpha1.StateFailed, failure: f, reason: v1alpha1.ReasonFailed, message: f.Message}}
	}
	return decision{actions: withFinalizer(obs), requeueAfter: runningPoll}
}

// decideTerminal lets go of a finished optimization and deletes it once
// its retention has passed.
func decideTerminal(obs observation) decision {
	d := decision{actions: withoutFinalizer(obs, actForget)}
	if obs.Retention <= 0 || obs.FinishedAt.IsZero() {
		return d
	}
	if left := obs.FinishedAt.Add(obs.Retention).Sub(obs.Now); left > 0 {
		d.requeueAfter = left
		return d
	}
	d.actions = append(d.actions, actDelete)
	return d
}

// decideDeleting stops the solve of an optimization being deleted, then
// removes the finalizer that kept it. One without the finalizer (made by
// an earlier version, or held by someone else's) is stopped all the same.
func decideDeleting(obs observation) decision {
	if obs.State.IsTerminal() {
		return decision{actions: withoutFinalizer(obs, actForget)}
	}
	return decision{actions: withoutFinalizer(obs, actRelease, actForget)}
}

// withFinalizer is actions after adding the finalizer when it is missing.
func withFinalizer(obs observation, actions ...action) []action {
	if obs.HasFinalizer {
		return actions
	}
	return append([]action{actEnsureFinalizer}, actions...)
}

// withoutFinalizer is actions followed by removing the finalizer when it is held.
func withoutFinalizer(obs observation, actions ...action) []action {
	if !obs.HasFinalizer {
		return actions
	}
	return append(actions, actRemoveFinalizer)
}

// withStateLabel adds actLabel to d when the state d leaves differs from
// the label, so the label follows every state change, written or found
// stale (a status written outside decide, a label patch that failed). It
// comes last: a label is for people listing, and must not delay a start.
// An optimization being deleted or about to be is left alone.
func withStateLabel(obs observation, d decision) decision {
	if d.need != needNothing || obs.Deleting || slices.Contains(d.actions, actDelete) {
		return d
	}
	state := obs.State
	if d.status != nil && slices.Contains(d.actions, actWrite) {
		state = d.status.state
	}
	if state == "" || string(state) == obs.StateLabel {
		return d
	}
	d.actions = append(slices.Clip(d.actions), actLabel)
	return d
}
