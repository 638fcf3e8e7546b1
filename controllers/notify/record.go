package notify

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// FieldOwner is the field manager of the notifier's status writes: the
// records in an Optimization's status.webhooks and an endpoint's status.
const FieldOwner = record.FieldOwnerNotifier

// conflictRetries bounds the immediate retries of a write that lost a race
// with another writer of the same object.
const conflictRetries = 5

// batch gathers the records that wait to be written to one optimization.
type batch struct {
	writing bool
	records []v1alpha1.WebhookDelivery
	waiters []chan error
}

// record writes j's outcome into the optimization's status.webhooks.
// Server-side apply replaces the whole list a field manager owns, so the
// list sent is every record there plus the new ones, built from a fresh
// read. Writes to one optimization are serialized in the process: one
// worker writes while the records that arrive meanwhile wait and go
// together in the next write, so an event delivered to five endpoints
// costs one or two writes rather than five. The read's resourceVersion
// makes a write fail rather than drop a record that another process (a
// previous leader) wrote meanwhile.
func (d *Dispatcher) record(ctx context.Context, j *job) error {
	rec := j.done.delivery(j.endpoint, j.eventID)
	rec.Time.Time = j.done.end
	done := make(chan error, 1)
	d.batchMu.Lock()
	b := d.batches[j.optimization]
	if b == nil {
		b = &batch{}
		d.batches[j.optimization] = b
	}
	b.records = append(b.records, rec)
	b.waiters = append(b.waiters, done)
	if b.writing {
		d.batchMu.Unlock()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b.writing = true
	for len(b.records) > 0 {
		records, waiters := b.records, b.waiters
		b.records, b.waiters = nil, nil
		d.batchMu.Unlock()
		err := d.writeRecords(ctx, j.key, j.optimization, records)
		for _, w := range waiters {
			w <- err
		}
		d.batchMu.Lock()
	}
	delete(d.batches, j.optimization)
	d.batchMu.Unlock()
	return <-done
}

// writeRecords applies the optimization's records with records added or
// replaced (by endpoint), from a fresh read.
func (d *Dispatcher) writeRecords(ctx context.Context, key types.NamespacedName, uid types.UID, records []v1alpha1.WebhookDelivery) error {
	fresh := map[string]bool{}
	for _, r := range records {
		fresh[r.Endpoint] = true
	}
	for try := 0; ; try++ {
		opt := &v1alpha1.Optimization{}
		if err := d.apiReader.Get(ctx, key, opt); err != nil {
			return client.IgnoreNotFound(err)
		}
		if opt.UID != uid {
			return nil // deleted and made again: nothing to record on
		}
		list := make([]v1alpha1.WebhookDelivery, 0, len(opt.Status.Webhooks)+len(records))
		for _, r := range opt.Status.Webhooks {
			if !fresh[r.Endpoint] {
				list = append(list, r)
			}
		}
		list = append(list, records...)
		err := record.ApplyNotifier(ctx, d.client, client.ObjectKeyFromObject(opt), opt.ResourceVersion, record.NotifierStatus{Webhooks: list})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && try < conflictRetries:
			continue
		}
		return fmt.Errorf("unable to record the webhook delivery: %w", err)
	}
}

// endpointState is what the notifier last read or wrote of an endpoint's
// status. Only the notifier writes that status, so while it leads, its own
// copy is current, and a delivered event that changes nothing costs no API
// call; any other change to the endpoint moves its resourceVersion and
// the next write's conflict sends it back to a fresh read.
type endpointState struct {
	status          v1alpha1.WebhookEndpointStatus
	resourceVersion string
}

// updateEndpoint writes the endpoint's status after j's outcome (see
// nextEndpointStatus), serialized per endpoint so that concurrent workers
// count every failed event; nothing is written when nothing changes.
func (d *Dispatcher) updateEndpoint(ctx context.Context, j *job) error {
	unlock := d.endpointLocks.lock(j.endpoint)
	defer unlock()
	key := types.NamespacedName{Namespace: j.key.Namespace, Name: j.endpointName}
	state := d.endpointState(j.endpoint)
	for try := 0; ; try++ {
		if state == nil {
			ep := &v1alpha1.WebhookEndpoint{}
			if err := d.apiReader.Get(ctx, key, ep); err != nil {
				d.setEndpointState(j.endpoint, nil)
				return client.IgnoreNotFound(err)
			}
			if ep.UID != j.endpoint || !ep.DeletionTimestamp.IsZero() {
				d.setEndpointState(j.endpoint, nil)
				return nil
			}
			state = &endpointState{status: ep.Status, resourceVersion: ep.ResourceVersion}
		}
		next := nextEndpointStatus(state.status, *j.done)
		if equalStatus(next, state.status) {
			d.setEndpointState(j.endpoint, state)
			return nil
		}
		rv, err := d.applyEndpointStatus(ctx, key, state.resourceVersion, next)
		switch {
		case err == nil:
			if next.Disabled && !state.status.Disabled {
				d.log.Info("Disabled webhook endpoint after consecutive failed events", "endpoint", key, "failures", next.FailureCount)
			}
			d.setEndpointState(j.endpoint, &endpointState{status: next, resourceVersion: rv})
			return nil
		case apierrors.IsNotFound(err):
			d.setEndpointState(j.endpoint, nil)
			return nil
		case apierrors.IsConflict(err) && try < conflictRetries:
			state = nil
			continue
		}
		d.setEndpointState(j.endpoint, nil)
		return fmt.Errorf("unable to write the webhook endpoint's status: %w", err)
	}
}

// endpointState is the notifier's copy of endpoint uid's status, or nil.
func (d *Dispatcher) endpointState(uid types.UID) *endpointState {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	return d.states[uid]
}

// setEndpointState keeps (or, nil, forgets) the copy of uid's status.
func (d *Dispatcher) setEndpointState(uid types.UID, s *endpointState) {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	if s == nil {
		delete(d.states, uid)
		return
	}
	d.states[uid] = s
}

// forgetEndpoint drops what the dispatcher keeps of endpoint uid.
func (d *Dispatcher) forgetEndpoint(uid types.UID) {
	d.stateMu.Lock()
	defer d.stateMu.Unlock()
	delete(d.states, uid)
	delete(d.secrets, uid)
}

// equalStatus compares endpoint statuses by value.
func equalStatus(a, b v1alpha1.WebhookEndpointStatus) bool {
	if (a.LastStatus == nil) != (b.LastStatus == nil) || (a.LastStatus != nil && *a.LastStatus != *b.LastStatus) {
		return false
	}
	return a.FailureCount == b.FailureCount && a.Disabled == b.Disabled
}

// applyEndpointStatus server-side-applies st as the endpoint's status,
// conditional on resourceVersion, and returns the new resourceVersion.
// The notifier owns all three fields, so an absent lastStatus (the last
// attempt got no answer) is removed.
func (d *Dispatcher) applyEndpointStatus(ctx context.Context, key types.NamespacedName, resourceVersion string, st v1alpha1.WebhookEndpointStatus) (string, error) {
	status := map[string]any{"failureCount": int64(st.FailureCount), "disabled": st.Disabled}
	if st.LastStatus != nil {
		status["lastStatus"] = int64(*st.LastStatus)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "WebhookEndpoint",
		"metadata":   map[string]any{"name": key.Name, "namespace": key.Namespace, "resourceVersion": resourceVersion},
		"status":     status,
	}}
	err := d.client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership)
	return u.GetResourceVersion(), err
}
