package app

import (
	"context"
	"fmt"
	"runtime"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/controllers"
	"routeopt.io/routeopt/controllers/notify"
	"routeopt.io/routeopt/solver"
	"routeopt.io/routeopt/webserver/apikey"
)

// ManagerCacheOptions keep the manager's informers to routeopt's own kinds
// and Namespaces, the only kinds it may watch across the cluster. Reading a
// kind without a started informer fails instead of starting a cluster-wide
// one by accident. Cached Optimizations are slim (no orders, vehicles or
// managed fields): tens of thousands are kept for 30 days, and reconciling
// needs none of that (controllers.SlimOptimization).
func ManagerCacheOptions() cache.Options {
	return cache.Options{
		ReaderFailOnMissingInformer: true,
		DefaultTransform:            cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&v1alpha1.Optimization{}: {Transform: controllers.SlimOptimization},
		},
	}
}

// ManagerClientOptions read what lives in tenant namespaces (Jobs, pods,
// ConfigMaps, the solve identities) directly, never through an informer:
// RBAC grants the manager those kinds per tenant namespace only.
func ManagerClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{
		&batchv1.Job{}, &corev1.Pod{}, &corev1.ConfigMap{}, &corev1.ServiceAccount{},
		&rbacv1.Role{}, &rbacv1.RoleBinding{},
	}}}
}

// APICacheOptions restrict the API's informers: of all Secrets, only the
// API key Secrets of the operator's namespace.
func APICacheOptions(operatorNamespace string) cache.Options {
	req, err := labels.NewRequirement(apikey.IDLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {
			Namespaces: map[string]cache.Config{operatorNamespace: {}},
			Label:      labels.NewSelector().Add(*req),
		},
	}}
}

// RunnerOptions choose and tune the solve runner.
type RunnerOptions struct {
	// Kind is "job" or "inprocess".
	Kind string
	// Image and Command run solve Jobs.
	Image, Command string
	// JobQueueName labels Jobs for Kueue.
	JobQueueName string
	// MaxConcurrent bounds solves running at once (both runners).
	MaxConcurrent int
	// Retention deletes terminal optimizations this long after they finished.
	Retention time.Duration
	// Providers choose the geocoder and matrix of solves; nil means the defaults.
	Providers *ProviderOptions
	// Resources size solve Jobs; nil means controllers.DefaultSolveResources.
	Resources *controllers.SolveResources
	// PublicURL is the base of the links in webhook events.
	PublicURL string
	// WebhookAllowTargets are HOST:PORT webhook targets delivered to
	// although private (local development).
	WebhookAllowTargets []string
	// OperatorNamespace holds the webhook signing secrets; empty means
	// v1alpha1.DefaultOperatorNamespace.
	OperatorNamespace string
	// WebhookPolicy, when set, is the webhook target policy instead of the
	// one WebhookAllowTargets make (tests trust their own TLS receivers
	// through it).
	WebhookPolicy *webhook.Policy
	// InputWait is how long in-process solves wait for an input ConfigMap
	// that is not written yet; 0 means store.DefaultInputWait.
	InputWait time.Duration
}

func (o *RunnerOptions) validate() error {
	switch o.Kind {
	case "inprocess":
	case "job":
		if o.Image == "" {
			return fmt.Errorf("--solver-image is required with --runner=job")
		}
	default:
		return fmt.Errorf("--runner must be job or inprocess, not %q", o.Kind)
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if o.OperatorNamespace == "" {
		o.OperatorNamespace = v1alpha1.DefaultOperatorNamespace
	}
	if o.WebhookPolicy == nil {
		policy, err := webhook.NewPolicy(o.WebhookAllowTargets, nil)
		if err != nil {
			return fmt.Errorf("--webhook-allow-target: %w", err)
		}
		o.WebhookPolicy = policy
	}
	return nil
}

// The runners reach the solve pipeline through controllers.Solver.
var _ controllers.Solver = (*solver.Pipeline)(nil)

// AddControllers registers the reconcilers on mgr. The returned wait blocks
// until in-process solves have stopped after ctx ends.
func AddControllers(ctx context.Context, mgr manager.Manager, o RunnerOptions) (wait func(), err error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	providers := o.Providers
	if providers == nil {
		if providers, err = NewProviderOptions(); err != nil {
			return nil, err
		}
	}
	r := &controllers.OptimizationReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("routeopt-controller"),
		Clock:     clock.RealClock{},

		MaxConcurrent:   o.MaxConcurrent,
		Retention:       o.Retention,
		GeocodeCacheTTL: providers.geocodeCacheTTL,
	}
	// The controller reads tenant namespaces' labels from this informer.
	if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Namespace{}); err != nil {
		return nil, fmt.Errorf("unable to watch namespaces: %w", err)
	}
	if providers.geocoder == "prefetched" {
		return nil, fmt.Errorf("--geocoder=prefetched is for solve Jobs; the manager takes none or nominatim")
	}
	wait = func() {}
	switch o.Kind {
	case "job":
		runner := &controllers.JobRunner{
			Client: mgr.GetClient(), Image: o.Image, Command: o.Command, ExtraArgs: providers.args(),
			QueueName: o.JobQueueName, TTLSecondsAfterFinished: 3600, Resources: o.Resources,
		}
		var events chan event.GenericEvent
		if providers.geocodes() {
			// The manager geocodes every solve with its one client before
			// the Job starts: one rate for the installation.
			pipeline := &solver.Pipeline{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}
			if err := providers.pipeline(pipeline); err != nil {
				return nil, err
			}
			runner.Geocoding = controllers.NewGeocoding(ctx, pipeline, providers.budget(), r.Recorder)
			events, wait = runner.Geocoding.Events, runner.Geocoding.Wait
		}
		r.Runner = runner
		err = r.SetupWithManager(mgr, events)
	default:
		pipeline := &solver.Pipeline{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), InputWait: o.InputWait}
		if err := providers.pipeline(pipeline); err != nil {
			return nil, err
		}
		runner := controllers.NewInProcessRunner(ctx, pipeline, o.MaxConcurrent)
		if providers.geocodes() {
			runner.Budget, runner.Recorder = providers.budget(), r.Recorder
		}
		r.Runner = runner
		wait = runner.Wait
		err = r.SetupWithManager(mgr, runner.Events)
	}
	if err != nil {
		return nil, fmt.Errorf("unable to set up the optimization controller: %w", err)
	}
	if o.PublicURL == "" {
		mgr.GetLogger().Info("No --public-url: the links in webhook events are paths without a host")
	}
	if _, err := notify.Setup(ctx, mgr, notify.Options{
		Policy: o.WebhookPolicy, PublicURL: o.PublicURL, OperatorNamespace: o.OperatorNamespace,
	}); err != nil {
		return nil, err
	}
	return wait, nil
}

// StartAPIInformers starts the informers the REST API reads (Optimizations
// and API key Secrets) and waits until they are synced. Informers start
// lazily on first use otherwise, and a first request would wait for a full
// LIST of every Optimization, past the API's Kubernetes timeout.
func StartAPIInformers(ctx context.Context, c cache.Cache) error {
	for _, obj := range []client.Object{&v1alpha1.Optimization{}, &corev1.Secret{}, &v1alpha1.WebhookEndpoint{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("unable to start the %T informer: %w", obj, err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("unable to sync the API's caches")
	}
	return nil
}
