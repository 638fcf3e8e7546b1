package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/test/requests"
	"routeopt.io/routeopt/webserver"
)

// inputWait is the in-process solves' wait for a missing input ConfigMap
// in these tests, short so that the case of one never written ends soon.
const inputWait = 3 * time.Second

// waitTerminal waits until opt is terminal, in the API server and in the
// REST API's cache alike, and returns it.
func waitTerminal(t *testing.T, s *system, opt *v1alpha1.Optimization, timeout time.Duration) *v1alpha1.Optimization {
	t.Helper()
	var cur *v1alpha1.Optimization
	waitFor(t, timeout, "optimization "+opt.Name+" to finish", func() (bool, error) {
		cur = getOpt(t, opt)
		return cur.Status.State.IsTerminal(), nil
	})
	waitFor(t, 10*time.Second, "the REST API to see optimization "+opt.Name+" "+string(cur.Status.State), func() (bool, error) {
		_, rec, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name, nil, nil)
		return rec["status"] == string(cur.Status.State), nil
	})
	return cur
}

// inputConfigMap reads the ConfigMap opt's spec.input names.
func inputConfigMap(t *testing.T, opt *v1alpha1.Optimization) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: opt.Spec.Input.Name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// TestInputConfigMap: the REST API stores an optimization's orders and
// vehicles in a ConfigMap owned by it, so the Optimization every write
// rewrites stays small; a ConfigMap written by hand (kubectl) is checked as
// the API server checks inline orders, and one that is missing, changed or
// wrong fails the optimization with invalid_input instead of solving
// something else.
func TestInputConfigMap(t *testing.T) {
	s := startSystemWith(t, app.RunnerOptions{Kind: "inprocess", InputWait: inputWait}, nil)
	ctx := context.Background()

	t.Run("the REST API stores orders and vehicles apart", func(t *testing.T) {
		body := requests.TenOrders(1)
		delete(body, "fleet")
		body["vehicles"] = []map[string]any{{"id": "van-1", "capacity": 12, "driver": "Ann"}, {"id": "van-2", "capacity": 12}}
		opt := createViaREST(t, s, "input-rest-0001", body)
		ref := opt.Spec.Input
		if opt.Spec.Orders != nil || opt.Spec.Vehicles != nil || ref == nil {
			t.Fatalf("spec lists orders or vehicles inline, or has no input: %+v", opt.Spec)
		}
		if ref.Name != opt.Name+"-input" || ref.Orders != 10 || ref.Vehicles != 2 || len(ref.SHA256) != 64 {
			t.Errorf("spec.input = %+v", ref)
		}
		cm := inputConfigMap(t, opt)
		if owner := metav1.GetControllerOf(cm); owner == nil || owner.UID != opt.UID || owner.Kind != "Optimization" {
			t.Errorf("input ConfigMap's controller %+v, want the optimization %s", owner, opt.UID)
		}
		if cm.Labels[v1alpha1.OptimizationLabel] != opt.Name {
			t.Errorf("labels %v", cm.Labels)
		}
		in, err := v1alpha1.DecodeInput(cm.BinaryData, cm.Data, ref.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Orders) != 10 || in.Orders[0].ID != "A-1" || *in.Orders[0].Demand != 2 || len(in.Vehicles) != 2 || *in.Vehicles[0].Driver != "Ann" {
			t.Errorf("input document %+v", in)
		}
		status, rec, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name, nil, nil)
		if status != 200 || rec["orders"] != float64(10) || rec["vehicles"] != float64(2) {
			t.Errorf("record %d %v", status, rec)
		}
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s (%s)", cur.Status.State, cur.Status.ErrorMessage)
		}
		status, res, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result", nil, nil)
		if status != 200 || res["kpis"].(map[string]any)["orders_total"] != float64(10) || len(res["kpis"].(map[string]any)["per_vehicle"].([]any)) != 2 {
			t.Errorf("result %d %v", status, res["kpis"])
		}
	})

	t.Run("a retried create writes an input its first attempt did not", func(t *testing.T) {
		s.stopManager()
		defer s.startManager(t)
		body := requests.TenOrders(1)
		opt := createViaREST(t, s, "input-retry-0001", body)
		// A create cut off after the Optimization: its input is gone.
		if err := k8sClient.Delete(ctx, inputConfigMap(t, opt)); err != nil {
			t.Fatal(err)
		}
		status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "input-retry-0001"})
		if status != 202 || rec["id"] != opt.Name {
			t.Fatalf("retried create: %d %v", status, rec)
		}
		if cm := inputConfigMap(t, opt); v1alpha1.SHA256Hex(cm.BinaryData[v1alpha1.InputDataKey]) != opt.Spec.Input.SHA256 {
			t.Error("the retried create wrote another input document")
		}
		s.startManager(t)
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s (%s)", cur.Status.State, cur.Status.ErrorMessage)
		}
	})

	t.Run("a retried create writes the input a started solve waits for", func(t *testing.T) {
		body := requests.TenOrders(1)
		body["name"] = "started before its input"
		s.stopManager()
		opt := createViaREST(t, s, "input-retry-0002", body)
		if err := k8sClient.Delete(ctx, inputConfigMap(t, opt)); err != nil {
			t.Fatal(err)
		}
		s.startManager(t)
		waitFor(t, 30*time.Second, "the solve to start", func() (bool, error) {
			return getOpt(t, opt).Status.State == v1alpha1.StateRunning, nil
		})
		status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": "input-retry-0002"})
		if status != 202 || rec["id"] != opt.Name {
			t.Fatalf("retried create: %d %v", status, rec)
		}
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s (%s)", cur.Status.State, cur.Status.ErrorMessage)
		}
	})

	t.Run("a ConfigMap made ahead of a predictable id is taken over", func(t *testing.T) {
		key := "input-ahead-0001"
		id := webserver.OptimizationID(s.namespace, key)
		planted := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: id + v1alpha1.InputConfigMapSuffix},
			Data:       map[string]string{v1alpha1.InputPlainKey: `{"orders":[{"id":"planted","latitude":1,"longitude":1}]}`},
		}
		if err := k8sClient.Create(ctx, planted); err != nil {
			t.Fatal(err)
		}
		opt := createViaREST(t, s, key, requests.TenOrders(1))
		cm := inputConfigMap(t, opt)
		if _, ok := cm.Data[v1alpha1.InputPlainKey]; ok {
			t.Error("the planted document is still there")
		}
		if owner := metav1.GetControllerOf(cm); owner == nil || owner.UID != opt.UID {
			t.Errorf("input ConfigMap's controller %+v, want the optimization", owner)
		}
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s (%s)", cur.Status.State, cur.Status.ErrorMessage)
		}
	})

	// A spec written by hand, with its input ConfigMap.
	handmade := func(t *testing.T, doc string, ref v1alpha1.InputRef, fleet bool) *v1alpha1.Optimization {
		t.Helper()
		name := uuid.NewString()
		if ref.Name == "" {
			ref.Name = name + "-orders"
		}
		if doc != "" {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: ref.Name}, Data: map[string]string{v1alpha1.InputPlainKey: doc}}
			if err := k8sClient.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		opt := &v1alpha1.Optimization{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: name},
			Spec:       v1alpha1.OptimizationSpec{Depot: v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)}, Input: &ref},
		}
		if fleet {
			opt.Spec.Fleet = &v1alpha1.Fleet{Count: 1, Capacity: 10}
		}
		if err := k8sClient.Create(ctx, opt); err != nil {
			t.Fatal(err)
		}
		return opt
	}
	orders := func(extra string) string {
		return `{"orders":[{"id":"A-1","latitude":52.53,"longitude":13.38},{"id":"A-2","latitude":52.51,"longitude":13.41,"timeWindowStart":"09:00","timeWindowEnd":"12:00"}` + extra + `]`
	}

	t.Run("a ConfigMap written by hand is solved", func(t *testing.T) {
		opt := handmade(t, orders("")+`,"vehicles":[{"id":"van-1","capacity":5}]}`, v1alpha1.InputRef{Orders: 2, Vehicles: 1}, false)
		cur := waitTerminal(t, s, opt, 60*time.Second)
		if cur.Status.State != v1alpha1.StateCompleted || cur.Status.OrderCount != 2 || cur.Status.VehicleCount != 1 {
			t.Fatalf("state %s (%s), %d orders, %d vehicles", cur.Status.State, cur.Status.ErrorMessage, cur.Status.OrderCount, cur.Status.VehicleCount)
		}
	})

	t.Run("the samples are solved", func(t *testing.T) {
		for _, file := range []string{"routeopt_v1alpha1_optimization.yaml", "routeopt_v1alpha1_optimization_input.yaml"} {
			raw, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", file))
			if err != nil {
				t.Fatal(err)
			}
			var opt *v1alpha1.Optimization
			for _, doc := range strings.Split(string(raw), "\n---\n") {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				u.SetNamespace(s.namespace)
				if u.GetKind() == "Optimization" {
					u.SetName(uuid.NewString())
					opt = &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: u.GetName()}}
				}
				if err := k8sClient.Create(ctx, u); err != nil {
					t.Fatalf("%s: %v", file, err)
				}
			}
			if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
				t.Errorf("%s: state %s (%s)", file, cur.Status.State, cur.Status.ErrorMessage)
			}
		}
	})

	t.Run("fails with invalid_input", func(t *testing.T) {
		sum := strings.Repeat("0", 64)
		for name, tc := range map[string]struct {
			doc   string
			ref   v1alpha1.InputRef
			fleet bool
			want  string
		}{
			"latitude 91": {
				doc: orders(`,{"id":"A-3","latitude":91,"longitude":13}`) + `}`, ref: v1alpha1.InputRef{Orders: 3}, fleet: true,
				want: "orders[2].latitude: Invalid value: 91: orders[2].latitude in body should be less than or equal to 90",
			},
			"duplicate order ids": {
				doc: orders(`,{"id":"A-2","latitude":52,"longitude":13}`) + `}`, ref: v1alpha1.InputRef{Orders: 3}, fleet: true,
				want: `orders[2]: Duplicate value: {"id":"A-2"}`,
			},
			"time window not HH:MM": {
				doc: orders(`,{"id":"A-3","latitude":52,"longitude":13,"timeWindowEnd":"25:00"}`) + `}`, ref: v1alpha1.InputRef{Orders: 3}, fleet: true,
				want: "orders[2].timeWindowEnd",
			},
			"a misspelt field": {
				doc: orders(`,{"id":"A-3","latitude":52,"longitude":13,"servicMinutes":4}`) + `}`, ref: v1alpha1.InputRef{Orders: 3}, fleet: true,
				want: `unknown field "servicMinutes"`,
			},
			"a cross-field rule": {
				doc: orders(`,{"id":"A-3","latitude":52}`) + `}`, ref: v1alpha1.InputRef{Orders: 3}, fleet: true,
				want: `order "A-3": latitude and longitude must be given together`,
			},
			"vehicles and fleet": {
				doc: orders("") + `,"vehicles":[{"id":"van-1","capacity":5}]}`, ref: v1alpha1.InputRef{Orders: 2}, fleet: true,
				want: "holds 2 orders and 1 vehicles; spec.input says 2 and 0",
			},
			"counts that do not match": {
				doc: orders("") + `}`, ref: v1alpha1.InputRef{Orders: 3}, fleet: true,
				want: "holds 2 orders and 0 vehicles; spec.input says 3 and 0",
			},
			"a document that is not the recorded one": {
				doc: orders("") + `}`, ref: v1alpha1.InputRef{Orders: 2, SHA256: sum}, fleet: true,
				want: "has no binaryData input.json.gz, whose SHA-256 spec.input records",
			},
			"no ConfigMap": {
				ref: v1alpha1.InputRef{Orders: 2}, fleet: true,
				want: "that spec.input names does not exist, 3s after the optimization was created",
			},
		} {
			t.Run(name, func(t *testing.T) {
				opt := handmade(t, tc.doc, tc.ref, tc.fleet)
				cur := waitTerminal(t, s, opt, 60*time.Second)
				if cur.Status.State != v1alpha1.StateFailed || cur.Status.ErrorCode != v1alpha1.ErrorInvalidInput || !strings.Contains(cur.Status.ErrorMessage, tc.want) {
					t.Errorf("state %s, errorCode %q, errorMessage %q; want failed, invalid_input, a message containing %q",
						cur.Status.State, cur.Status.ErrorCode, cur.Status.ErrorMessage, tc.want)
				}
			})
		}
	})

	t.Run("refused at admission", func(t *testing.T) {
		base := func() v1alpha1.OptimizationSpec {
			return v1alpha1.OptimizationSpec{
				Depot: v1alpha1.Depot{Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
				Input: &v1alpha1.InputRef{Name: "orders", Orders: 2},
				Fleet: &v1alpha1.Fleet{Count: 1, Capacity: 10},
			}
		}
		for name, tc := range map[string]struct {
			mutate func(*v1alpha1.OptimizationSpec)
			want   string
		}{
			"orders and input": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Orders = crSpec().Orders },
				want:   "exactly one of orders and input is required",
			},
			"neither orders nor input": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Input = nil },
				want:   "exactly one of orders and input is required",
			},
			"input with inline vehicles": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Fleet, sp.Vehicles = nil, crSpec().Vehicles },
				want:   "with input, the vehicles are in its ConfigMap",
			},
			"input without vehicles and without fleet": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Fleet = nil },
				want:   "exactly one of vehicles and fleet is required",
			},
			"input with vehicles and a fleet": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Input.Vehicles = 2 },
				want:   "exactly one of vehicles and fleet is required",
			},
			"501 orders": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Input.Orders = 501 },
				want:   "spec.input.orders",
			},
			"a SHA-256 that is not one": {
				mutate: func(sp *v1alpha1.OptimizationSpec) { sp.Input.SHA256 = "abc" },
				want:   "spec.input.sha256",
			},
		} {
			t.Run(name, func(t *testing.T) {
				spec := base()
				tc.mutate(&spec)
				opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: spec}
				err := k8sClient.Create(ctx, opt)
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("create: %v; want Invalid mentioning %q", err, tc.want)
				}
			})
		}
		// input is immutable, as the rest of the request.
		opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: uuid.NewString()}, Spec: base()}
		opt.Spec.Cancel = true // nothing to solve
		if err := k8sClient.Create(ctx, opt); err != nil {
			t.Fatal(err)
		}
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"input":{"name":"other"}}}`))
		if err := k8sClient.Patch(ctx, opt, patch); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "input is immutable") {
			t.Errorf("patching spec.input: %v, want Invalid: input is immutable", err)
		}
	})

	t.Run("the driver sheet reads the orders from the input", func(t *testing.T) {
		body := requests.TenOrders(1)
		body["orders"].([]map[string]any)[0]["customer"] = "Café Kranzler"
		opt := createViaREST(t, s, "input-export-0001", body)
		if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
			t.Fatalf("state %s", cur.Status.State)
		}
		link := s.mustExport(t, opt.Name, map[string]any{"format": "csv"})["download_url"].(string)
		d := s.fetch(t, s.url, link, nil)
		if d.status != 200 || !strings.Contains(string(d.body), "Café Kranzler") {
			t.Errorf("download %d; the sheet lacks the order's customer:\n%s", d.status, d.body)
		}
	})
}
