package controllers

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/record"
)

// FuzzJobFailure: whatever a failed solve pod left (its termination
// message, reason and exit code) and whatever the Job's condition says,
// the failure carries a documented error code and a message; a message the
// solver wrote is taken as it is, and only then.
func FuzzJobFailure(f *testing.F) {
	f.Add(`{"code":"matrix_unavailable","message":"OSRM answered 503"}`, "Error", int32(1), "PodFailurePolicy", "Container solve failed")
	f.Add(``, "OOMKilled", int32(137), "BackoffLimitExceeded", "")
	f.Add(`{"code":"oops","message":"x"}`, "Error", int32(2), "DeadlineExceeded", "Job was active longer than specified deadline")
	f.Add("panic: runtime error\ngoroutine 1 [running]:", "Error", int32(2), "PodFailurePolicy", "")
	f.Add(`{"code":"invalid_input","message":"order o-1: time window ends before it starts"}`, "Completed", int32(0), "", "")
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		f.Fatal(err)
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "74664201-cd11-59b0-af6c-dddd4df97de2-solve", Namespace: "tenant-acme"}}
	f.Fuzz(func(t *testing.T, message, reason string, exitCode int32, condReason, condMessage string) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x", Namespace: job.Namespace, Labels: map[string]string{"batch.kubernetes.io/job-name": job.Name}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "solve", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{Message: message, Reason: reason, ExitCode: exitCode},
			}}}},
		}
		r := &JobRunner{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).Build()}
		got := r.jobFailure(context.Background(), job, batchv1.JobCondition{Type: batchv1.JobFailed, Reason: condReason, Message: condMessage})
		if got == nil || !slices.Contains(record.Codes, got.Code) || got.Message == "" {
			t.Fatalf("failure %+v", got)
		}
		written, ok := record.ParseTerminationMessage(message)
		switch {
		case ok:
			if *got != *written {
				t.Fatalf("failure %+v, the solver wrote %+v", got, written)
			}
		case reason == "OOMKilled":
			if got.Code != v1alpha1.ErrorSolver || !strings.Contains(got.Message, "out of memory") {
				t.Fatalf("OOMKilled: failure %+v", got)
			}
		case exitCode != 0:
			if got.Code != v1alpha1.ErrorSolver || !strings.Contains(got.Message, "exited with code "+strconv.Itoa(int(exitCode))) {
				t.Fatalf("exit code %d: failure %+v", exitCode, got)
			}
		case condReason == batchv1.JobReasonDeadlineExceeded:
			if got.Code != v1alpha1.ErrorDeadlineExceeded {
				t.Fatalf("deadline: failure %+v", got)
			}
		default:
			if got.Code != v1alpha1.ErrorSolver {
				t.Fatalf("failure %+v", got)
			}
		}
	})
}
