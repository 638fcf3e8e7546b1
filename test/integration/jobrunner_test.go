package integration

import (
	"routeopt.io/routeopt/test/requests"

	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/cmd/routeopt/app"
	"routeopt.io/routeopt/controllers"
)

// createViaREST creates an optimization and returns its id and object.
func createViaREST(t *testing.T, s *system, key string, body map[string]any) *v1alpha1.Optimization {
	t.Helper()
	status, rec, _ := s.call(t, "POST", "/v1/optimizations", body, map[string]string{"Idempotency-Key": key})
	if status != 202 {
		t.Fatalf("create: %d %v", status, rec)
	}
	opt := &v1alpha1.Optimization{}
	if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: s.namespace, Name: rec["id"].(string)}, opt); err != nil {
		t.Fatal(err)
	}
	return opt
}

// waitForJob waits until the controller made the optimization's Job.
func waitForJob(t *testing.T, opt *v1alpha1.Optimization) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	waitFor(t, 20*time.Second, "the solve job", func() (bool, error) {
		err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: controllers.JobName(opt)}, job)
		return err == nil, client.IgnoreNotFound(err)
	})
	return job
}

// setJobStatus plays the Job controller: it marks the Job finished.
func setJobStatus(t *testing.T, job *batchv1.Job, succeeded bool, reason string) {
	t.Helper()
	now := metav1.Now()
	job.Status.StartTime = &now
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: batchv1.JobReasonCompletionsReached},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: batchv1.JobReasonCompletionsReached},
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: "test"},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: now, Reason: reason, Message: "test"},
		}
	}
	if err := k8sClient.Status().Update(context.Background(), job); err != nil {
		t.Fatalf("unable to set job status: %v", err)
	}
}

func waitForState(t *testing.T, s *system, id string, want v1alpha1.State) map[string]any {
	t.Helper()
	var rec map[string]any
	waitFor(t, 30*time.Second, "state "+string(want), func() (bool, error) {
		_, rec, _ = s.call(t, "GET", "/v1/optimizations/"+id, nil, nil)
		return rec["status"] == string(want), nil
	})
	return rec
}

func TestJobRunner(t *testing.T) {
	s := startSystem(t, "job")

	t.Run("the job solves and the optimization completes", func(t *testing.T) {
		opt := createViaREST(t, s, "job-runner-ok-0001", requests.TenOrders(1))
		job := waitForJob(t, opt)

		pod := job.Spec.Template.Spec
		c := pod.Containers[0]
		wantCmd := []string{"/routeopt", "solve", "--namespace", opt.Namespace, "--name", opt.Name}
		if c.Image != "routeopt:test" || len(c.Command) < len(wantCmd) || !slices.Equal(c.Command[:len(wantCmd)], wantCmd) {
			t.Errorf("container image %q command %v, want routeopt:test %v", c.Image, c.Command, wantCmd)
		}
		if !slices.Contains(c.Command, "--matrix=haversine") || !slices.Contains(c.Command, "--geocoder=none") {
			t.Errorf("solve command %v lacks the manager's provider flags", c.Command)
		}
		if pod.ServiceAccountName != controllers.JobName(opt) || pod.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("service account %q restart policy %q", pod.ServiceAccountName, pod.RestartPolicy)
		}
		if ref := metav1.GetControllerOf(job); ref == nil || ref.UID != opt.UID || ref.Kind != "Optimization" {
			t.Errorf("controller reference %+v, want the optimization %s", ref, opt.UID)
		}
		if job.Spec.ActiveDeadlineSeconds == nil || *job.Spec.ActiveDeadlineSeconds != 1+120 {
			t.Errorf("activeDeadlineSeconds %v, want solver_seconds + 120", job.Spec.ActiveDeadlineSeconds)
		}
		if job.Spec.PodFailurePolicy == nil || job.Spec.TTLSecondsAfterFinished == nil {
			t.Errorf("podFailurePolicy %v ttl %v", job.Spec.PodFailurePolicy, job.Spec.TTLSecondsAfterFinished)
		}
		for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
			if err := k8sClient.Get(context.Background(), client.ObjectKey{Namespace: opt.Namespace, Name: controllers.JobName(opt)}, obj); err != nil {
				t.Errorf("solve identity %T: %v", obj, err)
			} else if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != opt.UID {
				t.Errorf("solve identity %T owned by %+v", obj, ref)
			}
		}

		// Play the kubelet: run the Job's own command line in-process.
		root := app.NewRootCommand()
		root.SetArgs(append(slices.Clone(c.Command[1:]), "--kubeconfig", kubeconfigPath, "--termination-log", filepath.Join(t.TempDir(), "termination-log")))
		if err := root.Execute(); err != nil {
			t.Fatalf("the job's command failed: %v", err)
		}
		setJobStatus(t, job, true, "")
		rec := waitForState(t, s, opt.Name, v1alpha1.StateCompleted)
		if rec["progress"] != float64(100) {
			t.Errorf("progress %v at completion", rec["progress"])
		}
		status, res, _ := s.call(t, "GET", "/v1/optimizations/"+opt.Name+"/result", nil, nil)
		if status != 200 || res["kpis"].(map[string]any)["orders_assigned"] != float64(10) {
			t.Errorf("result %d %v", status, res)
		}
	})

	t.Run("a job past its deadline fails the optimization", func(t *testing.T) {
		opt := createViaREST(t, s, "job-runner-deadline-01", requests.TenOrders(1))
		job := waitForJob(t, opt)
		setJobStatus(t, job, false, batchv1.JobReasonDeadlineExceeded)
		rec := waitForState(t, s, opt.Name, v1alpha1.StateFailed)
		if rec["error_code"] != v1alpha1.ErrorDeadlineExceeded || rec["error_message"] == "" {
			t.Errorf("failed record %v", rec)
		}
	})

	t.Run("the pod's termination message names the error", func(t *testing.T) {
		opt := createViaREST(t, s, "job-runner-crash-0001", requests.TenOrders(1))
		job := waitForJob(t, opt)
		// The pod a kubelet would have run, terminated with the solver's message.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x1", Namespace: job.Namespace, Labels: map[string]string{"batch.kubernetes.io/job-name": job.Name}},
			Spec:       job.Spec.Template.Spec,
		}
		if err := k8sClient.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = corev1.PodFailed
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "solve", Image: "routeopt:test", ImageID: "x",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", Message: `{"code":"matrix_unavailable","message":"OSRM answered 503"}`,
			}},
		}}
		if err := k8sClient.Status().Update(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		setJobStatus(t, job, false, batchv1.JobReasonBackoffLimitExceeded)
		rec := waitForState(t, s, opt.Name, v1alpha1.StateFailed)
		if rec["error_code"] != v1alpha1.ErrorMatrixUnavailable || rec["error_message"] != "OSRM answered 503" {
			t.Errorf("failed record %v", rec)
		}
	})
}
