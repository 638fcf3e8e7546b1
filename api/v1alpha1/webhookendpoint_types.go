package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebhookEndpointSpec is a registered receiver of signed events.
type WebhookEndpointSpec struct {
	// url receives the events; https and public (checked by the REST API and at connect time).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=500
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="url is immutable"
	URL string `json:"url"`
	// secretName names the Secret in the same namespace that holds the signing secret.
	// +optional
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
	Spec WebhookEndpointSpec `json:"spec"`
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
