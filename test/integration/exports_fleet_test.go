package integration

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/docstore"
)

// fleetInput is an optimization's input with fleet constraints, as a
// person writes it for kubectl: orders with skills and loads, Van 1
// starting at a hub of its own with a break, Van 2 ending at its last stop;
// each can carry half the orders, so both are used.
func fleetInput() *v1alpha1.Input {
	coords := [][2]float64{{52.5301, 13.3849}, {52.5163, 13.3777}, {52.5076, 13.4370}, {52.4990, 13.4180}, {52.5250, 13.4100}, {52.5400, 13.4120}}
	in := &v1alpha1.Input{}
	for i, c := range coords {
		o := v1alpha1.Order{
			ID: fmt.Sprintf("F-%d", i+1), Latitude: ptr.To(c[0]), Longitude: ptr.To(c[1]),
			Loads: []v1alpha1.DimensionLoad{{Name: "volume_l", Value: float64(5 * (i + 1))}, {Name: "weight_kg", Value: float64(10 * (i + 1))}},
		}
		if i%2 == 0 {
			o.Skills = []string{"fridge"}
		}
		in.Orders = append(in.Orders, o)
	}
	capacities := []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 500}, {Name: "weight_kg", Value: 500}}
	in.Vehicles = []v1alpha1.Vehicle{
		{ID: "Van 1", Capacity: 3, VehicleConstraints: v1alpha1.VehicleConstraints{
			Skills: []string{"fridge"}, Capacities: capacities,
			Breaks: []v1alpha1.Break{{Start: "08:00", End: "18:00", Minutes: 30}},
			Start:  &v1alpha1.Location{Label: ptr.To("Hub Nord"), Latitude: ptr.To(52.54), Longitude: ptr.To(13.36)},
		}},
		{ID: "Van 2", Capacity: 3, VehicleConstraints: v1alpha1.VehicleConstraints{
			Skills: []string{"fridge"}, Capacities: capacities, OpenEnd: ptr.To(true),
		}},
	}
	return in
}

// The download of an optimization with fleet constraints takes each
// order's skills and loads, and the vehicles' start labels, from its input
// ConfigMap; the result's start, breaks and open end become rows. The
// stored result gets its routes' start, end and breaks written into it
// here, so the rows are known whatever the solver planned.
func TestExportFleetConstraints(t *testing.T) {
	s := startSystem(t, "inprocess")
	ctx := context.Background()
	in := fleetInput()
	doc, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	name := uuid.NewString()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: name + "-orders"}, Data: map[string]string{v1alpha1.InputPlainKey: string(doc)}}
	if err := k8sClient.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: name},
		Spec: v1alpha1.OptimizationSpec{
			Depot:   v1alpha1.Depot{Label: ptr.To("Depot"), Latitude: ptr.To(52.52), Longitude: ptr.To(13.405)},
			Input:   &v1alpha1.InputRef{Name: cm.Name, Orders: int32(len(in.Orders)), Vehicles: int32(len(in.Vehicles))},
			Options: &v1alpha1.Options{SolverSeconds: ptr.To[int32](1)},
		},
	}
	if err := k8sClient.Create(ctx, opt); err != nil {
		t.Fatal(err)
	}
	if cur := waitTerminal(t, s, opt, 60*time.Second); cur.Status.State != v1alpha1.StateCompleted {
		t.Fatalf("state %s (%s)", cur.Status.State, cur.Status.ErrorMessage)
	}
	res, err := docstore.ReadResult(ctx, k8sClient, opt, true)
	if err != nil {
		t.Fatal(err)
	}
	hub := &v1alpha1.Place{Latitude: 52.54, Longitude: 13.36}
	depot := &v1alpha1.Place{Latitude: 52.52, Longitude: 13.405}
	want := map[string][]string{} // per vehicle, the Activity column
	for i := range res.Routes {
		r := &res.Routes[i]
		if len(r.Stops) == 0 {
			continue
		}
		acts := slices.Repeat([]string{"Stop"}, len(r.Stops))
		switch r.VehicleRef {
		case "Van 1":
			r.Start, r.End = hub, v1alpha1.RouteEnd{At: depot}
			r.Breaks = []v1alpha1.RouteBreak{{StartS: r.Stops[0].DepartS, EndS: r.Stops[0].DepartS + 1800, AfterSeq: r.Stops[0].Seq}}
			acts = slices.Concat([]string{"Start", "Stop", "Break 30 min, " + clockOf(r.Stops[0].DepartS) + "–" + clockOf(r.Stops[0].DepartS+1800)}, acts[1:], []string{"End"})
		case "Van 2":
			r.Start, r.End = depot, v1alpha1.RouteEnd{Open: true}
			acts = slices.Concat([]string{"Start"}, acts, []string{"End at the last stop (open route)"})
		}
		want[r.VehicleRef] = acts
	}
	data, err := v1alpha1.EncodeResult(res)
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.ConfigMap{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: opt.ResultConfigMapName()}, stored); err != nil {
		t.Fatal(err)
	}
	// The stored form without a manifest: the whole result in one key.
	stored.Data, stored.BinaryData = nil, map[string][]byte{v1alpha1.ResultDataKey: data}
	if err := k8sClient.Update(ctx, stored); err != nil {
		t.Fatal(err)
	}

	link := s.mustExport(t, opt.Name, map[string]any{"format": "csv"})["download_url"].(string)
	d := s.fetch(t, s.url, link, nil)
	if d.status != http.StatusOK {
		t.Fatalf("%d %s", d.status, d.body)
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(d.body, []byte("\uFEFF")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := rows[0]
	for _, h := range []string{"Activity", "Skills", "volume_l", "weight_kg"} {
		if !slices.Contains(header, h) {
			t.Fatalf("the csv has no %s column: %q", h, header)
		}
	}
	col := func(r []string, name string) string { return r[slices.Index(header, name)] }
	got := map[string][]string{}
	for _, r := range rows[1:] {
		v := col(r, "Vehicle")
		got[v] = append(got[v], col(r, "Activity"))
		switch col(r, "Activity") {
		case "Stop":
			var n int
			if _, err := fmt.Sscanf(col(r, "Order ref"), "F-%d", &n); err != nil {
				t.Fatalf("row %q: order ref: %v", r, err)
			}
			wantSkills := ""
			if (n-1)%2 == 0 {
				wantSkills = "fridge"
			}
			if col(r, "Skills") != wantSkills || col(r, "weight_kg") != fmt.Sprint(10*n) || col(r, "volume_l") != fmt.Sprint(5*n) {
				t.Errorf("F-%d: skills %q, weight_kg %q, volume_l %q; the request gave %q, %d, %d",
					n, col(r, "Skills"), col(r, "weight_kg"), col(r, "volume_l"), wantSkills, 10*n, 5*n)
			}
		case "Start":
			wantPlace := "Depot"
			if v == "Van 1" {
				wantPlace = "Hub Nord"
			}
			if col(r, "Address") != wantPlace {
				t.Errorf("%s starts at %q, want %q (the label of the request)", v, col(r, "Address"), wantPlace)
			}
		}
	}
	for v, acts := range want {
		if !slices.Equal(got[v], acts) {
			t.Errorf("%s: rows %s, want %s", v, strings.Join(got[v], " | "), strings.Join(acts, " | "))
		}
	}
	if len(want) != 2 || len(got) != len(want) {
		t.Errorf("the csv lists vehicles %v, want the routes' %v", got, want)
	}
}

func clockOf(s int) string { return fmt.Sprintf("%02d:%02d", s/3600, s/60%60) }
