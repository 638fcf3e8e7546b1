package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver"
	"routeopt.io/routeopt/solver/record"
)

// OptimizationReconciler drives an Optimization through
// queued -> running -> completed | failed, and to cancelled on request.
type OptimizationReconciler struct {
	Client client.Client
	// APIReader reads around the cache where a stale object would do harm
	// (restarting a solve that may have been cancelled meanwhile).
	APIReader client.Reader
	Recorder  events.EventRecorder
	Runner    Runner
	Clock     clock.PassiveClock
	// MaxConcurrent bounds optimizations running at once; the rest wait in
	// queued and start first in, first out. 0 means no bound.
	MaxConcurrent int
	// Retention deletes terminal optimizations (and, by ownership, their
	// results) this long after they finished; 0 keeps them.
	Retention time.Duration
	// GeocodeCacheTTL is how long the tenant's geocoding answers are kept
	// when a solve's new answers are merged into them; 0 means the default.
	GeocodeCacheTTL time.Duration

	// queue counts solve slots from the cache index; SetupWithManager sets it.
	queue *solveQueue
}

// runningPoll is how often a running solve is looked at: Jobs are read
// directly rather than watched across the cluster.
const runningPoll = time.Second

// staleRequeue is how soon an optimization whose cached copy was stale is
// looked at again; the cache catches up within milliseconds.
const staleRequeue = 100 * time.Millisecond

// The manager's cluster-wide permissions are routeopt's own kinds, reading
// namespaces (to know tenants) and recording events; everything else it
// does happens inside tenant namespaces (see job.go) or its own namespace.
// patch is for the solve finalizer only (a merge patch of
// metadata.finalizers); delete is for retention.
// +kubebuilder:rbac:groups=routeopt.io,resources=optimizations,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=routeopt.io,resources=optimizations/status,verbs=get;patch
// +kubebuilder:rbac:groups=routeopt.io,resources=optimizations/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one Optimization a step forward.
func (r *OptimizationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("optimization", req.NamespacedName)
	ctx = ctrl.LoggerInto(ctx, log)

	opt := &v1alpha1.Optimization{}
	if err := r.Client.Get(ctx, req.NamespacedName, opt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var res ctrl.Result
	var err error
	if opt.DeletionTimestamp.IsZero() {
		res, err = r.reconcile(ctx, opt)
	} else {
		err = r.release(ctx, opt)
	}
	if errors.Is(err, errStale) {
		return ctrl.Result{RequeueAfter: staleRequeue}, nil
	}
	return res, err
}

// errStale marks a status write refused because the object changed since
// it was read; Reconcile requeues without logging an error.
var errStale = errors.New("optimization changed since it was read")

// transition is a state change decided by reconcile.
type transition struct {
	state   v1alpha1.State
	failure *record.Failure
	reason  string
	message string
}

func (r *OptimizationReconciler) reconcile(ctx context.Context, opt *v1alpha1.Optimization) (ctrl.Result, error) {
	state := opt.Status.State
	switch {
	case state.IsTerminal():
		r.Runner.Forget(opt)
		if err := r.removeFinalizer(ctx, opt); err != nil {
			return ctrl.Result{}, err
		}
		return r.expire(ctx, opt)

	case opt.Spec.Cancel:
		if err := r.Runner.Stop(ctx, opt); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.finish(ctx, opt, transition{state: v1alpha1.StateCancelled, reason: v1alpha1.ReasonCancelled, message: "Cancelled by the caller"})

	case state == "":
		if msg, err := r.notTenant(ctx, opt.Namespace); err != nil || msg != "" {
			if err != nil {
				return ctrl.Result{}, err
			}
			return ctrl.Result{}, r.apply(ctx, opt, transition{state: v1alpha1.StateFailed, reason: v1alpha1.ReasonFailed, message: msg,
				failure: &record.Failure{Code: v1alpha1.ErrorInternal, Message: msg}})
		}
		return ctrl.Result{}, r.apply(ctx, opt, transition{state: v1alpha1.StateQueued, reason: v1alpha1.ReasonQueued, message: "Waiting for a solver"})

	case state == v1alpha1.StateQueued:
		free, err := r.queue.hasSlot(ctx, opt)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !free {
			// No timer: when a slot frees, slotFreed enqueues the head of
			// the queue, and a manager that starts reconciles every queued
			// one once.
			return ctrl.Result{}, nil
		}
		// The finalizer comes first, so a solve never runs that a delete
		// could not stop. Running is written before the solve starts, so
		// the record never shows a queued optimization with a solver stage;
		// a Start that fails is retried by the running branch (PhaseUnknown).
		if err := r.ensureFinalizer(ctx, opt); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.apply(ctx, opt, transition{state: v1alpha1.StateRunning, reason: v1alpha1.ReasonStarted, message: "Handed to the solver"}); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: runningPoll}, r.start(ctx, opt)
	}

	// Running: ask the runner. One started by an earlier version has no
	// finalizer yet.
	if err := r.ensureFinalizer(ctx, opt); err != nil {
		return ctrl.Result{}, err
	}
	out, err := r.Runner.Observe(ctx, opt)
	if err != nil {
		return ctrl.Result{}, r.failIfForbidden(ctx, opt, err)
	}
	switch out.Phase {
	case PhaseUnknown:
		// The solve was lost (a restarted manager, a deleted Job): start it
		// again, unless the API server's copy says it was cancelled or has
		// finished meanwhile and the cache has not caught up.
		fresh := &v1alpha1.Optimization{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(opt), fresh); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if fresh.UID != opt.UID || fresh.Spec.Cancel || fresh.Status.State != v1alpha1.StateRunning {
			return ctrl.Result{RequeueAfter: staleRequeue}, nil
		}
		ctrl.LoggerFrom(ctx).Info("Restarting solve that no runner knows of")
		return ctrl.Result{RequeueAfter: runningPoll}, r.start(ctx, fresh)
	case PhaseSucceeded:
		return ctrl.Result{}, r.finish(ctx, opt, transition{state: v1alpha1.StateCompleted, reason: v1alpha1.ReasonCompleted, message: "The result is ready"})
	case PhaseFailed:
		return ctrl.Result{}, r.finish(ctx, opt, transition{state: v1alpha1.StateFailed, failure: out.Failure, reason: v1alpha1.ReasonFailed, message: out.Failure.Message})
	}
	return ctrl.Result{RequeueAfter: runningPoll}, nil
}

// notTenant tells why namespace cannot run solves (routeopt acts only in
// onboarded tenant namespaces), or "" when it can.
func (r *OptimizationReconciler) notTenant(ctx context.Context, namespace string) (string, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: namespace}, ns)
	if apierrors.IsNotFound(err) || (err == nil && ns.Labels[v1alpha1.TenantLabel] == "") {
		return fmt.Sprintf("namespace %s is not a routeopt tenant: create optimizations in a tenant's namespace (routeopt tenant create)", namespace), nil
	}
	if err != nil {
		return "", fmt.Errorf("unable to read namespace %s: %w", namespace, err)
	}
	return "", nil
}

// start prepares opt's result ConfigMap, which the solve may only patch,
// and hands opt to the runner. A namespace where routeopt may not act (a
// tenant whose RoleBindings are missing) fails opt with a message that
// says how to repair it, rather than retrying for ever.
func (r *OptimizationReconciler) start(ctx context.Context, opt *v1alpha1.Optimization) error {
	err := solver.EnsureResultConfigMap(ctx, r.Client, opt)
	if err == nil {
		err = r.Runner.Start(ctx, opt)
	}
	return r.failIfForbidden(ctx, opt, err)
}

// failIfForbidden fails opt when err says routeopt may not act in its
// namespace (a tenant whose RoleBindings are missing), with a message that
// says how to repair it, rather than retrying for ever; other errors are
// returned as they are.
func (r *OptimizationReconciler) failIfForbidden(ctx context.Context, opt *v1alpha1.Optimization, err error) error {
	if !apierrors.IsForbidden(err) {
		return err
	}
	msg := fmt.Sprintf("routeopt may not run solves in namespace %s: re-run `routeopt tenant create %s` to restore its RoleBindings (%v)",
		opt.Namespace, strings.TrimPrefix(opt.Namespace, v1alpha1.TenantNamespacePrefix), err)
	return r.apply(ctx, opt, transition{state: v1alpha1.StateFailed, reason: v1alpha1.ReasonFailed, message: msg,
		failure: &record.Failure{Code: v1alpha1.ErrorInternal, Message: msg}})
}

// finish releases what opt's solve held (its identity; the geocoding
// answers it found go into the tenant's cache), then writes t. Both steps
// are safe to repeat when the write has to be retried.
func (r *OptimizationReconciler) finish(ctx context.Context, opt *v1alpha1.Optimization, t transition) error {
	if err := r.Runner.Finish(ctx, opt); err != nil {
		return err
	}
	if err := solver.MergeGeocodeCache(ctx, r.Client, opt, r.GeocodeCacheTTL, r.Clock.Now()); err != nil {
		// Losing them costs a second lookup next time, not this result.
		ctrl.LoggerFrom(ctx).Info("Unable to merge geocoding answers into the tenant's cache", "error", err.Error())
	}
	return r.apply(ctx, opt, t)
}

// release stops the solve of an optimization being deleted, then removes
// the finalizer that kept it. One without the finalizer (made by an earlier
// version, or held by someone else's) is stopped all the same. Where
// routeopt may no longer act (a tenant being removed, its RoleBindings
// gone first) the finalizer goes all the same: holding it would keep the
// namespace from being deleted, and its garbage collection removes the Job.
func (r *OptimizationReconciler) release(ctx context.Context, opt *v1alpha1.Optimization) error {
	if !opt.Status.State.IsTerminal() {
		err := r.Runner.Stop(ctx, opt)
		if err == nil {
			err = r.Runner.Finish(ctx, opt)
		}
		switch {
		case apierrors.IsForbidden(err):
			ctrl.LoggerFrom(ctx).Info("Unable to stop the solve of a deleted optimization: routeopt may no longer act in its namespace", "error", err.Error())
		case err != nil:
			return err
		default:
			ctrl.LoggerFrom(ctx).Info("Stopped the solve of a deleted optimization")
		}
	}
	r.Runner.Forget(opt)
	return r.removeFinalizer(ctx, opt)
}

// ensureFinalizer adds SolveFinalizer to opt. The patch carries only the
// finalizers and opt's resourceVersion, so it never writes back a slim
// cached spec and never drops a finalizer added meanwhile; opt becomes the
// API server's answer (full spec, new resourceVersion).
func (r *OptimizationReconciler) ensureFinalizer(ctx context.Context, opt *v1alpha1.Optimization) error {
	if controllerutil.ContainsFinalizer(opt, v1alpha1.SolveFinalizer) {
		return nil
	}
	base := opt.DeepCopy()
	controllerutil.AddFinalizer(opt, v1alpha1.SolveFinalizer)
	return r.patchFinalizers(ctx, opt, base)
}

// removeFinalizer removes SolveFinalizer from opt, as ensureFinalizer adds it.
func (r *OptimizationReconciler) removeFinalizer(ctx context.Context, opt *v1alpha1.Optimization) error {
	if !controllerutil.ContainsFinalizer(opt, v1alpha1.SolveFinalizer) {
		return nil
	}
	base := opt.DeepCopy()
	controllerutil.RemoveFinalizer(opt, v1alpha1.SolveFinalizer)
	return r.patchFinalizers(ctx, opt, base)
}

func (r *OptimizationReconciler) patchFinalizers(ctx context.Context, opt, base *v1alpha1.Optimization) error {
	err := r.Client.Patch(ctx, opt, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return errStale
	default:
		return fmt.Errorf("unable to write the finalizers of the optimization: %w", err)
	}
}

// expire deletes a terminal optimization once its retention has passed.
func (r *OptimizationReconciler) expire(ctx context.Context, opt *v1alpha1.Optimization) (ctrl.Result, error) {
	if r.Retention <= 0 || opt.Status.FinishedAt == nil {
		return ctrl.Result{}, nil
	}
	left := opt.Status.FinishedAt.Add(r.Retention).Sub(r.Clock.Now())
	if left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := r.Client.Delete(ctx, opt, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("unable to delete expired optimization: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted optimization past its retention", "retention", r.Retention.String())
	return ctrl.Result{}, nil
}

// apply writes the controller's status fields for transition t, then records
// an Event. The controller owns state, errors, times, counts and conditions.
func (r *OptimizationReconciler) apply(ctx context.Context, opt *v1alpha1.Optimization, t transition) error {
	now := metav1.NewTime(r.Clock.Now())
	st := record.ControllerStatus{
		State:              t.state,
		OrderCount:         int32(orderCount(opt)),
		VehicleCount:       int32(vehicleCount(opt)),
		ObservedGeneration: opt.Generation,
		StartedAt:          opt.Status.StartedAt,
	}
	if st.StartedAt == nil && t.state == v1alpha1.StateRunning {
		st.StartedAt = &now
	}
	if t.state.IsTerminal() {
		st.FinishedAt = &now
	}
	if t.failure != nil {
		st.ErrorCode = t.failure.Code
		st.ErrorMessage = t.failure.Message
	}
	st.Conditions = append([]metav1.Condition(nil), opt.Status.Conditions...)
	finished := metav1.ConditionFalse
	if t.state.IsTerminal() {
		finished = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionFinished, Status: finished, Reason: t.reason, Message: t.message, ObservedGeneration: opt.Generation,
	})

	// The object's resourceVersion makes the write conditional: a decision
	// taken on a stale copy (say, completed after a cancel) is refused with
	// a conflict and taken again on the current object.
	if err := record.ApplyController(ctx, r.Client, client.ObjectKeyFromObject(opt), opt.ResourceVersion, st); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if apierrors.IsConflict(err) {
			return errStale
		}
		return fmt.Errorf("unable to write status %s: %w", t.state, err)
	}
	optimizationsTotal.WithLabelValues(string(t.state)).Inc()
	if t.state.IsTerminal() && st.StartedAt != nil {
		solveDuration.WithLabelValues(string(t.state)).Observe(now.Sub(st.StartedAt.Time).Seconds())
	}
	eventType := corev1.EventTypeNormal
	if t.state == v1alpha1.StateFailed {
		eventType = corev1.EventTypeWarning
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(opt, nil, eventType, t.reason, string(t.state), "%s", t.message)
	}
	ctrl.LoggerFrom(ctx).Info("Optimization changed state", "state", t.state, "reason", t.reason)
	return nil
}

// SetupWithManager registers the reconciler and the solve-slot index it
// counts the queue with. Finished in-process solves arrive on solveEvents
// (nil for the Job runner).
func (r *OptimizationReconciler) SetupWithManager(mgr ctrl.Manager, solveEvents <-chan event.GenericEvent) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Optimization{}, slotField, indexSlot); err != nil {
		return fmt.Errorf("unable to index optimizations by solve slot: %w", err)
	}
	r.queue = &solveQueue{reader: mgr.GetCache(), max: r.MaxConcurrent}
	// The gauges count only while this manager leads (a Runnable that
	// needs leader election).
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return queueGauges.serve(ctx, r.queue) })); err != nil {
		return fmt.Errorf("unable to add the queue gauges: %w", err)
	}
	// Jobs are not watched: that would need a cluster-wide watch of every
	// Job; running solves are read directly every runningPoll instead.
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Optimization{}).
		Watches(&v1alpha1.Optimization{}, r.queue.slotFreed()).
		Named("optimization")
	if solveEvents != nil {
		b = b.WatchesRawSource(source.Channel(solveEvents, &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(r)
}
