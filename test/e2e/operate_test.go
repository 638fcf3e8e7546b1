package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// jobOf reads the solve Job of optimization id.
func jobOf(ctx context.Context, t *testing.T, namespace, id string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: id + "-solve"}, job); err != nil {
		t.Fatal(err)
	}
	return job
}

// A solve pod lost to a node drain or a preemption is not the solve's
// fault: the Job runs it again and the optimization completes.
func TestDisruptedSolveIsRetried(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	acme := onboard(t, "drain")
	url := startAPI(t, acme.key)
	var mu sync.Mutex
	seen := 0
	k := startKubelet(t, acme.namespace, func(*corev1.Pod) framework.Action {
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen == 1 {
			return framework.Disrupt("PreemptionByScheduler")
		}
		return framework.Run()
	})
	startManager(t, "manager")

	id := createOptimization(t, url, acme.key, "disrupted-solve-01", nil)
	rec := waitState(t, url, acme.key, id, "completed", time.Minute)
	if rec["progress"] != float64(100) {
		t.Errorf("completed at progress %v", rec["progress"])
	}
	pods := solvePods(k, id)
	if len(pods) != 2 || pods[0].Action.Kind != framework.ActionDisrupt || pods[1].Action.Kind != framework.ActionRun || pods[1].ExitCode != 0 {
		t.Fatalf("solve pods %+v, want one disrupted and one run to success", pods)
	}
	job := jobOf(ctx, t, acme.namespace, id)
	if job.Status.Succeeded != 1 {
		t.Errorf("job status %+v", job.Status)
	}
	t.Logf("replacement pod started %s after the disruption", pods[1].Started.Sub(pods[0].Finished).Round(time.Millisecond))
}

// The solver's own failure (here the matrix service cannot be reached)
// fails the Job at once, without a second pod, and the optimization with
// the solver's error code. (An unreachable geocoder fails the optimization
// in the manager, before any Job: the manager geocodes.)
func TestSolverErrorFailsFast(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	acme := onboard(t, "failfast")
	url := startAPI(t, acme.key)
	k := startKubelet(t, acme.namespace, nil)
	startManager(t, "manager", "--matrix=osrm", "--osrm-url=http://"+freeAddr(t))

	id := createOptimization(t, url, acme.key, "solver-error-0001", nil)
	rec := waitState(t, url, acme.key, id, "failed", time.Minute)
	if rec["error_code"] != v1alpha1.ErrorMatrixUnavailable || !strings.Contains(rec["error_message"].(string), "matrix") {
		t.Errorf("failed record %v", rec)
	}
	pods := solvePods(k, id)
	if len(pods) != 1 || pods[0].ExitCode == 0 {
		t.Fatalf("solve pods %+v, want one that exited non-zero", pods)
	}
	job := jobOf(ctx, t, acme.namespace, id)
	failed := false
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			failed = c.Reason == batchv1.JobReasonPodFailurePolicy
		}
	}
	if !failed {
		t.Errorf("job conditions %+v, want Failed by the pod failure policy", job.Status.Conditions)
	}
}

// Two managers against one API server: only the leader reconciles; when
// it dies, the other takes over within the lease duration, and no
// optimization is started or solved twice.
func TestLeaderElection(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	acme := onboard(t, "leader")
	url := startAPI(t, acme.key)
	held := webserver.OptimizationID(acme.namespace, "leader-held-0001")
	k := startKubelet(t, acme.namespace, holding(held))
	token := grantMetricsReader(t)
	managers := []*manager{startManager(t, "manager-a"), startManager(t, "manager-b")}
	const leading = `leader_election_master_status{name="routeopt-manager.routeopt.io"}`
	leader := func() (*manager, *manager) {
		var lead, follow *manager
		for _, m := range managers {
			if m.Exited() {
				continue
			}
			_, text := scrape(m.metricsURL, token)
			if metricValue(text, leading) == 1 {
				lead = m
			} else {
				follow = m
			}
		}
		return lead, follow
	}
	var lead, follow *manager
	for lead == nil || follow == nil {
		if ctx.Err() != nil {
			t.Fatal("no leader elected")
		}
		time.Sleep(100 * time.Millisecond)
		lead, follow = leader()
	}
	t.Logf("%s leads", lead.Name)

	var ids []string
	for i := range 3 {
		ids = append(ids, createOptimization(t, url, acme.key, "leader-run-000"+string(rune('1'+i)), nil))
	}
	for _, id := range ids {
		waitState(t, url, acme.key, id, "completed", time.Minute)
	}
	const reconciles = `controller_runtime_reconcile_total{controller="optimization",result="success"}`
	_, leadText := scrape(lead.metricsURL, token)
	_, followText := scrape(follow.metricsURL, token)
	if metricValue(leadText, reconciles) <= 0 || metricValue(followText, reconciles) > 0 {
		t.Errorf("successful reconciles: leader %v, follower %v; only the leader may reconcile",
			metricValue(leadText, reconciles), metricValue(followText, reconciles))
	}

	// A solve in progress when the leader dies.
	if id := createOptimization(t, url, acme.key, "leader-held-0001", nil); id != held {
		t.Fatalf("id %s, want %s", id, held)
	}
	ids = append(ids, held)
	if _, err := k.WaitFor(ctx, func([]framework.PodRecord) bool { return len(solvePods(k, held)) == 1 }); err != nil {
		t.Fatal(err)
	}
	jobUID := jobOf(ctx, t, acme.namespace, held).UID
	lead.Kill()
	killed := time.Now()
	for {
		if l, _ := leader(); l == follow {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the follower never took over")
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("%s took over %s after %s was killed (lease %s, retry %s)", follow.Name, took.Round(time.Millisecond), lead.Name, leaseDuration, retryPeriod)
	if took > leaseDuration+2*retryPeriod+time.Second {
		t.Errorf("takeover after %s, want within the lease duration %s (plus a retry period)", took, leaseDuration)
	}

	pod := solvePods(k, held)[0]
	if err := k.Act(acme.namespace, pod.Name, framework.Run()); err != nil {
		t.Fatal(err)
	}
	waitState(t, url, acme.key, held, "completed", time.Minute)
	if uid := jobOf(ctx, t, acme.namespace, held).UID; uid != jobUID {
		t.Errorf("the new leader made a second Job for the running solve")
	}
	events := &eventsv1.EventList{}
	if err := env.Client.List(ctx, events, client.InNamespace(acme.namespace)); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if n := len(solvePods(k, id)); n != 1 {
			t.Errorf("optimization %s had %d solve pods, want 1", id, n)
		}
		started, completed := 0, 0
		for _, e := range events.Items {
			if e.Regarding.Name != id {
				continue
			}
			switch e.Reason {
			case v1alpha1.ReasonStarted:
				started++
			case v1alpha1.ReasonCompleted:
				completed++
			}
		}
		if started != 1 || completed != 1 {
			t.Errorf("optimization %s: %d Started and %d Completed events, want one each", id, started, completed)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// The platform team's commands: tenants with clear errors, keys listed
// and revoked, old keys migrated into the operator's namespace, and a
// tenant offboarded with its keys.
func TestTenantAndKeyCommands(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	_, stderr, code := cli(t, "tenant", "create", "Acme Corp")
	if code == 0 || !strings.Contains(stderr, `try "acme-corp"`) {
		t.Errorf("an invalid id: exit %d, %q; want refused with a suggestion", code, stderr)
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-taken"}}); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := cli(t, "tenant", "create", "taken"); code == 0 || !strings.Contains(stderr, "is not routeopt's tenant") {
		t.Errorf("a namespace that is not a tenant: exit %d, %q; want refused", code, stderr)
	}

	id := "cli-" + strings.ToLower(rand8())
	ns := v1alpha1.TenantNamespace(id)
	mustCLI(t, "tenant", "create", id, "--display-name", "First Name")
	mustCLI(t, "tenant", "create", id, "--display-name", "Bäckerei Müller") // again: renames, repairs
	namespace := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, namespace); err != nil {
		t.Fatal(err)
	}
	if namespace.Labels[v1alpha1.TenantLabel] != id || namespace.Labels["pod-security.kubernetes.io/enforce"] != "restricted" ||
		namespace.Annotations[v1alpha1.TenantDisplayNameAnnotation] != "Bäckerei Müller" {
		t.Errorf("namespace labels %v annotations %v", namespace.Labels, namespace.Annotations)
	}
	bindings := &rbacv1.RoleBindingList{}
	if err := env.Client.List(ctx, bindings, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(bindings.Items) != 2 {
		t.Errorf("%d RoleBindings in %s, want the manager's and the API's", len(bindings.Items), ns)
	}
	if out := mustCLI(t, "tenant", "list"); !strings.Contains(out, id) || !strings.Contains(out, "Bäckerei Müller") {
		t.Errorf("tenant list:\n%s", out)
	}

	if _, stderr, code := cli(t, "apikey", "create", "--tenant", "no-such-tenant"); code == 0 || !strings.Contains(stderr, "no such tenant") {
		t.Errorf("a key for a missing tenant: exit %d, %q", code, stderr)
	}
	key := strings.TrimSpace(mustCLI(t, "apikey", "create", "--tenant", id, "--name", "ci", "--scopes", "optimizations:read"))
	keyID := apikey.ID(key)
	out := mustCLI(t, "apikey", "list", "--tenant", id)
	if !strings.Contains(out, keyID) || !strings.Contains(out, key[:len("svc_sk_")+4]) || !strings.Contains(out, "optimizations:read") || strings.Contains(out, key) {
		t.Errorf("apikey list shows id, name, prefix and scopes, never the key:\n%s", out)
	}
	mustCLI(t, "apikey", "revoke", "--tenant", id, keyID)
	if _, stderr, code := cli(t, "apikey", "revoke", "--tenant", id, keyID); code == 0 || !strings.Contains(stderr, "has no API key") {
		t.Errorf("revoking twice: exit %d, %q", code, stderr)
	}

	// A key as earlier versions stored it: in the tenant's namespace.
	old := "svc_sk_" + strings.Repeat("0ldKey", 7)
	legacy := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "apikey-" + apikey.ID(old), Namespace: ns, Labels: map[string]string{
			apikey.IDLabel: apikey.ID(old), v1alpha1.TenantLabel: id,
		}, Annotations: map[string]string{v1alpha1.TenantDisplayNameAnnotation: "Bäckerei Müller"}},
		Type: apikey.SecretType,
		Data: map[string][]byte{"sha256": []byte(sha256Hex(old)), "scopes": []byte("optimizations:read")},
	}
	if err := env.Client.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if out := mustCLI(t, "apikey", "migrate"); !strings.Contains(out, "1 API key(s) moved") {
		t.Errorf("migrate: %q", out)
	}
	if out := mustCLI(t, "apikey", "migrate"); !strings.Contains(out, "0 API key(s) moved") {
		t.Errorf("migrate again: %q", out)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(legacy), &corev1.Secret{}); err == nil {
		t.Error("the old key Secret is still in the tenant's namespace")
	}
	url := startAPI(t, old) // waits until the migrated key is accepted
	if status, me := call(url, old, http.MethodGet, "/v1/me", nil, nil); status != http.StatusOK || me["company"].(map[string]any)["id"] != id {
		t.Errorf("/v1/me with the migrated key: %d %v", status, me)
	}

	mustCLI(t, "tenant", "delete", id)
	secrets := &corev1.SecretList{}
	if err := env.Client.List(ctx, secrets, client.InNamespace(operatorNamespace), client.MatchingLabels{v1alpha1.TenantLabel: id}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 0 {
		t.Errorf("%d Secrets of the deleted tenant remain", len(secrets.Items))
	}
	if err := waitGone(ctx, namespace); err != nil { // being deleted: no namespace controller runs here
		t.Errorf("the tenant's namespace: %v", err)
	}
	if _, stderr, code := cli(t, "tenant", "delete", id); code == 0 || !strings.Contains(stderr, "already being deleted") {
		t.Errorf("deleting it again: exit %d, %q", code, stderr)
	}
}

// A tenant whose RoleBindings are missing (made by an older version, or
// edited by hand) fails its optimizations with a message that says how to
// repair it; re-running `routeopt tenant create` repairs it.
func TestTenantWithoutBindingsIsRepaired(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	acme := onboard(t, "repair")
	if err := env.Client.Delete(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: acme.namespace, Name: "routeopt-manager"}}); err != nil {
		t.Fatal(err)
	}
	url := startAPI(t, acme.key)
	startKubelet(t, acme.namespace, nil)
	startManager(t, "manager")

	id := createOptimization(t, url, acme.key, "missing-binding-01", nil)
	rec := waitState(t, url, acme.key, id, "failed", 30*time.Second)
	if msg, _ := rec["error_message"].(string); !strings.Contains(msg, "routeopt tenant create "+acme.id) {
		t.Errorf("error message %q does not say how to repair the tenant", msg)
	}
	mustCLI(t, "tenant", "create", acme.id)
	id = createOptimization(t, url, acme.key, "missing-binding-02", nil)
	waitState(t, url, acme.key, id, "completed", time.Minute)
}
