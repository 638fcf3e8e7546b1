// Package e2e tests routeopt as separate processes against a real control
// plane. This file proves the harness itself with real parts only: the Job
// controller, the garbage collector, ServiceAccount tokens and the Kubelet.
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/test/e2e/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	go func() { _, _ = framework.BuildRouteopt() }() // overlaps the control plane's start
	began := time.Now()
	var err error
	// ServiceAccount admission on, as in every real cluster: solve pods
	// must name a ServiceAccount that exists.
	if env, err = framework.Start(framework.Options{ServiceAccountAdmission: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane up in %s (kube-controller-manager working %s after exec)\n",
		time.Since(began).Round(time.Millisecond), env.KCMStartup.Round(time.Millisecond))
	code := m.Run()
	if code != 0 {
		framework.KeepLogs()
	}
	env.Stop()
	os.Exit(code)
}

const (
	runnerSA = "e2e-runner"
	solver   = "app.kubernetes.io/component=solver"
)

// setup makes a restricted namespace with a ServiceAccount for pods.
func setup(t *testing.T, prefix string) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ns, err := env.CreateNamespace(ctx, prefix, framework.RestrictedLabels)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.EnsureServiceAccount(ctx, ns, runnerSA); err != nil {
		t.Fatal(err)
	}
	return ctx, ns
}

// newJob is a solve-like Job: no retries except after disruptions, and a
// pod that passes the restricted Pod Security Standard.
func newJob(ns, name string, command ...string) *batchv1.Job {
	labels := map[string]string{"app.kubernetes.io/component": "solver"}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit:         ptr.To[int32](0),
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue},
				}},
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0},
				}},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: runnerSA,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "main",
						Image:   "routeopt:e2e",
						Command: command,
						Env: []corev1.EnvVar{{Name: "GOMAXPROCS", ValueFrom: &corev1.EnvVarSource{
							ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"},
						}}},
						Resources:                corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// waitJobFinished waits for the Job's Complete or Failed condition.
func waitJobFinished(ctx context.Context, t *testing.T, job *batchv1.Job) batchv1.JobCondition {
	t.Helper()
	var done batchv1.JobCondition
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err
		}
		for _, c := range job.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				done = c
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("job %s did not finish: %v; status %+v", job.Name, err, job.Status)
	}
	return done
}

func jobPods(ctx context.Context, t *testing.T, job *batchv1.Job) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

func TestJobRunsToCompletion(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-complete")
	kubelet := env.StartKubelet(t, framework.KubeletOptions{Binary: framework.Routeopt(t), Selector: solver, Namespace: ns})
	// `routeopt --help` refuses the --kubeconfig the Kubelet appends; solve
	// accepts it, as every solve Job's command does.
	job := newJob(ns, "help", "/routeopt", "solve", "--help")
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	if c := waitJobFinished(ctx, t, job); c.Type != batchv1.JobComplete {
		t.Fatalf("job finished with %s/%s: %s", c.Type, c.Reason, c.Message)
	}
	recs := kubelet.Pods()
	if len(recs) != 1 || recs[0].Action.Kind != framework.ActionRun || recs[0].ExitCode != 0 || recs[0].Phase != corev1.PodSucceeded {
		t.Fatalf("kubelet records = %+v", recs)
	}
	pods := jobPods(ctx, t, job)
	if len(pods) != 1 || pods[0].Spec.NodeName == "" || pods[0].Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pods = %+v", pods)
	}
	term := pods[0].Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.Reason != "Completed" || term.ExitCode != 0 {
		t.Errorf("container state = %+v", pods[0].Status.ContainerStatuses[0].State)
	}
	if logs, _ := os.ReadFile(recs[0].LogPath); !strings.Contains(string(logs), "Solve one Optimization") {
		t.Errorf("pod logs are not solve's help:\n%s", logs)
	}
}

func TestDisruptedPodIsReplaced(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-disrupt")
	var seen atomic.Int32
	kubelet := env.StartKubelet(t, framework.KubeletOptions{
		Binary: framework.Routeopt(t), Selector: solver, Namespace: ns,
		Decide: func(*corev1.Pod) framework.Action {
			if seen.Add(1) == 1 {
				return framework.Disrupt("DeletionByTaintManager")
			}
			return framework.Run()
		},
	})
	job := newJob(ns, "disrupted", "/routeopt", "solve", "--help")
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	if c := waitJobFinished(ctx, t, job); c.Type != batchv1.JobComplete {
		t.Fatalf("job finished with %s/%s: %s", c.Type, c.Reason, c.Message)
	}
	recs := kubelet.Pods()
	if len(recs) != 2 || recs[0].Action.Kind != framework.ActionDisrupt || recs[0].ExitCode != 137 || recs[1].Phase != corev1.PodSucceeded {
		t.Fatalf("kubelet records = %+v", recs)
	}
	t.Logf("replacement pod created %s after the disruption (the Job controller's pod failure backoff)", recs[1].Started.Sub(recs[0].Finished).Round(time.Millisecond))
	for _, pod := range jobPods(ctx, t, job) {
		if pod.Name != recs[0].Name {
			continue
		}
		found := false
		for _, c := range pod.Status.Conditions {
			found = found || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "DeletionByTaintManager")
		}
		if pod.Status.Phase != corev1.PodFailed || !found {
			t.Errorf("disrupted pod status = %+v", pod.Status)
		}
	}
}

func TestFailingPodFailsJob(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-fail")
	kubelet := env.StartKubelet(t, framework.KubeletOptions{Binary: framework.Routeopt(t), Selector: solver, Namespace: ns})
	job := newJob(ns, "failing", "/routeopt", "no-such-subcommand")
	if err := env.Client.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	if c := waitJobFinished(ctx, t, job); c.Type != batchv1.JobFailed || c.Reason != batchv1.JobReasonPodFailurePolicy {
		t.Fatalf("job finished with %s/%s: %s", c.Type, c.Reason, c.Message)
	}
	time.Sleep(2 * time.Second) // a wrong replacement would come by now
	recs := kubelet.Pods()
	if len(recs) != 1 || recs[0].ExitCode != 1 || recs[0].Phase != corev1.PodFailed {
		t.Fatalf("kubelet records = %+v", recs)
	}
	pods := jobPods(ctx, t, job)
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	// FallbackToLogsOnError: no termination log, so the log tail is the message.
	term := pods[0].Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.Reason != "Error" || !strings.Contains(term.Message, `unknown command "no-such-subcommand"`) {
		t.Errorf("container state = %+v", pods[0].Status.ContainerStatuses[0].State)
	}
}

func TestServiceAccountTokens(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-token")
	path, err := env.KubeconfigForServiceAccount(ctx, ns, runnerSA, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.CertData) != 0 || cfg.BearerToken == "" {
		t.Fatal("the kubeconfig must hold a token and no client certificate")
	}
	sa := kubernetes.NewForConfigOrDie(cfg)
	_, err = sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("listing pods as a ServiceAccount without RoleBindings: %v, want 403", err)
	}
	if _, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("admin cannot list pods: %v", err)
	}
	review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || review.Status.UserInfo.Username != "system:serviceaccount:"+ns+":"+runnerSA {
		t.Fatalf("whoami = %+v, %v", review, err)
	}

	// A token bound to a pod names the pod and dies with it.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bound", Namespace: ns},
		Spec:       newJob(ns, "x").Spec.Template.Spec,
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	bound, err := env.RESTConfigForServiceAccount(ctx, ns, runnerSA, pod)
	if err != nil {
		t.Fatal(err)
	}
	boundClient := kubernetes.NewForConfigOrDie(bound)
	review, err = boundClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || fmt.Sprint(review.Status.UserInfo.Extra["authentication.kubernetes.io/pod-name"]) != "[bound]" {
		t.Fatalf("bound whoami = %+v, %v", review, err)
	}
	if err := env.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The API server caches successful token reviews for 10s.
	deleted := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := boundClient.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return apierrors.IsUnauthorized(err), nil
	})
	if err != nil {
		t.Fatalf("the token of a deleted pod still works: %v", err)
	}
	t.Logf("the token of a deleted pod was refused %s after the deletion", time.Since(deleted).Round(time.Millisecond))
}

func TestGarbageCollector(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-gc")
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID},
	}}}
	if err := env.Client.Create(ctx, child); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(child), child)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the garbage collector did not delete the child: %v", err)
	}
}

// TestAdmission: as in a real cluster (ServiceAccount admission on), a pod
// naming a missing ServiceAccount is refused and one naming an existing
// ServiceAccount gets its projected token volume; Pod Security is enforced.
func TestAdmission(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-admission")
	spec := newJob(ns, "x").Spec.Template.Spec
	spec.ServiceAccountName = "no-such-sa"
	err := env.Client.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "missing-sa", Namespace: ns}, Spec: spec})
	if err == nil || !strings.Contains(err.Error(), "no-such-sa") {
		t.Errorf("a pod naming a missing ServiceAccount: %v, want refused", err)
	}
	spec.ServiceAccountName = runnerSA
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "with-sa", Namespace: ns}, Spec: spec}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Projected == nil || !strings.HasPrefix(pod.Spec.Volumes[0].Name, "kube-api-access-") {
		t.Errorf("volumes = %+v, want the projected kube-api-access volume", pod.Spec.Volumes)
	}
	privileged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ns}, Spec: corev1.PodSpec{
		ServiceAccountName: runnerSA,
		Containers:         []corev1.Container{{Name: "main", Image: "x"}},
	}}
	if err := env.Client.Create(ctx, privileged); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("a pod violating the restricted level: %v, want refused by PodSecurity", err)
	}
}

// TestKubeletLifecycle drives the Kubelet's other paths with /bin/sh as the
// "image" binary: env resolution and the termination log, Hold then Run,
// disrupting and deleting a running pod, and a simulated OOM kill.
func TestKubeletLifecycle(t *testing.T) {
	t.Parallel()
	ctx, ns := setup(t, "e2e-kubelet")
	kubelet := env.StartKubelet(t, framework.KubeletOptions{
		Binary: "/bin/sh", Selector: solver, Namespace: ns,
		Decide: func(pod *corev1.Pod) framework.Action {
			switch pod.Name {
			case "held":
				return framework.Hold()
			case "oom":
				return framework.Exit(137, "OOMKilled", "")
			}
			return framework.Run()
		},
	})
	newPod := func(name, script string) *corev1.Pod {
		spec := newJob(ns, "x").Spec.Template.Spec
		// $0 and $1 are the --kubeconfig and --termination-log the Kubelet appends.
		spec.Containers[0].Command = []string{"/bin/sh", "-c", script}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/component": "solver"}}, Spec: spec}
		if err := env.Client.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	waitPhase := func(name string, phase corev1.PodPhase) framework.PodRecord {
		t.Helper()
		recs, err := kubelet.WaitFor(ctx, func(recs []framework.PodRecord) bool {
			for _, r := range recs {
				if r.Name == name && r.Phase == phase {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Name == name {
				return r
			}
		}
		return framework.PodRecord{}
	}

	newPod("env", `echo "GOMAXPROCS=$GOMAXPROCS ${0%%=*}" > "${1#--termination-log=}"; exit 3`)
	if r := waitPhase("env", corev1.PodFailed); r.ExitCode != 3 || r.Message != "GOMAXPROCS=2 --kubeconfig\n" {
		t.Errorf("env pod: exit %d, message %q", r.ExitCode, r.Message)
	}

	newPod("oom", "exit 0")
	pod := &corev1.Pod{}
	if r := waitPhase("oom", corev1.PodFailed); r.ExitCode != 137 {
		t.Errorf("oom pod: exit %d", r.ExitCode)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "oom"}, pod); err != nil {
		t.Fatal(err)
	}
	if term := pod.Status.ContainerStatuses[0].State.Terminated; term == nil || term.Reason != "OOMKilled" {
		t.Errorf("oom pod state = %+v", pod.Status.ContainerStatuses[0].State)
	}

	held := newPod("held", "exec sleep 300")
	waitPhase("held", corev1.PodPending)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(held), held); err != nil || held.Spec.NodeName != "" {
		t.Fatalf("held pod is scheduled (%q) or unreadable: %v", held.Spec.NodeName, err)
	}
	if err := kubelet.Act(ns, "held", framework.Run()); err != nil {
		t.Fatal(err)
	}
	waitPhase("held", corev1.PodRunning)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(held), held); err != nil || held.Status.Phase != corev1.PodRunning || held.Status.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("running pod status = %+v, %v", held.Status, err)
	}
	if err := kubelet.Act(ns, "held", framework.Disrupt("")); err != nil {
		t.Fatal(err)
	}
	if r := waitPhase("held", corev1.PodFailed); r.ExitCode != 143 {
		t.Errorf("disrupted pod: exit %d, want 143 (SIGTERM)", r.ExitCode)
	}

	doomed := newPod("deleted", "exec sleep 300")
	waitPhase("deleted", corev1.PodRunning)
	if err := env.Client.Delete(ctx, doomed, client.GracePeriodSeconds(5)); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(doomed), doomed)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the deleted pod was not removed: %v", err)
	}
	if r, _ := kubelet.Pod(ns, "deleted"); r.Phase != corev1.PodFailed || r.ExitCode != 143 || r.Finished.Sub(r.Started) > 5*time.Second {
		t.Errorf("deleted pod record = %+v", r)
	}
}
