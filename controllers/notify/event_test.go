package notify

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
)

var finished = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func terminalOpt(state v1alpha1.State, records ...string) *v1alpha1.Optimization {
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{
		Namespace: "tenant-acme", Name: "6f1c1a52-2a7e-4f3e-9d0e-5c0f3f1f6a01", UID: "opt-uid",
	}}
	opt.Status.State = state
	opt.Status.FinishedAt = &metav1.Time{Time: finished}
	for _, r := range records {
		opt.Status.Webhooks = append(opt.Status.Webhooks, v1alpha1.WebhookDelivery{Endpoint: r, EventID: "evt_x", Result: v1alpha1.WebhookDelivered})
	}
	return opt
}

func endpoint(uid string, created time.Time, mods ...func(*v1alpha1.WebhookEndpoint)) v1alpha1.WebhookEndpoint {
	ep := v1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{
		Namespace: "tenant-acme", Name: "webhook-" + uid, UID: types.UID(uid), CreationTimestamp: metav1.Time{Time: created},
	}}
	for _, m := range mods {
		m(&ep)
	}
	return ep
}

func TestPending(t *testing.T) {
	before, after := finished.Add(-time.Hour), finished.Add(time.Second)
	deleting := func(ep *v1alpha1.WebhookEndpoint) { ep.DeletionTimestamp = &metav1.Time{Time: finished} }
	disabled := func(ep *v1alpha1.WebhookEndpoint) { ep.Status.Disabled = true }
	otherTenant := func(ep *v1alpha1.WebhookEndpoint) { ep.Namespace = "tenant-other" }
	cases := map[string]struct {
		opt       *v1alpha1.Optimization
		endpoints []v1alpha1.WebhookEndpoint
		want      []string
	}{
		"every registered endpoint without a record": {
			opt:       terminalOpt(v1alpha1.StateCompleted),
			endpoints: []v1alpha1.WebhookEndpoint{endpoint("a", before), endpoint("b", finished)},
			want:      []string{"a", "b"},
		},
		"recorded endpoints are skipped, whatever the result": {
			opt:       terminalOpt(v1alpha1.StateFailed, "a"),
			endpoints: []v1alpha1.WebhookEndpoint{endpoint("a", before), endpoint("b", before)},
			want:      []string{"b"},
		},
		"an endpoint registered after the optimization finished gets nothing": {
			opt:       terminalOpt(v1alpha1.StateCancelled),
			endpoints: []v1alpha1.WebhookEndpoint{endpoint("a", after), endpoint("b", before)},
			want:      []string{"b"},
		},
		"disabled, deleting and other tenants' endpoints get nothing": {
			opt: terminalOpt(v1alpha1.StateCompleted),
			endpoints: []v1alpha1.WebhookEndpoint{
				endpoint("a", before, disabled), endpoint("b", before, deleting), endpoint("c", before, otherTenant), endpoint("d", before),
			},
			want: []string{"d"},
		},
		"a running optimization owes nothing": {
			opt: func() *v1alpha1.Optimization {
				o := terminalOpt(v1alpha1.StateRunning)
				o.Status.FinishedAt = nil
				return o
			}(),
			endpoints: []v1alpha1.WebhookEndpoint{endpoint("a", before)},
		},
		"a terminal optimization without finishedAt owes nothing yet": {
			opt: func() *v1alpha1.Optimization {
				o := terminalOpt(v1alpha1.StateCompleted)
				o.Status.FinishedAt = nil
				return o
			}(),
			endpoints: []v1alpha1.WebhookEndpoint{endpoint("a", before)},
		},
		"a deleted optimization owes nothing": {
			opt: func() *v1alpha1.Optimization {
				o := terminalOpt(v1alpha1.StateCompleted)
				o.DeletionTimestamp = &metav1.Time{Time: after}
				return o
			}(),
			endpoints: []v1alpha1.WebhookEndpoint{endpoint("a", before)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, ep := range Pending(tc.opt, tc.endpoints) {
				got = append(got, string(ep.UID))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventBody(t *testing.T) {
	self := "https://api.example.test/v1/optimizations/6f1c1a52-2a7e-4f3e-9d0e-5c0f3f1f6a01"
	cases := map[string]struct {
		opt  *v1alpha1.Optimization
		want string
	}{
		"completed": {
			opt: terminalOpt(v1alpha1.StateCompleted),
			want: `{"id":"` + EventID("opt-uid", "completed") + `","type":"optimization.completed","created":"2026-03-04T10:00:00Z",` +
				`"data":{"optimization_id":"6f1c1a52-2a7e-4f3e-9d0e-5c0f3f1f6a01","status":"completed","error_code":null,"error_message":null,` +
				`"links":{"self":"` + self + `","result":"` + self + `/result"}}}`,
		},
		"failed carries the error": {
			opt: func() *v1alpha1.Optimization {
				o := terminalOpt(v1alpha1.StateFailed)
				o.Status.ErrorCode, o.Status.ErrorMessage = v1alpha1.ErrorDeadlineExceeded, "the solve ran past its deadline"
				return o
			}(),
			want: `{"id":"` + EventID("opt-uid", "failed") + `","type":"optimization.failed","created":"2026-03-04T10:00:00Z",` +
				`"data":{"optimization_id":"6f1c1a52-2a7e-4f3e-9d0e-5c0f3f1f6a01","status":"failed","error_code":"deadline_exceeded","error_message":"the solve ran past its deadline",` +
				`"links":{"self":"` + self + `","result":"` + self + `/result"}}}`,
		},
		"cancelled has no error even if one was left": {
			opt: func() *v1alpha1.Optimization {
				o := terminalOpt(v1alpha1.StateCancelled)
				o.Status.ErrorCode = "stale"
				return o
			}(),
			want: `{"id":"` + EventID("opt-uid", "cancelled") + `","type":"optimization.cancelled","created":"2026-03-04T10:00:00Z",` +
				`"data":{"optimization_id":"6f1c1a52-2a7e-4f3e-9d0e-5c0f3f1f6a01","status":"cancelled","error_code":null,"error_message":null,` +
				`"links":{"self":"` + self + `","result":"` + self + `/result"}}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// A trailing slash on the public URL does not double.
			body, err := EventBody(tc.opt, "https://api.example.test/")
			if err != nil {
				t.Fatal(err)
			}
			if string(body) != tc.want {
				t.Errorf("body\n got %s\nwant %s", body, tc.want)
			}
			var ev map[string]any
			if err := json.Unmarshal(body, &ev); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(ev["id"].(string), "evt_") {
				t.Errorf("id %v does not begin evt_", ev["id"])
			}
		})
	}
	// The id is the same for every delivery of one event, and differs by state.
	a, _ := EventBody(terminalOpt(v1alpha1.StateCompleted), "https://x")
	b, _ := EventBody(terminalOpt(v1alpha1.StateCompleted), "https://x")
	c, _ := EventBody(terminalOpt(v1alpha1.StateCancelled), "https://x")
	if string(a) != string(b) || NewEvent(terminalOpt(v1alpha1.StateCompleted), "").ID == NewEvent(terminalOpt(v1alpha1.StateCancelled), "").ID || string(a) == string(c) {
		t.Error("event bodies are not stable per event")
	}
}

func TestNextEndpointStatus(t *testing.T) {
	delivered := outcome{result: v1alpha1.WebhookDelivered, lastStatus: ptr.To[int32](204)}
	failed := outcome{result: v1alpha1.WebhookFailed, lastStatus: ptr.To[int32](503)}
	timedOut := outcome{result: v1alpha1.WebhookFailed}
	dropped := outcome{result: v1alpha1.WebhookDropped}
	cases := map[string]struct {
		cur  v1alpha1.WebhookEndpointStatus
		o    outcome
		want v1alpha1.WebhookEndpointStatus
	}{
		"a delivery resets the count": {
			cur:  v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](500), FailureCount: 7},
			o:    delivered,
			want: v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](204)},
		},
		"a failed event adds one": {
			cur:  v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](500), FailureCount: 7},
			o:    failed,
			want: v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](503), FailureCount: 8},
		},
		"no answer leaves no last status": {
			cur:  v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](200)},
			o:    timedOut,
			want: v1alpha1.WebhookEndpointStatus{FailureCount: 1},
		},
		"the 20th failed event disables": {
			cur:  v1alpha1.WebhookEndpointStatus{FailureCount: MaxConsecutiveFailures - 1},
			o:    failed,
			want: v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](503), FailureCount: MaxConsecutiveFailures, Disabled: true},
		},
		"the 19th does not": {
			cur:  v1alpha1.WebhookEndpointStatus{FailureCount: MaxConsecutiveFailures - 2},
			o:    failed,
			want: v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](503), FailureCount: MaxConsecutiveFailures - 1},
		},
		"disabled stays disabled, even after a late success": {
			cur:  v1alpha1.WebhookEndpointStatus{FailureCount: MaxConsecutiveFailures, Disabled: true},
			o:    delivered,
			want: v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](204), Disabled: true},
		},
		"a dropped event changes nothing": {
			cur:  v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](500), FailureCount: 3},
			o:    dropped,
			want: v1alpha1.WebhookEndpointStatus{LastStatus: ptr.To[int32](500), FailureCount: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := nextEndpointStatus(tc.cur, tc.o)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if equalStatus(got, tc.cur) != cmp.Equal(got, tc.cur) {
				t.Errorf("equalStatus(%+v, %+v) disagrees with cmp.Equal", got, tc.cur)
			}
		})
	}
	// Twenty failed events in a row from a fresh endpoint disable it, and
	// not one fewer.
	st := v1alpha1.WebhookEndpointStatus{}
	for i := 1; i <= MaxConsecutiveFailures; i++ {
		st = nextEndpointStatus(st, failed)
		if st.Disabled != (i == MaxConsecutiveFailures) {
			t.Fatalf("after %d failed events disabled=%v", i, st.Disabled)
		}
	}
}

func TestClip(t *testing.T) {
	if got := clip("héllo", 2); got != "h" {
		t.Errorf("clip cut a UTF-8 sequence: %q", got)
	}
	if got := clip("hello", 10); got != "hello" {
		t.Errorf("clip changed a short string: %q", got)
	}
}

func TestEventID(t *testing.T) {
	const uid = "c0ffee00-0000-4000-8000-000000000001"
	id := EventID(uid, "completed")
	// evt_ and the first 16 bytes of sha256("<uid>/completed") in hex.
	if id != "evt_865597a97bc0a037d0cca7c4f6ff087a" {
		t.Errorf("EventID = %q", id)
	}
	if EventID(uid, "completed") != id {
		t.Error("EventID is not stable")
	}
	if EventID(uid, "failed") == id || EventID("c0ffee00-0000-4000-8000-000000000002", "completed") == id {
		t.Error("different events share an id")
	}
	if !regexp.MustCompile(`^evt_[0-9a-f]{32}$`).MatchString(id) {
		t.Errorf("EventID %q is not evt_ and 32 hex digits", id)
	}
}

func TestEventType(t *testing.T) {
	for status, want := range map[string]string{"completed": webhook.EventCompleted, "failed": webhook.EventFailed, "cancelled": webhook.EventCancelled, "running": "", "queued": ""} {
		if got := EventType(status); got != want {
			t.Errorf("EventType(%q) = %q, want %q", status, got, want)
		}
	}
}
