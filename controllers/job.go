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
	"routeopt.io/routeopt/solver"
)

// SolverServiceAccount is the ServiceAccount (and Role, RoleBinding) the solve
// Jobs of a tenant namespace run as: it may read Optimizations, write their
// status and write result ConfigMaps in that namespace, nothing else.
const SolverServiceAccount = "routeopt-solver"

// jobDeadlineMargin is added to the solver budget for geocoding, the matrix,
// storing and pod start-up before Kubernetes kills a solve Job.
const jobDeadlineMargin = 120

// JobRunner runs each solve as a batch/v1 Job executing `routeopt solve` from
// the operator's own image; Jobs spread over the cluster's nodes.
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
}

// JobName is the deterministic name of opt's solve Job, so a retried create
// is harmless.
func JobName(opt *v1alpha1.Optimization) string { return opt.Name + "-solve" }

// ConstructJob builds the desired solve Job for opt. It is pure.
func (r *JobRunner) ConstructJob(opt *v1alpha1.Optimization) *batchv1.Job {
	seconds := solver.DefaultSolverSeconds(len(opt.Spec.Orders))
	if s := opt.Spec.EffectiveOptions().SolverSeconds; s != nil {
		seconds = int(*s)
	}
	command := r.Command
	if command == "" {
		command = "/routeopt"
	}
	labels := map[string]string{
		v1alpha1.OptimizationLabel:     opt.Name,
		"app.kubernetes.io/name":       "routeopt",
		"app.kubernetes.io/component":  "solver",
		"app.kubernetes.io/managed-by": "routeopt-controller",
	}
	if r.QueueName != "" {
		labels["kueue.x-k8s.io/queue-name"] = r.QueueName
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: JobName(opt), Namespace: opt.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(seconds + jobDeadlineMargin)),
			TTLSecondsAfterFinished: ptr.To(r.TTLSecondsAfterFinished),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           SolverServiceAccount,
					AutomountServiceAccountToken: ptr.To(true),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "solve",
						Image:   r.Image,
						Command: append([]string{command, "solve", "--namespace", opt.Namespace, "--name", opt.Name}, r.ExtraArgs...),
						Env: []corev1.EnvVar{{
							Name:      "GOMAXPROCS",
							ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}},
						}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("256Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
						},
						TerminationMessagePath:   solver.TerminationMessagePath,
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

// Start implements Runner: it makes sure the namespace's solver identity
// exists, then creates the Job (an existing one is kept).
func (r *JobRunner) Start(ctx context.Context, opt *v1alpha1.Optimization) error {
	if err := r.ensureSolverIdentity(ctx, opt.Namespace); err != nil {
		return err
	}
	job := r.ConstructJob(opt)
	if err := controllerutil.SetControllerReference(opt, job, r.Client.Scheme()); err != nil {
		return fmt.Errorf("unable to own solve job: %w", err)
	}
	if err := r.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("unable to create solve job: %w", err)
	}
	return nil
}

// ensureSolverIdentity creates the ServiceAccount, Role and RoleBinding that
// solve Jobs of namespace run with.
func (r *JobRunner) ensureSolverIdentity(ctx context.Context, namespace string) error {
	meta := metav1.ObjectMeta{Name: SolverServiceAccount, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "routeopt-controller"}}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta},
		&rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"optimizations"}, Verbs: []string{"get"}},
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"optimizations/status"}, Verbs: []string{"get", "patch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create", "update"}},
		}},
		&rbacv1.RoleBinding{
			ObjectMeta: meta,
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: SolverServiceAccount},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: SolverServiceAccount, Namespace: namespace}},
		},
	}
	for _, obj := range objs {
		if err := r.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("unable to create solver %T: %w", obj, err)
		}
	}
	return nil
}

// Observe implements Runner from the Job's conditions and, on failure, the
// pod's termination message written by `routeopt solve`.
func (r *JobRunner) Observe(ctx context.Context, opt *v1alpha1.Optimization) (Outcome, error) {
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
func (r *JobRunner) jobFailure(ctx context.Context, job *batchv1.Job, cond batchv1.JobCondition) *solver.Failure {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{"batch.kubernetes.io/job-name": job.Name}); err == nil {
		for _, pod := range pods.Items {
			for _, cs := range pod.Status.ContainerStatuses {
				t := cs.State.Terminated
				if t == nil {
					continue
				}
				if f, ok := solver.ParseTerminationMessage(t.Message); ok {
					return f
				}
				if t.Reason == "OOMKilled" {
					return &solver.Failure{Code: v1alpha1.ErrorSolver, Message: "the solver ran out of memory (OOMKilled)"}
				}
				if t.ExitCode != 0 {
					return &solver.Failure{Code: v1alpha1.ErrorSolver, Message: "the solver exited with code " + strconv.Itoa(int(t.ExitCode)) + ": " + t.Reason}
				}
			}
		}
	}
	if cond.Reason == batchv1.JobReasonDeadlineExceeded {
		return &solver.Failure{Code: v1alpha1.ErrorDeadlineExceeded, Message: "the solve job ran past its deadline: " + cond.Message}
	}
	return &solver.Failure{Code: v1alpha1.ErrorSolver, Message: fmt.Sprintf("the solve job failed (%s): %s", cond.Reason, cond.Message)}
}

// Stop implements Runner: it deletes the Job and its pods.
func (r *JobRunner) Stop(ctx context.Context, opt *v1alpha1.Optimization) error {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: JobName(opt), Namespace: opt.Namespace}}
	err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("unable to delete solve job: %w", err)
	}
	return nil
}

// Forget implements Runner; finished Jobs are removed by their TTL.
func (r *JobRunner) Forget(*v1alpha1.Optimization) {}

var _ Runner = &JobRunner{}
