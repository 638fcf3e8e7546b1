package controllers

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
)

// wantFailurePolicy retries disrupted pods and fails at once on any exit
// of the solver.
var wantFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
	{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
	{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
		ContainerName: ptr.To("solve"), Operator: batchv1.PodFailurePolicyOnExitCodesOpNotIn, Values: []int32{0},
	}},
}}

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
			if *job.Spec.ActiveDeadlineSeconds != tc.wantDeadline || *job.Spec.BackoffLimit != jobBackoffLimit {
				t.Errorf("deadline %d backoff %d, want %d and %d", *job.Spec.ActiveDeadlineSeconds, *job.Spec.BackoffLimit, tc.wantDeadline, jobBackoffLimit)
			}
			if diff := cmp.Diff(wantFailurePolicy, job.Spec.PodFailurePolicy); diff != "" {
				t.Errorf("pod failure policy (-want +got):\n%s", diff)
			}
			if p := job.Spec.PodReplacementPolicy; p == nil || *p != batchv1.Failed {
				t.Errorf("pod replacement policy %v, want Failed (never two solver pods at once)", p)
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
			if pod.ServiceAccountName != JobName(tc.opt) || pod.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("service account %q restart %q", pod.ServiceAccountName, pod.RestartPolicy)
			}
			if c.SecurityContext == nil || !*c.SecurityContext.ReadOnlyRootFilesystem || *c.SecurityContext.AllowPrivilegeEscalation {
				t.Errorf("security context %+v", c.SecurityContext)
			}
			if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
				t.Errorf("termination message policy %q", c.TerminationMessagePolicy)
			}
			if mem := c.Resources.Requests[corev1.ResourceMemory]; mem.Value() != 256<<20*(500+3*300)/2000 {
				t.Errorf("memory request %s for 300 orders", mem.String())
			}
		})
	}
}

func TestSolveResourcesFor(t *testing.T) {
	mi := func(n int64) resource.Quantity { return *resource.NewQuantity(n<<20, resource.BinarySI) }
	tests := map[string]struct {
		res        SolveResources
		orders     int
		wantMemory int64 // request, MiB
		wantCPU    bool  // a CPU limit is set
	}{
		"empty problem asks a quarter":    {DefaultSolveResources(), 0, 64, true},
		"largest problem asks it all":     {DefaultSolveResources(), 500, 256, true},
		"past the largest stays capped":   {DefaultSolveResources(), 5000, 256, true},
		"request never above the limit":   {SolveResources{CPURequest: resource.MustParse("1"), MemoryRequest: mi(2048), MemoryLimit: mi(512)}, 500, 512, false},
		"no CPU limit when flag gives 0":  {SolveResources{CPURequest: resource.MustParse("1"), MemoryRequest: mi(256), MemoryLimit: mi(1024)}, 250, 160, false},
		"negative order count is no harm": {DefaultSolveResources(), -3, 64, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tc.res.For(tc.orders)
			if mem := got.Requests[corev1.ResourceMemory]; mem.Value() != tc.wantMemory<<20 {
				t.Errorf("memory request %s, want %dMi", mem.String(), tc.wantMemory)
			}
			if _, ok := got.Limits[corev1.ResourceCPU]; ok != tc.wantCPU {
				t.Errorf("CPU limit set %v, want %v", ok, tc.wantCPU)
			}
			if lim := got.Limits[corev1.ResourceMemory]; lim.Cmp(tc.res.MemoryLimit) != 0 {
				t.Errorf("memory limit %s, want %s", lim.String(), tc.res.MemoryLimit.String())
			}
		})
	}
}

// A solve may touch its own objects, by name, and read the tenant's
// geocoding cache; it can list nothing, and create only ConfigMaps (its
// result parts: RBAC cannot limit create by name).
func TestSolveRole(t *testing.T) {
	opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Name: "0b6f2a4e-6c1d-4a8f-9e55-3c2b1d0a9f10", Namespace: "tenant-acme"}}
	own := []string{opt.Name, opt.ResultConfigMapName(), "routeopt-geocode-cache"}
	for i := 1; i <= v1alpha1.MaxResultParts; i++ {
		own = append(own, opt.ResultPartName(i))
	}
	creates := 0
	for _, rule := range SolveRole(opt) {
		if len(rule.ResourceNames) == 0 {
			if !slices.Equal(rule.Verbs, []string{"create"}) || !slices.Equal(rule.Resources, []string{"configmaps"}) {
				t.Errorf("rule %v is not limited by name", rule)
			}
			creates++
			continue
		}
		for _, name := range rule.ResourceNames {
			if !slices.Contains(own, name) {
				t.Errorf("rule %v names another object: %s", rule, name)
			}
			for _, verb := range rule.Verbs {
				if !slices.Contains([]string{"get", "patch"}, verb) {
					t.Errorf("rule %v allows %s", rule, verb)
				}
				if verb == "patch" && name == "routeopt-geocode-cache" {
					t.Errorf("rule %v lets a solve rewrite the tenant's cache", rule)
				}
			}
		}
	}
	if creates != 1 {
		t.Errorf("%d name-free rules, want the one that creates result parts", creates)
	}
}
