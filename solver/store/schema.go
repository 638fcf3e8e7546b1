package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/solver/record"
)

// inputSchema is the CRD's schema of spec.orders and spec.vehicles, as one
// object, compiled once.
var inputSchema struct {
	once       sync.Once
	validator  apiservervalidation.SchemaValidator
	structural *structuralschema.Structural
	err        error
}

// validateInputSchema checks in against the schema the API server holds
// spec.orders and spec.vehicles to (lengths, ranges, HH:MM patterns, unique
// ids, at most 500 orders and 100 vehicles), and says what is wrong, at
// most record.MaxListedProblems items; "" when nothing is.
func validateInputSchema(in *v1alpha1.Input) string {
	inputSchema.once.Do(compileInputSchema)
	if inputSchema.err != nil {
		return "its schema could not be compiled: " + inputSchema.err.Error()
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
	if err != nil {
		return err.Error()
	}
	errs := apiservervalidation.ValidateCustomResource(nil, obj, inputSchema.validator)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, inputSchema.structural, obj)...)
	if len(errs) == 0 {
		return ""
	}
	return describeFieldErrors(errs)
}

// describeFieldErrors lists the first record.MaxListedProblems errors.
func describeFieldErrors(errs field.ErrorList) string {
	parts := make([]string, 0, record.MaxListedProblems+1)
	for i, e := range errs {
		if i == record.MaxListedProblems {
			parts = append(parts, fmt.Sprintf("and %d more", len(errs)-i))
			break
		}
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}

func compileInputSchema() {
	props, err := specSchemaProperties()
	if err != nil {
		inputSchema.err = err
		return
	}
	orders, vehicles := props["orders"], props["vehicles"]
	v1 := &apiextensionsv1.JSONSchemaProps{
		Type:       "object",
		Required:   []string{"orders"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"orders": orders, "vehicles": vehicles},
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		inputSchema.err = err
		return
	}
	if inputSchema.validator, _, err = apiservervalidation.NewSchemaValidator(internal); err != nil {
		inputSchema.err = err
		return
	}
	inputSchema.structural, inputSchema.err = structuralschema.NewStructural(internal)
}

// specSchemaProperties are the properties of the Optimization CRD's spec.
func specSchemaProperties() (map[string]apiextensionsv1.JSONSchemaProps, error) {
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	for _, c := range crds {
		if c.Spec.Names.Kind != "Optimization" {
			continue
		}
		for _, v := range c.Spec.Versions {
			if v.Name == v1alpha1.GroupVersion.Version && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				return v.Schema.OpenAPIV3Schema.Properties["spec"].Properties, nil
			}
		}
	}
	return nil, errors.New("the Optimization CRD has no schema for " + v1alpha1.GroupVersion.Version)
}
