package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/controllers/notify/delivery"
)

// UserAgent identifies deliveries to receivers.
const UserAgent = "routeopt-webhooks/1"

// send delivers j's event after checking that it is still owed. The
// optimization is read from the API server, since the cache may lag the
// notifier's own records: it must be the same one, terminal, with no
// record for the endpoint. The endpoint must still exist and not be being
// deleted (else the job ends without a record); the cache is current
// enough for that, since a deletion also reaches the dispatcher through
// Forget, and whether it is disabled comes from the notifier's own copy of
// its status when it has one (it alone disables endpoints). It returns the
// outcome to record, or nil with a retry delay or nothing to do.
func (d *Dispatcher) send(ctx context.Context, j *job) (*outcome, time.Duration, error) {
	opt, err := d.readOptimization(ctx, j.key, j.queued)
	if err != nil {
		return nil, 0, client.IgnoreNotFound(err)
	}
	if opt.UID != j.optimization || !opt.Status.State.IsTerminal() || opt.Status.FinishedAt == nil ||
		!opt.DeletionTimestamp.IsZero() || hasRecord(opt, j.endpoint) {
		return nil, 0, nil
	}
	j.finishedAt = opt.Status.FinishedAt.Time
	j.eventID = EventID(string(opt.UID), string(opt.Status.State))

	ep := &v1alpha1.WebhookEndpoint{}
	if err := d.client.Get(ctx, types.NamespacedName{Namespace: opt.Namespace, Name: j.endpointName}, ep); err != nil {
		return nil, 0, client.IgnoreNotFound(err)
	}
	if ep.UID != j.endpoint || !ep.DeletionTimestamp.IsZero() || ep.CreationTimestamp.After(j.finishedAt) {
		return nil, 0, nil
	}
	now := d.clock.Now()
	if st := d.endpointState(ep.UID); ep.Status.Disabled || (st != nil && st.status.Disabled) {
		return &outcome{result: v1alpha1.WebhookDropped, message: "the endpoint is disabled", end: now}, 0, nil
	}
	secret, why, err := d.signingSecret(ctx, ep)
	if err != nil {
		return nil, 0, err
	}
	if secret == "" {
		if now.Sub(ep.CreationTimestamp.Time) < secretGrace {
			return nil, secretRetry, nil // the API writes it a moment after the endpoint
		}
		return &outcome{result: v1alpha1.WebhookDropped, message: why, end: now}, 0, nil
	}
	body, err := EventBody(opt, d.opts.PublicURL)
	if err != nil {
		return nil, 0, err
	}
	o := d.deliver(ctx, ep.Spec.URL, secret, body)
	return o, 0, nil
}

// readCall is one read of an optimization that several workers may share.
type readCall struct {
	started time.Time
	done    chan struct{}
	opt     *v1alpha1.Optimization
	err     error
}

// readOptimization reads an optimization from the API server. Workers of
// different endpoints that want the same optimization at the same moment
// (an event fans out to every endpoint at once) share one read, but only
// one that started after notBefore, when the caller's job was queued: the
// record it looks for is its own pair's, which this process can only have
// written before that. The caller must not modify the result.
func (d *Dispatcher) readOptimization(ctx context.Context, key types.NamespacedName, notBefore time.Time) (*v1alpha1.Optimization, error) {
	d.readMu.Lock()
	c := d.reads[key]
	if c == nil || c.started.Before(notBefore) {
		c = &readCall{started: time.Now(), done: make(chan struct{})}
		d.reads[key] = c
		go d.read(d.ctx, key, c)
	}
	d.readMu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return c.opt, c.err
	}
}

// read makes c on the dispatcher's context rather than a caller's, since
// others may wait for it, and within readTimeout.
func (d *Dispatcher) read(ctx context.Context, key types.NamespacedName, c *readCall) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	opt := &v1alpha1.Optimization{}
	if err := d.apiReader.Get(ctx, key, opt); err != nil {
		c.err = err
	} else {
		c.opt = opt
	}
	close(c.done)
	d.readMu.Lock()
	if d.reads[key] == c {
		delete(d.reads, key)
	}
	d.readMu.Unlock()
}

// readTimeout bounds a read that several workers may share.
const readTimeout = 30 * time.Second

// secretTTL is how long a signing secret read for an endpoint is used
// again without reading it anew: a burst of events to one endpoint then
// costs one read, not one per event. The value cannot change under a
// given endpoint uid (a new secret means a new endpoint), and a deleted
// endpoint's copy is dropped by Forget.
const secretTTL = 30 * time.Second

// signingSecretCopy is a signing secret as read at a time.
type signingSecretCopy struct {
	name, value string
	read        time.Time
}

// signingSecret reads ep's signing secret directly (Secrets are never
// cached by informers) and checks that the Secret is the one made for ep.
// An unusable one gives "" and the reason.
func (d *Dispatcher) signingSecret(ctx context.Context, ep *v1alpha1.WebhookEndpoint) (string, string, error) {
	if ep.Spec.SecretName == "" {
		return "", "the endpoint names no signing secret", nil
	}
	d.stateMu.Lock()
	c, ok := d.secrets[ep.UID]
	d.stateMu.Unlock()
	if ok && c.name == ep.Spec.SecretName && d.clock.Since(c.read) < secretTTL {
		return c.value, "", nil
	}
	s := &corev1.Secret{}
	err := d.apiReader.Get(ctx, types.NamespacedName{Namespace: d.opts.OperatorNamespace, Name: ep.Spec.SecretName}, s)
	if apierrors.IsNotFound(err) {
		return "", "the endpoint's signing secret is missing", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("unable to read the signing secret: %w", err)
	}
	if s.Type != v1alpha1.WebhookSecretType || s.Labels[v1alpha1.WebhookEndpointUIDLabel] != string(ep.UID) {
		return "", "the signing secret " + s.Name + " does not belong to this endpoint", nil
	}
	secret := string(s.Data[v1alpha1.WebhookSecretKey])
	if secret == "" {
		return "", "the endpoint's signing secret is empty", nil
	}
	d.stateMu.Lock()
	d.secrets[ep.UID] = signingSecretCopy{name: ep.Spec.SecretName, value: secret, read: d.clock.Now()}
	d.stateMu.Unlock()
	return secret, "", nil
}

// deliver makes up to delivery.Attempts attempts, delivery.Backoff apart,
// and returns how they ended; nil when ctx ended before an answer (the
// manager stops, or the endpoint is being deleted): nothing is recorded
// then, and the next leader sends the event again.
func (d *Dispatcher) deliver(ctx context.Context, target, secret string, body []byte) *outcome {
	o := &outcome{result: v1alpha1.WebhookFailed}
	for i := 1; i <= delivery.Attempts; i++ {
		if i > 1 {
			t := time.NewTimer(delivery.Backoff(i - 1))
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		o.attempts = int32(i)
		status, msg := d.attempt(ctx, target, secret, body)
		if status >= 200 && status < 300 {
			o.result, o.lastStatus, o.message = v1alpha1.WebhookDelivered, ptr32(status), ""
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		o.lastStatus, o.message = nil, msg
		if status != 0 {
			o.lastStatus = ptr32(status)
		}
	}
	o.end = d.clock.Now()
	return o
}

// attempt POSTs body once, signed now, within delivery.AttemptTimeout. It
// returns the HTTP status (0 when none came) and, unless it is a 2xx, why
// the attempt failed. Redirects are not followed (delivery.Client).
func (d *Dispatcher) attempt(ctx context.Context, target, secret string, body []byte) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, delivery.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, "the endpoint URL is not usable: " + err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(webhook.SignatureHeader, delivery.Sign(secret, d.clock.Now(), body))
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, describe(err)
	}
	// Draining a little lets the connection be reused; a receiver that
	// streams a large answer is not waited for.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, ""
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return resp.StatusCode, fmt.Sprintf("HTTP %d: redirects are not followed", resp.StatusCode)
	}
	return resp.StatusCode, fmt.Sprintf("HTTP %d: only a 2xx answer counts", resp.StatusCode)
}

// describe says why an attempt got no answer, without the request URL.
func describe(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Sprintf("no answer within %s", delivery.AttemptTimeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

func ptr32(n int) *int32 {
	v := int32(n)
	return &v
}
