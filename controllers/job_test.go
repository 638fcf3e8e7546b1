package controllers

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
)

func TestConstructJob(t *testing.T) {
	lat := 52.5
	orders := make([]v1alpha1.Order, 300)
	for i := range orders {
		orders[i] = v1alpha1.Order{ID: string(rune('a' + i%26)), Latitude: &lat, Longitude: &lat}
	}
	base := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{Name: "0b6f2a4e-6c1d-4a8f-9e55-3c2b1d0a9f10", Namespace: "tenant-acme"},
		Spec:       v1alpha1.OptimizationSpec{Orders: orders},
	}
	withSeconds := base.DeepCopy()
	withSeconds.Spec.Options = &v1alpha1.Options{SolverSeconds: ptr.To[int32](30)}

	tests := map[string]struct {
		opt          *v1alpha1.Optimization
		runner       JobRunner
		wantDeadline int64
		wantQueue    string
	}{
		"default budget from size": {base, JobRunner{Image: "img:1"}, 2 + 300/50 + jobDeadlineMargin, ""},
		"requested budget":         {withSeconds, JobRunner{Image: "img:1", QueueName: "solves"}, 30 + jobDeadlineMargin, "solves"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.runner.ExtraArgs = []string{"--matrix=haversine"}
			job := tc.runner.ConstructJob(tc.opt)
			if job.Name != tc.opt.Name+"-solve" || job.Namespace != tc.opt.Namespace {
				t.Errorf("job %s/%s", job.Namespace, job.Name)
			}
			if *job.Spec.ActiveDeadlineSeconds != tc.wantDeadline || *job.Spec.BackoffLimit != 0 {
				t.Errorf("deadline %d backoff %d, want %d and 0", *job.Spec.ActiveDeadlineSeconds, *job.Spec.BackoffLimit, tc.wantDeadline)
			}
			if job.Labels["kueue.x-k8s.io/queue-name"] != tc.wantQueue || job.Labels[v1alpha1.OptimizationLabel] != tc.opt.Name {
				t.Errorf("labels %v", job.Labels)
			}
			pod := job.Spec.Template.Spec
			c := pod.Containers[0]
			want := []string{"/routeopt", "solve", "--namespace", "tenant-acme", "--name", tc.opt.Name, "--matrix=haversine"}
			if !slices.Equal(c.Command, want) || c.Image != "img:1" {
				t.Errorf("command %v image %s", c.Command, c.Image)
			}
			if pod.ServiceAccountName != SolverServiceAccount || pod.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("service account %q restart %q", pod.ServiceAccountName, pod.RestartPolicy)
			}
			if c.SecurityContext == nil || !*c.SecurityContext.ReadOnlyRootFilesystem || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("security context %+v", c.SecurityContext)
			}
			if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
				t.Errorf("termination message policy %q", c.TerminationMessagePolicy)
			}
		})
	}
}
