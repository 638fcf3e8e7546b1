package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	"routeopt.io/routeopt/controllers/internal/graceful"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
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

// Reconcile moves one Optimization a step forward: read it, gather what
// decide asks for, decide, act.
func (r *OptimizationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("optimization", req.NamespacedName)
	ctx = ctrl.LoggerInto(ctx, log)

	opt := &v1alpha1.Optimization{}
	if err := r.Client.Get(ctx, req.NamespacedName, opt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	res, err := r.reconcile(ctx, opt)
	if errors.Is(err, errStale) {
		return ctrl.Result{RequeueAfter: staleRequeue}, nil
	}
	return res, err
}

// errStale marks a status write refused because the object changed since
// it was read; Reconcile requeues without logging an error.
var errStale = errors.New("optimization changed since it was read")

// errDone ends a reconcile that gathering settled: the runner may not act
// in the namespace, so failIfForbidden has failed the optimization.
var errDone = errors.New("nothing left to do")

// reconcile gathers what decide asks for, one input at a time, then acts on
// its decision. decide asks for each input at most once
// (TestDecideAsksEachInputOnce), so the loop ends.
func (r *OptimizationReconciler) reconcile(ctx context.Context, opt *v1alpha1.Optimization) (ctrl.Result, error) {
	obs := observation{
		State:        opt.Status.State,
		Cancel:       opt.Spec.Cancel,
		Deleting:     !opt.DeletionTimestamp.IsZero(),
		HasFinalizer: controllerutil.ContainsFinalizer(opt, v1alpha1.SolveFinalizer),
		Now:          r.Clock.Now(),
		Retention:    r.Retention,
		StateLabel:   opt.Labels[v1alpha1.StateLabel],
	}
	if opt.Status.FinishedAt != nil {
		obs.FinishedAt = opt.Status.FinishedAt.Time
	}
	var fresh *v1alpha1.Optimization
	for {
		d := withStateLabel(obs, decide(obs))
		if d.need == needNothing {
			return r.act(ctx, opt, fresh, d)
		}
		f, err := r.gather(ctx, opt, d.need, &obs)
		if errors.Is(err, errDone) {
			return ctrl.Result{}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if f != nil {
			fresh = f
		}
	}
}

// gather reads the input n into obs; for needFresh it also returns the
// fresh copy, which a restart starts from.
func (r *OptimizationReconciler) gather(ctx context.Context, opt *v1alpha1.Optimization, n need, obs *observation) (*v1alpha1.Optimization, error) {
	switch n {
	case needTenancy:
		msg, err := r.notTenant(ctx, opt.Namespace)
		if err != nil {
			return nil, err
		}
		obs.NotTenant = &msg
	case needSlot:
		free, err := r.queue.hasSlot(ctx, opt)
		if err != nil {
			return nil, err
		}
		obs.SlotFree = &free
	case needOutcome:
		out, err := r.Runner.Observe(ctx, opt)
		if err != nil {
			if err := r.failIfForbidden(ctx, opt, err); err != nil {
				return nil, err
			}
			return nil, errDone
		}
		obs.Outcome = &out
	case needFresh:
		fresh := &v1alpha1.Optimization{}
		err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(opt), fresh)
		switch {
		case apierrors.IsNotFound(err):
			obs.Fresh = &freshCopy{}
			return nil, nil
		case err != nil:
			return nil, err
		}
		obs.Fresh = &freshCopy{Found: true, SameUID: fresh.UID == opt.UID, Cancel: fresh.Spec.Cancel, State: fresh.Status.State}
		return fresh, nil
	default:
		return nil, fmt.Errorf("unknown input %s", n)
	}
	return nil, nil
}

// act performs d's actions on opt in order (fresh is the API server's
// copy when decide asked for it) and stops at the first that fails.
func (r *OptimizationReconciler) act(ctx context.Context, opt, fresh *v1alpha1.Optimization, d decision) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	for _, a := range d.actions {
		var err error
		switch a {
		case actEnsureFinalizer:
			err = r.ensureFinalizer(ctx, opt)
		case actWrite:
			err = r.apply(ctx, opt, *d.status)
		case actStart:
			err = r.start(ctx, opt)
		case actRestart:
			log.Info("Restarting solve that no runner knows of")
			err = r.start(ctx, fresh)
		case actStop:
			err = r.Runner.Stop(ctx, opt)
		case actFinish:
			err = r.Runner.Finish(ctx, opt)
		case actMergeGeocodes:
			if err := store.MergeGeocodeCache(ctx, r.Client, opt, r.GeocodeCacheTTL, r.Clock.Now()); err != nil {
				// Losing them costs a second lookup next time, not this result.
				log.Info("Unable to merge geocoding answers into the tenant's cache", "error", err.Error())
			}
		case actForget:
			r.Runner.Forget(opt)
		case actRemoveFinalizer:
			err = r.removeFinalizer(ctx, opt)
		case actDelete:
			err = r.expire(ctx, opt)
		case actRelease:
			err = r.release(ctx, opt)
		case actLabel:
			state := opt.Status.State
			if d.status != nil {
				state = d.status.state
			}
			err = r.labelState(ctx, opt, state)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: d.requeueAfter}, nil
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
	err := store.EnsureResultConfigMap(ctx, r.Client, opt)
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

// release stops and finishes the solve of an optimization being deleted
// (actRelease): a forbidden answer is logged, not returned.
func (r *OptimizationReconciler) release(ctx context.Context, opt *v1alpha1.Optimization) error {
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
	return nil
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

// labelState sets opt's StateLabel to state. The JSON patch first tests
// status.state on the API server, so a reconcile on a stale cache never
// labels an optimization with a state it has left; a failed test is
// retried once the cache has caught up. A metadata patch only, it leaves
// status and its owners alone.
func (r *OptimizationReconciler) labelState(ctx context.Context, opt *v1alpha1.Optimization, state v1alpha1.State) error {
	ops := []map[string]any{{"op": "test", "path": "/status/state", "value": state}}
	if opt.Labels == nil {
		// An optimization created without labels (kubectl): add the map.
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{v1alpha1.StateLabel: string(state)}})
	} else {
		ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/" + strings.ReplaceAll(v1alpha1.StateLabel, "/", "~1"), "value": state})
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	err = r.Client.Patch(ctx, opt.DeepCopy(), client.RawPatch(types.JSONPatchType, data))
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsInvalid(err), apierrors.IsConflict(err), apierrors.IsBadRequest(err):
		// The test failed (state or labels moved on): read again.
		return errStale
	default:
		return fmt.Errorf("unable to label the optimization %s: %w", state, err)
	}
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

// expire deletes a terminal optimization past its retention (actDelete).
func (r *OptimizationReconciler) expire(ctx context.Context, opt *v1alpha1.Optimization) error {
	if err := r.Client.Delete(ctx, opt, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("unable to delete expired optimization: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted optimization past its retention", "retention", r.Retention.String())
	return nil
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
	return b.Complete(graceful.Reconciler(r))
}
