// Package notify delivers webhook events: when an Optimization reaches
// completed, failed or cancelled, each of its tenant's endpoints that was
// registered by then gets one signed event (docs/API.md, "Webhooks").
//
// The Optimization's status.webhooks is the ledger: one record per
// endpoint, written after the delivery ended. What is owed is computed from
// the ledger, so a restarted or newly elected manager picks up exactly what
// the previous one left: an event whose record is missing is sent (again),
// one with a record never is. That makes deliveries at least once: a
// manager that stops after the receiver answered 2xx but before the record
// is written sends the event once more, with the same event id, which
// receivers de-duplicate on (docs/API.md, "Delivery").
//
// Deliveries run outside the reconcile loop, in a Dispatcher that keeps a
// queue and a few workers per endpoint, so a receiver that is slow or never
// answers holds only its own workers: other endpoints and other
// reconciles go on at full speed. Package delivery signs each attempt and
// sends it over a client that reaches only the targets the webhook policy
// (api/webhook) allows.
package notify
