// Package v1alpha1 holds the routeopt.io/v1alpha1 API: Optimization and
// WebhookEndpoint. An Optimization's spec is the REST create request in
// camelCase; its status is the record the REST API serves.
//
// The package imports apimachinery only, so clients can vendor it cheaply.
// +kubebuilder:object:generate=true
// +groupName=routeopt.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "routeopt.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Optimization{}, &OptimizationList{},
		&WebhookEndpoint{}, &WebhookEndpointList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
