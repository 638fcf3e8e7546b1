package webserver

import (
	"time"

	"routeopt.io/routeopt/test/requests"

	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"routeopt.io/routeopt/api/v1alpha1"
	rest "routeopt.io/routeopt/webserver/schema"
)

// goldenBody was created through the API on envtest (kube-apiserver
// v1.36) in namespace goldenNamespace with Idempotency-Key goldenKey;
// goldenStored is the object etcd then held (a GET without its
// resourceVersion; etcd's value adds a newline), goldenFields its
// managedFields entry's fieldsV1.
const (
	goldenNamespace = "tenant-it-6e3798b6"
	goldenKey       = "golden-key-0001"
	goldenBody      = `{"name":"G","depot":{"label":"D<","address":"Unter den Linden 1"},"orders":[{"id":"a<\"é","address":"Alexanderplatz 1","time_window_start":"09:00","time_window_end":"10:00","notes":"x"},{"id":"b","latitude":52.5,"longitude":13.4,"demand":2.5}],"vehicles":[{"id":"v1","capacity":3,"driver":"Anna"}],"options":{"strategy":"baseline","solver_seconds":2}}`
	goldenFields    = `{"f:metadata":{"f:annotations":{".":{},"f:routeopt.io/idempotency-key-sha256":{},"f:routeopt.io/queued-at":{},"f:routeopt.io/request-sha256":{}}},"f:spec":{".":{},"f:depot":{".":{},"f:address":{},"f:label":{}},"f:name":{},"f:options":{".":{},"f:objective":{},"f:solverSeconds":{},"f:strategy":{}},"f:orders":{".":{},"k:{\"id\":\"a\\u003c\\\"é\"}":{".":{},"f:address":{},"f:demand":{},"f:id":{},"f:notes":{},"f:serviceMinutes":{},"f:timeWindowEnd":{},"f:timeWindowStart":{}},"k:{\"id\":\"b\"}":{".":{},"f:demand":{},"f:id":{},"f:latitude":{},"f:longitude":{},"f:serviceMinutes":{}}},"f:vehicles":{".":{},"k:{\"id\":\"v1\"}":{".":{},"f:capacity":{},"f:driver":{},"f:id":{},"f:shiftEnd":{},"f:shiftStart":{}}}}}`
	goldenStored    = `{"apiVersion":"routeopt.io/v1alpha1","kind":"Optimization","metadata":{"annotations":{"routeopt.io/idempotency-key-sha256":"225d61818928270d2113c286a31e8e16c3b59676b23333f2e81ff8a2b24edda7","routeopt.io/queued-at":"2026-11-23T12:25:35.123456789Z","routeopt.io/request-sha256":"05cb6edb5468095fb6d00407cf127dbd735bd551686afc433523727a9ad19b93"},"creationTimestamp":"2026-11-23T12:25:35Z","generation":1,"managedFields":[{"apiVersion":"routeopt.io/v1alpha1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:routeopt.io/idempotency-key-sha256":{},"f:routeopt.io/queued-at":{},"f:routeopt.io/request-sha256":{}}},"f:spec":{".":{},"f:depot":{".":{},"f:address":{},"f:label":{}},"f:name":{},"f:options":{".":{},"f:objective":{},"f:solverSeconds":{},"f:strategy":{}},"f:orders":{".":{},"k:{\"id\":\"a\\u003c\\\"é\"}":{".":{},"f:address":{},"f:demand":{},"f:id":{},"f:notes":{},"f:serviceMinutes":{},"f:timeWindowEnd":{},"f:timeWindowStart":{}},"k:{\"id\":\"b\"}":{".":{},"f:demand":{},"f:id":{},"f:latitude":{},"f:longitude":{},"f:serviceMinutes":{}}},"f:vehicles":{".":{},"k:{\"id\":\"v1\"}":{".":{},"f:capacity":{},"f:driver":{},"f:id":{},"f:shiftEnd":{},"f:shiftStart":{}}}}},"manager":"routeopt-api","operation":"Update","time":"2026-11-23T12:25:35Z"}],"name":"f245c1e0-52b5-55d4-b212-1aaa13835027","namespace":"tenant-it-6e3798b6","uid":"bb7e11a2-a4e4-4dac-a0bc-7c299f545b5d"},"spec":{"depot":{"address":"Unter den Linden 1","label":"D\u003c"},"name":"G","options":{"objective":"distance","solverSeconds":2,"strategy":"baseline"},"orders":[{"address":"Alexanderplatz 1","demand":1,"id":"a\u003c\"é","notes":"x","serviceMinutes":5,"timeWindowEnd":"10:00","timeWindowStart":"09:00"},{"demand":2.5,"id":"b","latitude":52.5,"longitude":13.4,"serviceMinutes":5}],"vehicles":[{"capacity":3,"driver":"Anna","id":"v1","shiftEnd":"18:00","shiftStart":"08:00"}]}}`
)

func TestCreatedFieldsMatchTheAPIServer(t *testing.T) {
	body := []byte(goldenBody)
	in, details := rest.DecodeOptimizationIn(body)
	if len(details) > 0 {
		t.Fatal(details)
	}
	opt := newOptimization(goldenNamespace, goldenKey, in)
	stampQueuedAt(opt, time.Time{})
	got, err := referenceFields(opt)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != goldenFields {
		t.Errorf("fieldsV1\n got %s\nwant %s", got, goldenFields)
	}
	size, err := StoredSizeOfRequest(goldenNamespace, goldenKey, body)
	if err != nil {
		t.Fatal(err)
	}
	// etcd holds goldenStored and a newline; the estimate counts the empty
	// status (`,"status":{}`, which the API server drops) instead.
	if want := len(goldenStored) + len(`,"status":{}`); size != want {
		t.Errorf("estimate %d, want %d (etcd holds %d)", size, want, len(goldenStored)+1)
	}
}

// referenceFields builds the FieldsV1 set createdFieldsSize measures, the
// slow way: decoded into maps, every member written out.
func referenceFields(opt *v1alpha1.Optimization) ([]byte, error) {
	meta := map[string]any{}
	if len(opt.Labels) > 0 {
		meta["labels"] = opt.Labels
	}
	if len(opt.Annotations) > 0 {
		meta["annotations"] = opt.Annotations
	}
	if len(opt.Finalizers) > 0 {
		meta["finalizers"] = opt.Finalizers
	}
	raw, err := json.Marshal(struct {
		Metadata map[string]any            `json:"metadata,omitempty"`
		Spec     v1alpha1.OptimizationSpec `json:"spec"`
	}{Metadata: meta, Spec: opt.Spec})
	if err != nil {
		return nil, err
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	writeSet(&b, v, true)
	return b.Bytes(), nil
}

func writeSet(b *bytes.Buffer, v any, root bool) {
	keys, children := []string{}, map[string]any{}
	switch v := v.(type) {
	case map[string]any:
		if !root {
			keys, children["."] = append(keys, "."), nil
		}
		for k, c := range v {
			keys, children["f:"+k] = append(keys, "f:"+k), c
		}
	case []any:
		keys, children["."] = append(keys, "."), nil
		for _, item := range v {
			if m, ok := item.(map[string]any); ok && m["id"] != nil {
				id, _ := json.Marshal(map[string]any{"id": m["id"]})
				keys, children["k:"+string(id)] = append(keys, "k:"+string(id)), item
			} else {
				val, _ := json.Marshal(item)
				keys, children["v:"+string(val)] = append(keys, "v:"+string(val)), nil
			}
		}
	}
	sort.Strings(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		switch c := children[k].(type) {
		case map[string]any, []any:
			writeSet(b, c, root && k == "f:metadata")
		default:
			b.WriteString("{}")
		}
	}
	b.WriteByte('}')
}

// The estimate is never below the size measured on envtest for requests of
// every shape (test/integration/limits_test.go measures them live), and
// stays within a few bytes of it.
func TestStoredSizeIsNeverBelowTheStoredForm(t *testing.T) {
	const ns = "tenant-it-00000000" // the integration tests' namespaces have this length
	cases := []struct {
		name   string
		body   map[string]any
		stored int // measured on envtest: etcd's value, newline included
	}{
		{"10 orders, coordinates only", requests.TenOrders(1), 3679},
		{"500 typical orders", requests.Typical(500), 257615},
		{"500 orders, every text at its maximum, ASCII", requests.AtLimits(500, 0, "x"), 944145},
		{"150 orders at maximum, 4-byte characters, 100 vehicles", requests.WithVehicles(requests.AtLimits(150, requests.MaxTextPerOrder, "😀"), 100, "é"), 1022339},
		{"100 orders at maximum, characters stored escaped", requests.Escaped(), 943325},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprintf("stored-size-%04d", i)
			got, err := StoredSizeOfRequest(ns, key, body)
			if err != nil {
				t.Fatal(err)
			}
			if got < tc.stored || got > tc.stored+64 {
				t.Errorf("estimate %d for a stored size of %d", got, tc.stored)
			}
			in, _ := rest.DecodeOptimizationIn(body)
			opt := newOptimization(ns, key, in)
			stampQueuedAt(opt, time.Time{})
			ref, err := referenceFields(opt)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(opt)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := createdFieldsSize(raw); err != nil || n != len(ref) {
				t.Errorf("createdFieldsSize %d (%v), the fields written out take %d", n, err, len(ref))
			}
		})
	}
}

func TestIsTooLargeForStorage(t *testing.T) {
	internal := func(msg string) error { return apierrors.NewInternalError(fmt.Errorf("%s", msg)) }
	// As the client decodes kube-apiserver's answer: a 500 without a reason.
	status500 := func(msg string) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: msg}}
	}
	gr := schema.GroupResource{Group: "routeopt.io", Resource: "optimizations"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		// What kube-apiserver v1.36 answered on envtest, by size.
		{status500("etcdserver: request is too large"), true},
		{status500("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2881035 vs. 2097152)"), true},
		{apierrors.NewRequestEntityTooLargeError("limit is 3145728"), true},
		{internal("etcdserver: request is too large"), true},
		{nil, false},
		{apierrors.NewNotFound(gr, "x"), false},
		{apierrors.NewAlreadyExists(gr, "x"), false},
		{status500("etcdserver: too many requests"), false},
		{status500("rpc error: code = ResourceExhausted desc = quota exceeded"), false},
	} {
		if got := isTooLargeForStorage(tc.err); got != tc.want {
			t.Errorf("isTooLargeForStorage(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestTooLargeToStoreMessage(t *testing.T) {
	msg, fields := tooLargeToStore(1812345, MaxStoredBytes)
	if !strings.Contains(msg, "stored as 1,812,345 bytes") || !strings.Contains(msg, "at most 1,500,000 bytes") {
		t.Errorf("message %q", msg)
	}
	if fields["stored_bytes"] != 1812345 || fields["max_stored_bytes"] != MaxStoredBytes {
		t.Errorf("fields %v", fields)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1500000: "1,500,000", 12345678: "12,345,678", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// The request builders below are those of test/integration/limits_test.go
// (and helpers_test.go's tenOrders), so that the sizes measured there hold.

// BenchmarkStoredSize is the cost the estimate adds to a create of the
// largest bodies.
func BenchmarkStoredSize(b *testing.B) {
	body, err := json.Marshal(requests.AtLimits(500, 1000, "é"))
	if err != nil {
		b.Fatal(err)
	}
	in, details := rest.DecodeOptimizationIn(body)
	if len(details) > 0 {
		b.Fatal(details)
	}
	opt := newOptimization("tenant-it-00000000", "bench-key-0001", in)
	stampQueuedAt(opt, time.Time{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := storedSize(opt); err != nil {
			b.Fatal(err)
		}
	}
}
