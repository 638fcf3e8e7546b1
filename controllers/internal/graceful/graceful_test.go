package graceful

import (
	"context"
	"errors"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestReconciler(t *testing.T) {
	apiErr := errors.New("Patch: context canceled")
	cases := []struct {
		name    string
		ctx     func() context.Context
		res     reconcile.Result
		err     error
		wantRes reconcile.Result
		wantErr error
	}{
		{"shutdown hides the error", cancelled, reconcile.Result{}, apiErr, reconcile.Result{}, nil},
		{"a live reconcile keeps its error", context.Background, reconcile.Result{}, apiErr, reconcile.Result{}, apiErr},
		{"a deadline keeps its error", expired, reconcile.Result{}, apiErr, reconcile.Result{}, apiErr},
		{"success at shutdown keeps its result", cancelled, reconcile.Result{RequeueAfter: time.Minute}, nil, reconcile.Result{RequeueAfter: time.Minute}, nil},
		{"success keeps its result", context.Background, reconcile.Result{RequeueAfter: time.Second}, nil, reconcile.Result{RequeueAfter: time.Second}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return c.res, c.err })
			res, err := Reconciler(inner).Reconcile(c.ctx(), reconcile.Request{})
			if res != c.wantRes || !errors.Is(err, c.wantErr) { // errors.Is(err, nil) holds only for a nil err
				t.Fatalf("got %+v, %v; want %+v, %v", res, err, c.wantRes, c.wantErr)
			}
		})
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func expired() context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel() // ctx ended at its deadline already, and keeps that error
	return ctx
}
