package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Webhook endpoints live in the tenant namespace, named after one of the
// company's five slots; their signing secrets live in the operator's
// namespace, as Secrets of type WebhookSecretType labelled with their
// tenant and their endpoint's uid.
const (
	// MaxWebhookEndpoints is the limit per company (docs/API.md, "Webhooks").
	MaxWebhookEndpoints = 5
	// WebhookSecretType is the type of signing-secret Secrets.
	WebhookSecretType = "routeopt.io/webhook-signing-secret"
	// WebhookSecretKey is the data key of the signing secret.
	WebhookSecretKey = "secret"
	// WebhookEndpointUIDLabel names, on a signing-secret Secret, the uid of
	// the endpoint it signs for.
	WebhookEndpointUIDLabel = "routeopt.io/webhook-endpoint-uid"
	// SigningSecretFinalizer keeps an endpoint until its signing secret is
	// deleted, whoever deletes the endpoint.
	SigningSecretFinalizer = "routeopt.io/signing-secret"
)

// WebhookEndpointName is the name of the endpoint in slot (1 to MaxWebhookEndpoints).
func WebhookEndpointName(slot int) string { return "webhook-" + string(rune('0'+slot)) }

// WebhookEndpointSpec is a registered receiver of signed events.
type WebhookEndpointSpec struct {
	// url receives the events; https and public (checked by the REST API and at connect time).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="url is immutable"
	URL string `json:"url,omitempty"`
	// secretName names the Secret in the operator's namespace that holds the
	// signing secret (labelled with this endpoint's uid).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName,omitempty"`
}

// WebhookEndpointStatus tells how deliveries are going.
type WebhookEndpointStatus struct {
	// lastStatus is the HTTP status of the last attempt, absent before any.
	// +optional
	LastStatus *int32 `json:"lastStatus,omitempty"`
	// failureCount counts consecutive failed events.
	// +optional
	FailureCount int32 `json:"failureCount,omitempty"`
	// disabled is true after 20 consecutive failed events.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
}

// WebhookEndpoint is one registered event receiver of a tenant.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=whe,categories=routeopt
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Last",type=integer,JSONPath=`.status.lastStatus`
// +kubebuilder:printcolumn:name="Failures",type=integer,JSONPath=`.status.failureCount`
// +kubebuilder:printcolumn:name="Disabled",type=boolean,JSONPath=`.status.disabled`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WebhookEndpoint struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec is the endpoint.
	// +required
	Spec WebhookEndpointSpec `json:"spec,omitzero"`
	// status is the delivery record.
	// +optional
	Status WebhookEndpointStatus `json:"status,omitempty"`
}

// WebhookEndpointList is a list of WebhookEndpoints.
// +kubebuilder:object:root=true
type WebhookEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the list's metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the endpoints.
	Items []WebhookEndpoint `json:"items"`
}
