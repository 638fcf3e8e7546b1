package controllers

import (
	"context"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// Inside a tenant namespace the manager acts through the RoleBinding that
// `routeopt tenant create` makes to routeopt-manager-tenant (generated from
// these markers): it creates each solve's Job and the identity the Job runs
// as, reads the Job's pods to tell why one failed, and keeps the result and
// geocoding-cache ConfigMaps. Nothing is cached: every read is direct.
// +kubebuilder:rbac:roleName=routeopt-manager-tenant,groups=batch,resources=jobs,verbs=get;create;delete
// +kubebuilder:rbac:roleName=routeopt-manager-tenant,groups="",resources=pods,verbs=list
// +kubebuilder:rbac:roleName=routeopt-manager-tenant,groups="",resources=configmaps,verbs=get;create;update;patch
// +kubebuilder:rbac:roleName=routeopt-manager-tenant,groups="",resources=serviceaccounts,verbs=create;delete
// +kubebuilder:rbac:roleName=routeopt-manager-tenant,groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=create;delete

// jobDeadlineMargin is added to the solver budget for the matrix, storing
// and pod start-up before Kubernetes kills a solve Job. Geocoding is not in
// it: the manager geocodes before it creates the Job (Geocoding), bounded
// by its own estimate at the configured rate.
const jobDeadlineMargin = 120

// jobBackoffLimit bounds retries of pod failures that the pod failure policy
// neither ignores (disruptions) nor fails at once (any exit of the solver).
const jobBackoffLimit = 2

// solverContainer names the solve container, for the pod failure policy.
const solverContainer = "solve"

// SolveResources are a solve pod's requests and limits. Memory requests
// grow with the problem (a 500-order problem asks for MemoryRequest, an
// empty one for a quarter of it); limits are fixed, since a solve that runs
// out of memory fails for good.
type SolveResources struct {
	CPURequest, CPULimit       resource.Quantity
	MemoryRequest, MemoryLimit resource.Quantity
}

// DefaultSolveResources fit the largest problem (500 orders) on two cores.
func DefaultSolveResources() SolveResources {
	return SolveResources{
		CPURequest: resource.MustParse("1"), CPULimit: resource.MustParse("2"),
		MemoryRequest: resource.MustParse("256Mi"), MemoryLimit: resource.MustParse("1Gi"),
	}
}

// For sizes the resources for a problem of orders orders.
func (r SolveResources) For(orders int) corev1.ResourceRequirements {
	orders = min(max(orders, 0), maxOrders)
	mem := r.MemoryRequest.Value() * int64(maxOrders+3*orders) / int64(4*maxOrders)
	memory := resource.NewQuantity(mem, resource.BinarySI)
	if memory.Cmp(r.MemoryLimit) > 0 {
		limit := r.MemoryLimit.DeepCopy()
		memory = &limit
	}
	req := corev1.ResourceList{corev1.ResourceCPU: r.CPURequest.DeepCopy(), corev1.ResourceMemory: *memory}
	lim := corev1.ResourceList{corev1.ResourceMemory: r.MemoryLimit.DeepCopy()}
	if !r.CPULimit.IsZero() {
		lim[corev1.ResourceCPU] = r.CPULimit.DeepCopy()
	}
	return corev1.ResourceRequirements{Requests: req, Limits: lim}
}

// maxOrders is the largest optimization the REST API accepts.
const maxOrders = 500

// JobRunner runs each solve as a batch/v1 Job executing `routeopt solve` from
// the operator's own image; Jobs spread over the cluster's nodes. Each solve
// runs as its own ServiceAccount, which may read its Optimization, write its
// status and write its result ConfigMap, nothing else.
type JobRunner struct {
	Client client.Client
	// Image is the operator's image, which contains the routeopt binary.
	Image string
	// Command is the path of the routeopt binary inside Image.
	Command string
	// ExtraArgs are appended to the solve command line (the geocoder and
	// matrix flags of the manager).
	ExtraArgs []string
	// QueueName, when set, labels Jobs for Kueue.
	QueueName string
	// TTLSecondsAfterFinished lets Kubernetes delete finished Jobs.
	TTLSecondsAfterFinished int32
	// Resources size the solve pods; the zero value means DefaultSolveResources.
	Resources *SolveResources
	// Geocoding, when set, geocodes each solve in the manager before its
	// Job is created; the Job then only reads the answers (ExtraArgs give
	// it geocode.Prefetched). Nil means Jobs geocode nothing.
	Geocoding *Geocoding
}

// JobName is the deterministic name of opt's solve Job, so a retried create
// is harmless. The solve's ServiceAccount, Role and RoleBinding share it.
func JobName(opt *v1alpha1.Optimization) string { return opt.Name + "-solve" }

// solveLabels mark everything made for opt's solve.
func (r *JobRunner) solveLabels(opt *v1alpha1.Optimization) map[string]string {
	labels := map[string]string{
		v1alpha1.OptimizationLabel:     opt.Name,
		"app.kubernetes.io/name":       "routeopt",
		"app.kubernetes.io/component":  "solver",
		"app.kubernetes.io/managed-by": "routeopt-controller",
	}
	if r.QueueName != "" {
		labels["kueue.x-k8s.io/queue-name"] = r.QueueName
	}
	return labels
}

// ConstructJob builds the desired solve Job for opt. It is pure.
func (r *JobRunner) ConstructJob(opt *v1alpha1.Optimization) *batchv1.Job {
	seconds := int(opt.Spec.EffectiveOptions().SolverBudget(orderCount(opt)).Seconds())
	command := r.Command
	if command == "" {
		command = "/routeopt"
	}
	resources := DefaultSolveResources()
	if r.Resources != nil {
		resources = *r.Resources
	}
	labels := r.solveLabels(opt)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(opt), Namespace: opt.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To[int32](jobBackoffLimit),
			ActiveDeadlineSeconds: ptr.To(int64(seconds + jobDeadlineMargin)),
			// A drained node or a preempted pod is not the solve's fault: run
			// it again. Any exit of the solver itself (its own error, a crash,
			// out of memory) would happen again: fail at once.
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{
					Action:          batchv1.PodFailurePolicyActionIgnore,
					OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
				},
				{
					Action: batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
						ContainerName: ptr.To(solverContainer), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0},
					},
				},
			}},
			// Never two solver pods at once: a replacement starts only
			// after the disrupted pod has stopped.
			PodReplacementPolicy:    ptr.To(batchv1.Failed),
			TTLSecondsAfterFinished: ptr.To(r.TTLSecondsAfterFinished),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           JobName(opt),
					AutomountServiceAccountToken: ptr.To(true),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    solverContainer,
						Image:   r.Image,
						Command: append([]string{command, "solve", "--namespace", opt.Namespace, "--name", opt.Name}, r.ExtraArgs...),
						Env: []corev1.EnvVar{{
							Name:      "GOMAXPROCS",
							ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}},
						}},
						Resources:                resources.For(orderCount(opt)),
						TerminationMessagePath:   record.TerminationMessagePath,
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	return job
}

// SolveRole is what opt's solve may do, by name: read its Optimization and
// the ConfigMap holding its orders and vehicles (spec.input), patch its
// status, read and patch its result ConfigMap, write its result
// parts (v1alpha1.ResultManifest), and read the tenant's geocoding cache
// (new answers go into its own ConfigMap; the controller merges them).
// RBAC cannot limit create by name, so create on ConfigMaps is
// namespace-wide; overwriting one needs its name. Another optimization's
// objects stay out of reach.
func SolveRole(opt *v1alpha1.Optimization) []rbacv1.PolicyRule {
	parts := make([]string, 0, v1alpha1.MaxResultParts)
	for i := 1; i <= v1alpha1.MaxResultParts; i++ {
		parts = append(parts, opt.ResultPartName(i))
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"optimizations"}, ResourceNames: []string{opt.Name}, Verbs: []string{"get"}},
		{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"optimizations/status"}, ResourceNames: []string{opt.Name}, Verbs: []string{"patch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{opt.ResultConfigMapName()}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: parts, Verbs: []string{"patch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{store.GeocodeCacheConfigMap}, Verbs: []string{"get"}},
	}
	if opt.Spec.Input != nil {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{opt.Spec.Input.Name}, Verbs: []string{"get"}})
	}
	return rules
}

// identity is opt's solve identity: a ServiceAccount, a Role of SolveRole
// and the RoleBinding between them, all owned by opt.
func (r *JobRunner) identity(opt *v1alpha1.Optimization) []client.Object {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: JobName(opt), Namespace: opt.Namespace, Labels: r.solveLabels(opt)}
	}
	return []client.Object{
		// The token is mounted into the solve pod only (the pod asks for it).
		&corev1.ServiceAccount{ObjectMeta: meta(), AutomountServiceAccountToken: ptr.To(false)},
		&rbacv1.Role{ObjectMeta: meta(), Rules: SolveRole(opt)},
		&rbacv1.RoleBinding{
			ObjectMeta: meta(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: JobName(opt)},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: JobName(opt), Namespace: opt.Namespace}},
		},
	}
}

// Start implements Runner: with Geocoding, the solve's addresses are
// geocoded first (in the background; Observe creates the Job when that
// ends); then it creates the solve's identity and the Job (existing ones
// are kept), each owned by opt.
func (r *JobRunner) Start(ctx context.Context, opt *v1alpha1.Optimization) error {
	if r.Geocoding != nil {
		if wait, err := r.Geocoding.start(ctx, opt); err != nil || wait {
			return err
		}
	}
	return r.createSolve(ctx, opt)
}

// createSolve creates opt's solve identity, then its Job.
func (r *JobRunner) createSolve(ctx context.Context, opt *v1alpha1.Optimization) error {
	for _, obj := range append(r.identity(opt), r.ConstructJob(opt)) {
		if err := controllerutil.SetControllerReference(opt, obj, r.Client.Scheme()); err != nil {
			return fmt.Errorf("unable to own solve %T: %w", obj, err)
		}
		if err := r.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("unable to create solve %T: %w", obj, err)
		}
	}
	return nil
}

// Observe implements Runner from the manager's geocoding while it runs
// (creating the Job once it has succeeded), then from the Job's conditions
// and, on failure, the pod's termination message written by `routeopt solve`.
func (r *JobRunner) Observe(ctx context.Context, opt *v1alpha1.Optimization) (Outcome, error) {
	if r.Geocoding != nil {
		if out, known := r.Geocoding.observe(opt); known {
			if out.Phase != PhaseSucceeded {
				return out, nil
			}
			if err := r.createSolve(ctx, opt); err != nil {
				return Outcome{}, err
			}
			r.Geocoding.forget(opt.UID)
			return Outcome{Phase: PhaseRunning}, nil
		}
	}
	job := &batchv1.Job{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: opt.Namespace, Name: JobName(opt)}, job)
	if apierrors.IsNotFound(err) {
		return Outcome{Phase: PhaseUnknown}, nil
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("unable to read solve job: %w", err)
	}
	if !metav1.IsControlledBy(job, opt) {
		return Outcome{}, fmt.Errorf("job %s exists but is not controlled by this optimization", job.Name)
	}
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return Outcome{Phase: PhaseSucceeded}, nil
		case batchv1.JobFailed:
			return Outcome{Phase: PhaseFailed, Failure: r.jobFailure(ctx, job, c)}, nil
		}
	}
	return Outcome{Phase: PhaseRunning}, nil
}

// jobFailure tells why a Job failed: the solver's own termination message
// when a pod left one, else the Job condition.
func (r *JobRunner) jobFailure(ctx context.Context, job *batchv1.Job, cond batchv1.JobCondition) *record.Failure {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name}); err == nil {
		for _, pod := range pods.Items {
			for _, cs := range pod.Status.ContainerStatuses {
				t := cs.State.Terminated
				if t == nil {
					continue
				}
				if f, ok := record.ParseTerminationMessage(t.Message); ok {
					return f
				}
				if t.Reason == "OOMKilled" {
					return &record.Failure{Code: v1alpha1.ErrorSolver, Message: "the solver ran out of memory (OOMKilled)"}
				}
				if t.ExitCode != 0 {
					return &record.Failure{Code: v1alpha1.ErrorSolver, Message: "the solver exited with code " + strconv.Itoa(int(t.ExitCode)) + ": " + t.Reason}
				}
			}
		}
	}
	if cond.Reason == batchv1.JobReasonDeadlineExceeded {
		return &record.Failure{Code: v1alpha1.ErrorDeadlineExceeded, Message: "the solve job ran past its deadline: " + cond.Message}
	}
	return &record.Failure{Code: v1alpha1.ErrorSolver, Message: fmt.Sprintf("the solve job failed (%s): %s", cond.Reason, cond.Message)}
}

// Stop implements Runner: it cancels the manager's geocoding and deletes
// the Job and its pods.
func (r *JobRunner) Stop(ctx context.Context, opt *v1alpha1.Optimization) error {
	if r.Geocoding != nil {
		r.Geocoding.stop(opt.UID)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: JobName(opt), Namespace: opt.Namespace}}
	err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("unable to delete solve job: %w", err)
	}
	return nil
}

// Finish implements Runner: the solve's identity goes at once, so a pod
// still running after a cancel can write nothing more; the finished Job
// is removed by its TTL.
func (r *JobRunner) Finish(ctx context.Context, opt *v1alpha1.Optimization) error {
	for _, obj := range r.identity(opt) {
		if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("unable to delete solve %T: %w", obj, err)
		}
	}
	return nil
}

// Forget implements Runner; a Job runner keeps only finished geocoding in memory.
func (r *JobRunner) Forget(opt *v1alpha1.Optimization) {
	if r.Geocoding != nil {
		r.Geocoding.forget(opt.UID)
	}
}

var _ Runner = &JobRunner{}
