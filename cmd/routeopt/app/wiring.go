package app

import (
	"context"
	"fmt"
	"runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/controllers"
	"routeopt.io/routeopt/solver"
	"routeopt.io/routeopt/webserver"
)

// CacheOptions restrict what the informers hold: of all Secrets, only API
// keys, so the server never lists or caches the cluster's other Secrets.
func CacheOptions() cache.Options {
	req, err := labels.NewRequirement(webserver.APIKeyIDLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {Label: labels.NewSelector().Add(*req)},
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
	return nil
}

// AddControllers registers the reconcilers on mgr. The returned wait blocks
// until in-process solves have stopped after ctx ends.
func AddControllers(ctx context.Context, mgr manager.Manager, o RunnerOptions) (wait func(), err error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &controllers.OptimizationReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("routeopt-controller"),
		Clock:     clock.RealClock{},

		MaxConcurrent: o.MaxConcurrent,
		Retention:     o.Retention,
	}
	wait = func() {}
	providers := o.Providers
	if providers == nil {
		providers = defaultProviders()
	}
	switch o.Kind {
	case "job":
		r.Runner = &controllers.JobRunner{
			Client: mgr.GetClient(), Image: o.Image, Command: o.Command, ExtraArgs: providers.args(),
			QueueName: o.JobQueueName, TTLSecondsAfterFinished: 3600,
		}
		err = r.SetupWithManager(mgr, nil)
	default:
		pipeline := &solver.Pipeline{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}
		if err := providers.pipeline(pipeline); err != nil {
			return nil, err
		}
		runner := controllers.NewInProcessRunner(ctx, pipeline, o.MaxConcurrent)
		r.Runner = runner
		wait = runner.Wait
		err = r.SetupWithManager(mgr, runner.Events)
	}
	if err != nil {
		return nil, fmt.Errorf("unable to set up the optimization controller: %w", err)
	}
	return wait, nil
}

// StartAPIInformers starts the informers the REST API reads (Optimizations
// and API key Secrets) and waits until they are synced. Informers start
// lazily on first use otherwise, and a first request would wait for a full
// LIST of every Optimization, past the API's Kubernetes timeout.
func StartAPIInformers(ctx context.Context, c cache.Cache) error {
	for _, obj := range []client.Object{&v1alpha1.Optimization{}, &corev1.Secret{}} {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("unable to start the %T informer: %w", obj, err)
		}
	}
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("unable to sync the API's caches")
	}
	return nil
}
