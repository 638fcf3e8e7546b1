package solver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/config/crd"
	"routeopt.io/routeopt/solver/record"
)

// DefaultInputWait is how long after an optimization's creation its solve
// waits for the ConfigMap spec.input names: the REST API writes it just
// after the Optimization, and a client whose create was cut off in between
// writes it when it retries with the same Idempotency-Key.
const DefaultInputWait = 2 * time.Minute

// InputPoll is how often a solve looks again for an input ConfigMap that
// does not exist yet.
const InputPoll = 200 * time.Millisecond

// ErrInputPending is the error of a read that found no input ConfigMap yet
// while the optimization is young enough for its create to write it.
var ErrInputPending = errors.New("its input ConfigMap does not exist yet")

// readInput reads the orders and vehicles of opt from the ConfigMap
// spec.input names, checked as the API server checks spec.orders and
// spec.vehicles: a document written by hand (kubectl) bypassed admission.
func (p *Pipeline) readInput(ctx context.Context, reader client.Reader, opt *v1alpha1.Optimization) (*v1alpha1.Input, error) {
	ref := opt.Spec.Input
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: ref.Name}, cm)
	switch {
	case apierrors.IsNotFound(err):
		wait := p.InputWait
		if wait == 0 {
			wait = DefaultInputWait
		}
		if time.Since(opt.CreationTimestamp.Time) < wait {
			return nil, fmt.Errorf("%w: ConfigMap %s", ErrInputPending, ref.Name)
		}
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s that spec.input names does not exist, %s after the optimization was created", ref.Name, wait)
	case err != nil:
		return nil, fmt.Errorf("unable to read the input ConfigMap %s: %w", ref.Name, err)
	}
	in, err := v1alpha1.DecodeInput(cm.BinaryData, cm.Data, ref.SHA256)
	if err != nil {
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s that spec.input names: %v", ref.Name, err)
	}
	if len(in.Orders) != int(ref.Orders) || len(in.Vehicles) != int(ref.Vehicles) {
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s holds %d orders and %d vehicles; spec.input says %d and %d",
			ref.Name, len(in.Orders), len(in.Vehicles), ref.Orders, ref.Vehicles)
	}
	if problems := validateInputSchema(in); len(problems) > 0 {
		return nil, record.Failf(v1alpha1.ErrorInvalidInput, "the ConfigMap %s that spec.input names is invalid: %s", ref.Name, problems)
	}
	return in, nil
}

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
// most maxReportedProblems items; "" when nothing is.
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

// describeFieldErrors lists the first maxReportedProblems errors.
func describeFieldErrors(errs field.ErrorList) string {
	parts := make([]string, 0, maxReportedProblems+1)
	for i, e := range errs {
		if i == maxReportedProblems {
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
