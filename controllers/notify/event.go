package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
)

// MaxConsecutiveFailures failed events in a row disable an endpoint
// (docs/API.md, "Delivery").
const MaxConsecutiveFailures = 20

// maxMessage is the bound of a delivery record's message (the CRD's MaxLength).
const maxMessage = 512

// Pending returns the endpoints that are owed opt's event and have no
// record of it yet. Only a terminal optimization with a finishedAt owes
// anything, and only to endpoints of its own namespace that are neither
// disabled nor being deleted and were registered no later than it
// finished: an endpoint registered afterwards does not get old events.
// The answer depends only on its arguments (cached objects), so a
// reconcile with nothing pending makes no API call.
func Pending(opt *v1alpha1.Optimization, endpoints []v1alpha1.WebhookEndpoint) []*v1alpha1.WebhookEndpoint {
	if !opt.Status.State.IsTerminal() || opt.Status.FinishedAt == nil || !opt.DeletionTimestamp.IsZero() {
		return nil
	}
	var out []*v1alpha1.WebhookEndpoint
	for i := range endpoints {
		ep := &endpoints[i]
		if ep.Namespace != opt.Namespace || ep.Status.Disabled || !ep.DeletionTimestamp.IsZero() ||
			ep.CreationTimestamp.After(opt.Status.FinishedAt.Time) || hasRecord(opt, ep.UID) {
			continue
		}
		out = append(out, ep)
	}
	return out
}

// hasRecord reports whether opt's ledger has a record for endpoint uid.
func hasRecord(opt *v1alpha1.Optimization, uid types.UID) bool {
	return deliveryOf(opt, uid) != nil
}

// deliveryOf is opt's record for endpoint uid, or nil.
func deliveryOf(opt *v1alpha1.Optimization, uid types.UID) *v1alpha1.WebhookDelivery {
	for i := range opt.Status.Webhooks {
		if opt.Status.Webhooks[i].Endpoint == string(uid) {
			return &opt.Status.Webhooks[i]
		}
	}
	return nil
}

// EventID is the id of the event that optimization uid reached status:
// retried and repeated deliveries of one event keep it, and receivers
// de-duplicate on it.
func EventID(uid, status string) string {
	sum := sha256.Sum256([]byte(uid + "/" + status))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// EventType is the type of the event for a terminal status, or "".
func EventType(status string) string {
	switch status {
	case "completed":
		return webhook.EventCompleted
	case "failed":
		return webhook.EventFailed
	case "cancelled":
		return webhook.EventCancelled
	}
	return ""
}

// NewEvent is the event of opt's terminal state: identifiers and links
// only, created at status.finishedAt so that every attempt and every
// repeat carries the same body. Links are absolute under publicURL (the
// base clients reach the REST API at).
func NewEvent(opt *v1alpha1.Optimization, publicURL string) webhook.Event {
	status := string(opt.Status.State)
	self := strings.TrimRight(publicURL, "/") + "/v1/optimizations/" + opt.Name
	ev := webhook.Event{
		ID:   EventID(string(opt.UID), status),
		Type: EventType(status),
		Data: webhook.EventData{
			OptimizationID: opt.Name,
			Status:         status,
			Links:          webhook.Links{Self: self, Result: self + "/result"},
		},
	}
	if opt.Status.FinishedAt != nil {
		ev.Created = opt.Status.FinishedAt.UTC().Format(time.RFC3339)
	}
	if opt.Status.State == v1alpha1.StateFailed {
		code, msg := opt.Status.ErrorCode, opt.Status.ErrorMessage
		ev.Data.ErrorCode, ev.Data.ErrorMessage = &code, &msg
	}
	return ev
}

// EventBody is the JSON body of NewEvent: the exact bytes that are signed
// and sent.
func EventBody(opt *v1alpha1.Optimization, publicURL string) ([]byte, error) {
	return json.Marshal(NewEvent(opt, publicURL))
}

// outcome is how the delivery of one event to one endpoint ended.
type outcome struct {
	result     v1alpha1.WebhookResult
	attempts   int32
	lastStatus *int32 // HTTP status of the last attempt; nil when it got no answer
	message    string
	end        time.Time
}

// delivery is o as the ledger record of endpoint uid for event id.
func (o outcome) delivery(uid types.UID, eventID string) v1alpha1.WebhookDelivery {
	return v1alpha1.WebhookDelivery{
		Endpoint: string(uid), EventID: eventID, Result: o.result, Attempts: o.attempts,
		LastStatus: o.lastStatus, Message: clip(o.message, maxMessage),
	}
}

// nextEndpointStatus is an endpoint's status after an event ended with o:
// lastStatus follows the last attempt (absent when it got no answer), a
// delivered event resets the count of consecutive failed events, a failed
// one adds to it, and the endpoint is disabled when the count reaches
// MaxConsecutiveFailures; it stays disabled (the receiver is fixed and
// registered again). A dropped event changes nothing.
func nextEndpointStatus(cur v1alpha1.WebhookEndpointStatus, o outcome) v1alpha1.WebhookEndpointStatus {
	next := cur
	switch o.result {
	case v1alpha1.WebhookDelivered:
		next.LastStatus = o.lastStatus
		next.FailureCount = 0
	case v1alpha1.WebhookFailed:
		next.LastStatus = o.lastStatus
		next.FailureCount = cur.FailureCount + 1
		if next.FailureCount >= MaxConsecutiveFailures {
			next.Disabled = true
		}
	}
	return next
}

// clip cuts s to at most n bytes without leaving half a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
