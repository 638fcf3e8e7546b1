package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// optIn is an optimization in state, created at seconds after t0.
func optIn(ns, name string, state v1alpha1.State, at int) *v1alpha1.Optimization {
	return &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(at) * time.Second))},
		Status:     v1alpha1.OptimizationStatus{State: state},
	}
}

func TestSlotOf(t *testing.T) {
	deleting := func(o *v1alpha1.Optimization) *v1alpha1.Optimization {
		o.DeletionTimestamp = &metav1.Time{Time: t0}
		o.Finalizers = []string{"x"}
		return o
	}
	cancelled := func(o *v1alpha1.Optimization) *v1alpha1.Optimization { o.Spec.Cancel = true; return o }
	tests := []struct {
		opt  *v1alpha1.Optimization
		want string
	}{
		{optIn("a", "new", "", 0), ""},
		{optIn("a", "q", v1alpha1.StateQueued, 0), slotQueued},
		{cancelled(optIn("a", "q", v1alpha1.StateQueued, 0)), ""},
		{deleting(optIn("a", "q", v1alpha1.StateQueued, 0)), ""},
		{optIn("a", "r", v1alpha1.StateRunning, 0), slotRunning},
		// Its solve may still run until the controller stopped it.
		{cancelled(optIn("a", "r", v1alpha1.StateRunning, 0)), slotRunning},
		{deleting(optIn("a", "r", v1alpha1.StateRunning, 0)), slotRunning},
		{optIn("a", "c", v1alpha1.StateCompleted, 0), ""},
		{optIn("a", "f", v1alpha1.StateFailed, 0), ""},
		{optIn("a", "x", v1alpha1.StateCancelled, 0), ""},
	}
	for _, tt := range tests {
		if got := slotOf(tt.opt); got != tt.want {
			t.Errorf("%s (%s, cancel %v, deleting %v): slot %q, want %q", tt.opt.Name, tt.opt.Status.State, tt.opt.Spec.Cancel, tt.opt.DeletionTimestamp != nil, got, tt.want)
		}
	}
}

func TestLeft(t *testing.T) {
	q := optIn("a", "o", v1alpha1.StateQueued, 0)
	r := optIn("a", "o", v1alpha1.StateRunning, 0)
	done := optIn("a", "o", v1alpha1.StateCompleted, 0)
	cancelledQ := q.DeepCopy()
	cancelledQ.Spec.Cancel = true
	tests := []struct {
		name     string
		old, new *v1alpha1.Optimization
		want     bool
	}{
		{"created into the queue", optIn("a", "o", "", 0), q, false},
		{"started", q, r, true},
		{"finished", r, done, true},
		{"queued one cancelled", q, cancelledQ, true},
		{"progress while running", r, r, false},
		{"terminal stays terminal", done, done, false},
	}
	for _, tt := range tests {
		if got := left(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: left %v, want %v", tt.name, got, tt.want)
		}
	}
}

// newQueue is a solveQueue over a fake cache holding objs, indexed as the
// manager's is.
func newQueue(t *testing.T, limit int, objs ...client.Object) *solveQueue {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithIndex(&v1alpha1.Optimization{}, slotField, indexSlot).WithObjects(objs...).Build()
	return &solveQueue{reader: c, max: limit}
}

func TestSolveQueue(t *testing.T) {
	ctx := context.Background()
	cancelled := optIn("t1", "zz-cancelled", v1alpha1.StateQueued, -10)
	cancelled.Spec.Cancel = true
	objs := []client.Object{
		optIn("t1", "running", v1alpha1.StateRunning, -20),
		// Same second: the name decides, then the namespace.
		optIn("t2", "b", v1alpha1.StateQueued, 0),
		optIn("t1", "b", v1alpha1.StateQueued, 0),
		optIn("t1", "a", v1alpha1.StateQueued, 0),
		optIn("t1", "later", v1alpha1.StateQueued, 5),
		cancelled,
		optIn("t1", "new", "", -30),
	}
	for i := range 50 {
		objs = append(objs, optIn("t1", fmt.Sprintf("done-%d", i), v1alpha1.StateCompleted, -100+i))
	}
	order := []string{"t1/a", "t1/b", "t2/b", "t1/later"}

	for limit, wantHeads := range map[int][]string{0: nil, 1: nil, 2: order[:1], 3: order[:2], 10: order} {
		q := newQueue(t, limit, objs...)
		heads, err := q.heads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range heads {
			got = append(got, h.String())
		}
		if !slices.Equal(got, wantHeads) {
			t.Errorf("max %d: heads %v, want %v", limit, got, wantHeads)
		}
		for i, key := range order {
			ns, name, _ := strings.Cut(key, "/")
			free, err := q.hasSlot(ctx, optIn(ns, name, v1alpha1.StateQueued, map[string]int{"later": 5}[name]))
			if err != nil {
				t.Fatal(err)
			}
			// One runs; the i ahead of this one come first.
			if want := limit == 0 || 1+i < limit; free != want {
				t.Errorf("max %d: %s may start %v, want %v", limit, key, free, want)
			}
		}
	}

	running, queued, err := newQueue(t, 2, objs...).counts(ctx)
	if err != nil || running != 1 || queued != 4 {
		t.Errorf("counts: %d running, %d queued (%v), want 1 and 4", running, queued, err)
	}
}

func TestQueueGauges(t *testing.T) {
	objs := []client.Object{
		optIn("t1", "r1", v1alpha1.StateRunning, 0),
		optIn("t1", "q1", v1alpha1.StateQueued, 1),
		optIn("t1", "q2", v1alpha1.StateQueued, 2),
		optIn("t1", "d", v1alpha1.StateFailed, 2),
	}
	c := &queueCollector{sources: map[*solveQueue]struct{}{}}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	check := func(when string, queued, running float64) {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		got := map[string]float64{}
		for _, f := range families {
			got[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
		}
		if got["routeopt_queue_depth"] != queued || got["routeopt_running_solves"] != running || len(got) != 2 {
			t.Errorf("%s: %v, want queue depth %v, running %v", when, got, queued, running)
		}
	}
	check("without a leading manager", 0, 0)
	q := newQueue(t, 1, objs...)
	c.add(q)
	check("leading", 2, 1)
	c.remove(q)
	check("after leading", 0, 0)
}

func TestSlimOptimization(t *testing.T) {
	lat := 52.5
	full := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Name: "o", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "routeopt-api"}},
			Labels:      map[string]string{v1alpha1.StateLabel: "queued"},
			Annotations: map[string]string{v1alpha1.QueuedAtAnnotation: "2026-11-23T09:00:00.250000000Z"}},
		Spec: v1alpha1.OptimizationSpec{
			Orders:   []v1alpha1.Order{{ID: "a", Latitude: &lat, Longitude: &lat}, {ID: "b", Latitude: &lat, Longitude: &lat}},
			Vehicles: []v1alpha1.Vehicle{{ID: "v1"}, {ID: "v2"}, {ID: "v3"}},
			Cancel:   true,
			Options:  &v1alpha1.Options{SolverSeconds: ptr.To[int32](7)},
		},
	}
	out, err := SlimOptimization(full.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	slim := out.(*v1alpha1.Optimization)
	if slim.Spec.Orders != nil || slim.Spec.Vehicles != nil || slim.ManagedFields != nil {
		t.Errorf("kept %d orders, %d vehicles, %d managed fields", len(slim.Spec.Orders), len(slim.Spec.Vehicles), len(slim.ManagedFields))
	}
	if orderCount(slim) != 2 || vehicleCount(slim) != 3 {
		t.Errorf("counts %d orders, %d vehicles, want 2 and 3", orderCount(slim), vehicleCount(slim))
	}
	// The queue orders by the annotation; the state label is compared.
	if slim.Annotations[v1alpha1.QueuedAtAnnotation] == "" || slim.Labels[v1alpha1.StateLabel] != "queued" {
		t.Errorf("lost the queue's annotation or the state label: %v %v", slim.Annotations, slim.Labels)
	}
	if !slim.Spec.Cancel || *slim.Spec.EffectiveOptions().SolverSeconds != 7 {
		t.Errorf("lost what reconciling reads: %+v", slim.Spec)
	}
	// The Job of a slim copy is sized as the Job of the full object.
	r := &JobRunner{Image: "routeopt:test"}
	if a, b := r.ConstructJob(full), r.ConstructJob(slim); !equality.Semantic.DeepEqual(a.Spec.Template.Spec.Containers[0].Resources, b.Spec.Template.Spec.Containers[0].Resources) {
		t.Errorf("a slim copy's Job asks for %v, the full object's for %v", b.Spec.Template.Spec.Containers[0].Resources, a.Spec.Template.Spec.Containers[0].Resources)
	}

	fleet := &v1alpha1.Optimization{Spec: v1alpha1.OptimizationSpec{Orders: []v1alpha1.Order{}, Fleet: &v1alpha1.Fleet{Count: 4}}}
	out, _ = SlimOptimization(fleet)
	if s := out.(*v1alpha1.Optimization); vehicleCount(s) != 4 || s.Status.VehicleCount != 4 || orderCount(s) != 0 {
		t.Errorf("fleet: %d vehicles (status %d), %d orders", vehicleCount(s), s.Status.VehicleCount, orderCount(s))
	}
	if out, _ := SlimOptimization(&v1alpha1.WebhookEndpoint{}); out == nil {
		t.Error("other kinds must pass through")
	}
}

// REST creates made within one second queue in the order the API accepted
// them; kubectl ones, without the annotation, by their creation second,
// then by name.
func TestCompareQueued(t *testing.T) {
	at := func(name string, sec int, queuedAt string) *v1alpha1.Optimization {
		o := optIn("ns", name, v1alpha1.StateQueued, sec)
		if queuedAt != "" {
			o.Annotations = map[string]string{v1alpha1.QueuedAtAnnotation: queuedAt}
		}
		return o
	}
	for _, c := range []struct {
		name string
		a, b *v1alpha1.Optimization
	}{
		{"same second: accepted first, larger id", at("ff", 0, "2026-11-23T09:00:00.100000000Z"), at("00", 0, "2026-11-23T09:00:00.200000000Z")},
		{"earlier second wins over the annotation's fraction", at("ff", 0, "2026-11-23T09:00:00.900000000Z"), at("00", 1, "2026-11-23T09:00:01.000000000Z")},
		{"kubectl, same second: by name", at("00", 0, ""), at("ff", 0, "")},
		{"kubectl then REST in the same second", at("ff", 0, ""), at("00", 0, "2026-11-23T09:00:00.300000000Z")},
		{"an annotation far in the past does not jump the queue", at("00", 0, ""), at("ff", 5, "2020-01-01T00:00:00.000000000Z")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !ahead(c.a, c.b) || ahead(c.b, c.a) {
				t.Errorf("%s is not ahead of %s", c.a.Name, c.b.Name)
			}
		})
	}
}
