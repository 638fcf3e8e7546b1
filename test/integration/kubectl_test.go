package integration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/test/requests"
	"routeopt.io/routeopt/webserver"
)

// An Optimization created with kubectl under a name the REST API cannot
// serve (its ids are lowercase UUIDs) is refused, saying why.
func TestKubectlOptimizationNames(t *testing.T) {
	ns := "kubectl-names-" + randomHex(4)
	ctx := context.Background()
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"my-plan", false},
		{id + "-x", false},
		{strings.ReplaceAll(id, "-", ""), false},
		{id, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: c.name}, Spec: crSpec()}
			opt.Spec.Cancel = true // no manager watches ns; keep it inert all the same
			err := k8sClient.Create(ctx, opt)
			switch {
			case c.ok:
				if err != nil {
					t.Fatalf("a lowercase UUID is refused: %v", err)
				}
			case !apierrors.IsInvalid(err):
				t.Fatalf("create %q: %v, want invalid", c.name, err)
			case !strings.Contains(err.Error(), "metadata.name must be a lowercase UUID (the optimization id the REST API serves)"):
				t.Errorf("create %q: %v, want the CRD's reason", c.name, err)
			}
		})
	}
}

// keysInDescendingIDOrder returns n Idempotency-Keys whose optimization ids
// in namespace sort in reverse: were the queue to break a tie on the
// creation second by id, it would start them last first.
func keysInDescendingIDOrder(namespace string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "fifo-key-" + randomHex(6)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return strings.Compare(webserver.OptimizationID(namespace, b), webserver.OptimizationID(namespace, a))
	})
	return keys
}

// Four REST creates within one creation second start in the order they
// were made, not in the order of their ids.
func TestQueueOrderWithinASecond(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "job", MaxConcurrent: 1}, nil)
	keys := keysInDescendingIDOrder(s.namespace, 4)
	// Start early in a second, so all four share creationTimestamp.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
	var opts []*v1alpha1.Optimization
	for _, k := range keys {
		opts = append(opts, createViaREST(t, s, k, requests.TenOrders(1)))
	}
	if first, last := opts[0].CreationTimestamp, opts[3].CreationTimestamp; !first.Equal(&last) {
		t.Logf("the creates spanned %v to %v: the tie is not tested", first, last)
	}
	for i, opt := range opts {
		var started int
		waitFor(t, 20*time.Second, "the next solve to start", func() (bool, error) {
			for j := i; j < len(opts); j++ {
				if current(t, opts[j]).Status.State == v1alpha1.StateRunning {
					started = j
					return true, nil
				}
			}
			return false, nil
		})
		if started != i {
			t.Fatalf("create %d started before create %d, made before it", started, i)
		}
		setJobStatus(t, waitForJob(t, opt), false, "DeadlineExceeded")
		waitForStored(t, opt, v1alpha1.StateFailed)
	}
}

// routeopt.io/state follows the state, so kubectl can select by it.
func TestKubectlStateLabel(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "job", MaxConcurrent: 1}, nil)
	a := createViaREST(t, s, "state-label-key-01", requests.TenOrders(1))
	jobA := waitForJob(t, a)
	b := createViaREST(t, s, "state-label-key-02", requests.TenOrders(1))
	waitForStored(t, b, v1alpha1.StateQueued)

	selected := func(state v1alpha1.State) []string {
		t.Helper()
		list := &v1alpha1.OptimizationList{}
		if err := k8sClient.List(context.Background(), list, client.InNamespace(s.namespace), client.MatchingLabels{v1alpha1.StateLabel: string(state)}); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range list.Items {
			names = append(names, o.Name)
		}
		return names
	}
	waitLabels := func(want map[v1alpha1.State][]string) {
		t.Helper()
		waitFor(t, 10*time.Second, "the state labels", func() (bool, error) {
			for _, st := range []v1alpha1.State{v1alpha1.StateQueued, v1alpha1.StateRunning, v1alpha1.StateFailed, v1alpha1.StateCompleted} {
				got := selected(st)
				slices.Sort(got)
				w := slices.Clone(want[st])
				slices.Sort(w)
				if !slices.Equal(got, w) {
					return false, nil
				}
			}
			return true, nil
		})
	}
	waitLabels(map[v1alpha1.State][]string{v1alpha1.StateRunning: {a.Name}, v1alpha1.StateQueued: {b.Name}})

	setJobStatus(t, jobA, false, "DeadlineExceeded")
	jobB := waitForJob(t, b)
	waitLabels(map[v1alpha1.State][]string{v1alpha1.StateFailed: {a.Name}, v1alpha1.StateRunning: {b.Name}})
	if cur := current(t, a); cur.Status.ErrorCode == "" {
		t.Errorf("a failed optimization has no errorCode: %+v", cur.Status)
	}

	// A label someone changed by hand is set right again.
	cur := current(t, a)
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Labels[v1alpha1.StateLabel] = "completed"
	if err := k8sClient.Patch(context.Background(), cur, patch); err != nil {
		t.Fatal(err)
	}
	waitLabels(map[v1alpha1.State][]string{v1alpha1.StateFailed: {a.Name}, v1alpha1.StateRunning: {b.Name}})
	setJobStatus(t, jobB, false, "DeadlineExceeded")
	waitLabels(map[v1alpha1.State][]string{v1alpha1.StateFailed: {a.Name, b.Name}})
}

// kubectl get opt shows the error code with -o wide, and a distance that
// reads as kilometres.
func TestKubectlColumns(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Name: "optimizations." + v1alpha1.GroupVersion.Group}, u); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		t.Fatal(err)
	}
	columns := map[string]apiextensionsv1.CustomResourceColumnDefinition{}
	for _, v := range crd.Spec.Versions {
		if v.Name == v1alpha1.GroupVersion.Version {
			for _, c := range v.AdditionalPrinterColumns {
				columns[c.Name] = c
			}
		}
	}
	for _, want := range []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "State", Type: "string", JSONPath: ".status.state"},
		{Name: "Error", Type: "string", JSONPath: ".status.errorCode", Priority: 1},
		{Name: "Distance", Type: "string", JSONPath: ".status.summary.distance"},
	} {
		if got := columns[want.Name]; got != want {
			t.Errorf("column %s is %+v, want %+v", want.Name, got, want)
		}
	}
}

// A client polling through a start never sees running with stage queued:
// the controller writes no stage, and the one shown is derived.
func TestRESTNeverShowsRunningQueued(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "job", MaxConcurrent: 1}, nil)
	a := createViaREST(t, s, "poll-start-key-01", requests.TenOrders(1))
	jobA := waitForJob(t, a)
	b := createViaREST(t, s, "poll-start-key-02", requests.TenOrders(1))
	waitForStored(t, b, v1alpha1.StateQueued)

	type sample struct{ status, stage any }
	samples := make(chan []sample)
	go func() {
		// Poll until the start is seen (or give up: the check below fails).
		var seen []sample
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			if code, rec, _ := s.call(t, "GET", "/v1/optimizations/"+b.Name, nil, nil); code == 200 {
				seen = append(seen, sample{rec["status"], rec["stage"]})
				if rec["status"] != string(v1alpha1.StateQueued) {
					break
				}
			}
		}
		samples <- seen
	}()
	setJobStatus(t, jobA, false, "DeadlineExceeded")
	seen := <-samples
	var queued, running int
	for _, sm := range seen {
		switch sm.status {
		case string(v1alpha1.StateQueued):
			queued++
		case string(v1alpha1.StateRunning):
			running++
			if sm.stage == string(v1alpha1.StageQueued) {
				t.Errorf("GET answered running with stage queued")
			}
		}
	}
	if queued == 0 || running == 0 {
		t.Errorf("polling saw %d queued and %d running answers: the start was not observed", queued, running)
	}
}
