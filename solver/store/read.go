package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// DefaultInputWait is how long after an optimization's creation its solve
// waits for the ConfigMap spec.input names: the REST API writes it just
// after the Optimization, and a client whose create was cut off in between
// writes it when it retries with the same Idempotency-Key.
const DefaultInputWait = 2 * time.Minute

// InputPoll is how often a solve looks again for an input ConfigMap that
// does not exist yet.
const InputPoll = 200 * time.Millisecond

// ErrInputPending is the error of a read that found no input ConfigMap yet
// while the optimization is young enough for its create to write it.
var ErrInputPending = errors.New("its input ConfigMap does not exist yet")

// ReadOptimization gets the Optimization alone through r; one that was
// cancelled or has finished gives context.Canceled, so a solve ends.
func ReadOptimization(ctx context.Context, r client.Reader, key types.NamespacedName) (*v1alpha1.Optimization, error) {
	opt := &v1alpha1.Optimization{}
	if err := r.Get(ctx, key, opt); err != nil {
		return nil, fmt.Errorf("unable to read optimization: %w", err)
	}
	if opt.Spec.Cancel || opt.Status.State.IsTerminal() {
		return nil, context.Canceled
	}
	return opt, nil
}

// Read is ReadOptimization with the orders and vehicles of the ConfigMap
// spec.input names filled into the spec. An input not written yet is
// ErrInputPending until inputWait (0: DefaultInputWait) after the
// optimization's creation, and an invalid_input Failure after it.
func Read(ctx context.Context, r client.Reader, key types.NamespacedName, inputWait time.Duration) (*v1alpha1.Optimization, error) {
	opt, err := ReadOptimization(ctx, r, key)
	if err != nil || opt.Spec.Input == nil {
		return opt, err
	}
	in, err := readInput(ctx, r, opt, inputWait)
	if err != nil {
		return nil, err
	}
	opt.Spec = opt.Spec.WithInput(in)
	return opt, nil
}

// AwaitRead is Read, waiting for an input ConfigMap that does not exist
// yet until it does or the optimization is too old to expect it.
func AwaitRead(ctx context.Context, r client.Reader, key types.NamespacedName, inputWait time.Duration) (*v1alpha1.Optimization, error) {
	for {
		opt, err := Read(ctx, r, key, inputWait)
		if !errors.Is(err, ErrInputPending) {
			return opt, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(InputPoll):
		}
	}
}

// readInput reads the orders and vehicles of opt from the ConfigMap
// spec.input names, checked as the API server checks spec.orders and
// spec.vehicles: a document written by hand (kubectl) bypassed admission.
func readInput(ctx context.Context, reader client.Reader, opt *v1alpha1.Optimization, wait time.Duration) (*v1alpha1.Input, error) {
	ref := opt.Spec.Input
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: ref.Name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		if wait == 0 {
			wait = DefaultInputWait
		}
		if time.Since(opt.CreationTimestamp.Time) < wait {
			return nil, fmt.Errorf("%w: ConfigMap %s", ErrInputPending, ref.Name)
		}
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s that spec.input names does not exist, %s after the optimization was created", ref.Name, wait)
	case err != nil:
		return nil, fmt.Errorf("unable to read the input ConfigMap %s: %w", ref.Name, err)
	}
	in, err := v1alpha1.DecodeInput(cm.BinaryData, cm.Data, ref.SHA256)
	if err != nil {
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s that spec.input names: %v", ref.Name, err)
	}
	if len(in.Orders) != int(ref.Orders) || len(in.Vehicles) != int(ref.Vehicles) {
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s holds %d orders and %d vehicles; spec.input says %d and %d",
			ref.Name, len(in.Orders), len(in.Vehicles), ref.Orders, ref.Vehicles)
	}
	if problems := validateInputSchema(in); len(problems) > 0 {
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s that spec.input names is invalid: %s", ref.Name, problems)
	}
	return in, nil
}
