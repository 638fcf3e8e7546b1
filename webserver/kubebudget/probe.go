package kubebudget

import (
	"context"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Probe watches whether the API server, and etcd behind it, answer. It
// reads a named Optimization that never exists, around the cache and with
// no resourceVersion, so the API server asks etcd every time (a quorum
// read; the answer is 404). The API server's /readyz is no such evidence:
// it reuses the result of its etcd check for about a second and reports
// the last finished one while a new one hangs, so it stays ready for up to
// two seconds after etcd stops answering.
type Probe struct {
	reader    client.Reader
	namespace string

	// answered is when a probe last got an answer (Unix nanoseconds);
	// zero before any.
	answered atomic.Int64
}

// NewProbe reads the probe's Optimization in namespace through reader,
// which must read around any cache.
func NewProbe(reader client.Reader, namespace string) *Probe {
	return &Probe{reader: reader, namespace: namespace}
}

// ProbeName names the Optimization the probe reads. Reading it needs only
// the API's own permission to get Optimizations.
const ProbeName = "routeopt-api-probe"

// Answering reports whether a probe got an answer within window before now.
func (p *Probe) Answering(now time.Time, window time.Duration) bool {
	if p == nil {
		return false
	}
	at := p.answered.Load()
	return at != 0 && now.Sub(time.Unix(0, at)) <= window
}

// Run probes every interval until ctx ends, each probe bounded by timeout;
// probes overlap, so on a busy control plane answers keep coming every
// interval however long each one takes.
func (p *Probe) Run(ctx context.Context, interval, timeout time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		go p.probe(ctx, timeout)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *Probe) probe(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := p.reader.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: ProbeName}, &v1alpha1.Optimization{})
	if err != nil && !answered(err) {
		return
	}
	now := time.Now().UnixNano()
	for {
		old := p.answered.Load()
		if old >= now || p.answered.CompareAndSwap(old, now) {
			return
		}
	}
}

// answered reports whether err is an answer of the API server that
// involved etcd: found or not found.
func answered(err error) bool {
	return err == nil || apierrors.IsNotFound(err)
}
