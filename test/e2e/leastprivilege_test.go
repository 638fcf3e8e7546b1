package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/apikey"
)

// access is one question to the API server's authorizer.
type access struct {
	verb, group, resource, subresource, namespace, name string
	allowed                                             bool
}

// checkAccess asks a SubjectAccessReview for each case, as ServiceAccount
// namespace/name (with the groups its token carries).
func checkAccess(ctx context.Context, t *testing.T, namespace, name string, cases []access) {
	t.Helper()
	user := "system:serviceaccount:" + namespace + ":" + name
	for _, c := range cases {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.subresource, Namespace: c.namespace, Name: c.name,
			},
		}}
		if err := env.Client.Create(ctx, sar); err != nil {
			t.Fatal(err)
		}
		if sar.Status.Allowed != c.allowed {
			what := c.resource
			if c.subresource != "" {
				what += "/" + c.subresource
			}
			where := "cluster-wide"
			if c.namespace != "" {
				where = "in " + c.namespace
			}
			if c.name != "" {
				where += " named " + c.name
			}
			t.Errorf("%s may %s %s %s: %v, want %v (%s)", name, c.verb, what, where, sar.Status.Allowed, c.allowed, sar.Status.Reason)
		}
	}
}

// TestInstalledLeastPrivilege installs routeopt from dist/install.yaml,
// onboards a tenant with the CLI and runs a whole optimization with the
// manager, the API and each solve as their own ServiceAccounts, holding
// exactly the rendered roles; then asks the authorizer what each identity
// may do, and checks that it is refused everything it must not do.
func TestInstalledLeastPrivilege(t *testing.T) {
	install(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	acme := onboard(t, "acme")
	hooks := newReceiver(t)
	allow := "--webhook-allow-target=" + strings.TrimPrefix(hooks.URL, "http://")
	url := startAPI(t, acme.key, allow)
	status, endpoint := call(url, acme.key, http.MethodPost, "/v1/webhooks", map[string]any{"url": hooks.URL + "/events"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("register a webhook: %d %v", status, endpoint)
	}
	secret, _ := endpoint["secret"].(string)

	// The kubelet runs the first optimization's pod and holds the second's,
	// so the second's identity can be examined while it exists. Ids follow
	// from the Idempotency-Key.
	second := webserver.OptimizationID(acme.namespace, "least-privilege-second")
	k := startKubelet(t, acme.namespace, holding(second))
	mgr := startManager(t, "manager", allow)

	first := createOptimization(t, url, acme.key, "least-privilege-first", nil)
	waitState(t, url, acme.key, first, "completed", time.Minute)
	status, result := call(url, acme.key, http.MethodGet, "/v1/optimizations/"+first+"/result", nil, nil)
	if status != http.StatusOK || result["kpis"].(map[string]any)["orders_assigned"] != float64(10) {
		t.Fatalf("result: %d %v", status, result)
	}
	hooks.waitEvent(t, first, "optimization.completed").verify(t, secret)
	// The export: a signed link, downloaded without an API key.
	status, export := call(url, acme.key, http.MethodPost, "/v1/optimizations/"+first+"/exports", map[string]any{"format": "csv"}, nil)
	if status != http.StatusCreated {
		t.Fatalf("export: %d %v", status, export)
	}
	resp, err := http.Get(export["download_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	file, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(file), "\ufeff") || strings.Count(string(file), "\n") != 11 {
		t.Errorf("download: %d, %d bytes: %.200q", resp.StatusCode, len(file), file)
	}
	pods := solvePods(k, first)
	if len(pods) != 1 || pods[0].ExitCode != 0 {
		t.Fatalf("the first solve's pods: %+v", pods)
	}
	if pod := getPod(ctx, t, acme.namespace, pods[0].Name); pod.Spec.ServiceAccountName != first+"-solve" {
		t.Errorf("the solve ran as %q, want its own ServiceAccount %s-solve", pod.Spec.ServiceAccountName, first)
	}
	// Its identity is gone once it ended.
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: acme.namespace, Name: first + "-solve"}, obj)
		if !apierrors.IsNotFound(err) {
			t.Errorf("the finished solve's %T is still there (%v)", obj, err)
		}
	}

	// The key and the signing secret live in the operator's namespace, not the tenant's.
	secrets := &corev1.SecretList{}
	if err := env.Client.List(ctx, secrets, client.MatchingLabels{v1alpha1.TenantLabel: acme.id}); err != nil {
		t.Fatal(err)
	}
	types := map[corev1.SecretType]int{}
	for _, s := range secrets.Items {
		if s.Namespace != operatorNamespace {
			t.Errorf("Secret %s/%s of the tenant outside the operator's namespace", s.Namespace, s.Name)
		}
		types[s.Type]++
	}
	if types[apikey.SecretType] != 1 || types[v1alpha1.WebhookSecretType] != 1 || len(secrets.Items) != 2 {
		t.Errorf("the tenant's Secrets by type: %v, want one API key and one signing secret", types)
	}

	if id := createOptimization(t, url, acme.key, "least-privilege-second", nil); id != second {
		t.Fatalf("id %s, want %s", id, second)
	}
	if _, err := k.WaitFor(ctx, func(rs []framework.PodRecord) bool { return len(solvePods(k, second)) == 1 }); err != nil {
		t.Fatal(err)
	}
	solveSA := second + "-solve"
	pod := getPod(ctx, t, acme.namespace, solvePods(k, second)[0].Name)
	if pod.Spec.ServiceAccountName != solveSA || pod.Spec.AutomountServiceAccountToken == nil || !*pod.Spec.AutomountServiceAccountToken {
		t.Errorf("pod service account %q automount %v", pod.Spec.ServiceAccountName, pod.Spec.AutomountServiceAccountToken)
	}

	T, other := acme.namespace, "default"
	checkAccess(ctx, t, operatorNamespace, "routeopt-manager", []access{
		// what it needs
		{verb: "watch", group: "routeopt.io", resource: "optimizations", allowed: true},
		{verb: "patch", group: "routeopt.io", resource: "optimizations", subresource: "status", namespace: T, allowed: true},
		// patch adds and removes the solve finalizer
		{verb: "patch", group: "routeopt.io", resource: "optimizations", namespace: T, allowed: true},
		{verb: "watch", resource: "namespaces", allowed: true},
		{verb: "create", group: "events.k8s.io", resource: "events", namespace: T, allowed: true},
		{verb: "create", group: "batch", resource: "jobs", namespace: T, allowed: true},
		{verb: "list", resource: "pods", namespace: T, allowed: true},
		{verb: "update", resource: "configmaps", namespace: T, allowed: true},
		{verb: "create", resource: "serviceaccounts", namespace: T, allowed: true},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "roles", namespace: T, allowed: true},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: T, allowed: true},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: operatorNamespace, allowed: true},
		{verb: "create", group: "authentication.k8s.io", resource: "tokenreviews", allowed: true},
		{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews", allowed: true},
		// webhook endpoints: read, status, finalizer; never registered by it
		{verb: "watch", group: "routeopt.io", resource: "webhookendpoints", allowed: true},
		{verb: "patch", group: "routeopt.io", resource: "webhookendpoints", subresource: "status", namespace: T, allowed: true},
		{verb: "create", group: "routeopt.io", resource: "webhookendpoints", namespace: T},
		// Secrets: signing secrets by name in the operator's namespace (read
		// to sign, deleted with their endpoint), never listed, nowhere else
		{verb: "get", resource: "secrets", namespace: operatorNamespace, allowed: true},
		{verb: "delete", resource: "secrets", namespace: operatorNamespace, allowed: true},
		{verb: "list", resource: "secrets", namespace: operatorNamespace},
		{verb: "watch", resource: "secrets", namespace: operatorNamespace},
		{verb: "create", resource: "secrets", namespace: operatorNamespace},
		{verb: "get", resource: "secrets", namespace: T},
		{verb: "list", resource: "secrets"},
		{verb: "get", resource: "secrets", namespace: "kube-system"},
		// nothing outside tenant namespaces
		{verb: "create", group: "batch", resource: "jobs", namespace: "kube-system"},
		{verb: "create", group: "batch", resource: "jobs", namespace: other},
		{verb: "create", resource: "pods", namespace: "kube-system"},
		{verb: "create", resource: "serviceaccounts", namespace: "kube-system"},
		{verb: "create", resource: "configmaps", namespace: other},
		// no cluster-wide watch of tenant objects
		{verb: "list", group: "batch", resource: "jobs"},
		{verb: "watch", resource: "pods"},
		{verb: "list", resource: "configmaps"},
		// no pods of its own making, no tokens, no impersonation
		{verb: "create", resource: "pods", namespace: T},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: T, name: solveSA},
		{verb: "impersonate", resource: "serviceaccounts", namespace: T},
		// no namespaces, no RBAC outside tenant namespaces
		{verb: "create", resource: "namespaces"},
		{verb: "delete", resource: "namespaces", name: T},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterroles"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings"},
		{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "cluster-admin"},
		{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "roles", namespace: T},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "roles", namespace: "kube-system"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: "kube-system"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: other},
		// and never a client's request
		{verb: "create", group: "routeopt.io", resource: "optimizations", namespace: T},
		{verb: "update", group: "routeopt.io", resource: "optimizations", namespace: T},
	})
	checkAccess(ctx, t, operatorNamespace, "routeopt-api", []access{
		{verb: "watch", resource: "secrets", namespace: operatorNamespace, allowed: true},
		{verb: "create", group: "routeopt.io", resource: "optimizations", namespace: T, allowed: true},
		{verb: "patch", group: "routeopt.io", resource: "optimizations", namespace: T, allowed: true},
		{verb: "watch", group: "routeopt.io", resource: "optimizations", allowed: true},
		{verb: "get", resource: "configmaps", namespace: T, allowed: true},
		// each optimization's input ConfigMap, written beside it
		{verb: "create", resource: "configmaps", namespace: T, allowed: true},
		{verb: "update", resource: "configmaps", namespace: T, allowed: true},
		// an optimization whose input the cluster's storage refused is removed again
		{verb: "delete", group: "routeopt.io", resource: "optimizations", namespace: T, allowed: true},
		{verb: "create", group: "routeopt.io", resource: "webhookendpoints", namespace: T, allowed: true},
		{verb: "delete", group: "routeopt.io", resource: "webhookendpoints", namespace: T, allowed: true},
		{verb: "patch", group: "routeopt.io", resource: "webhookendpoints", subresource: "status", namespace: T},
		// Secrets only in the operator's namespace (API keys, signing secrets)
		{verb: "create", resource: "secrets", namespace: operatorNamespace, allowed: true},
		// patch records an API key's last use on its Secret, there only
		{verb: "patch", resource: "secrets", namespace: operatorNamespace, allowed: true},
		{verb: "patch", resource: "secrets", namespace: T},
		{verb: "update", resource: "secrets", namespace: operatorNamespace, name: "routeopt-export-signing-key"},
		{verb: "get", resource: "secrets", namespace: T},
		{verb: "create", resource: "secrets", namespace: T},
		{verb: "list", resource: "secrets"},
		{verb: "get", resource: "secrets", namespace: "kube-system"},
		// reads results by name, nothing else of a tenant
		{verb: "list", resource: "configmaps", namespace: T},
		{verb: "delete", resource: "configmaps", namespace: T},
		{verb: "get", resource: "configmaps", namespace: "kube-system"},
		{verb: "create", resource: "configmaps", namespace: "kube-system"},
		{verb: "patch", group: "routeopt.io", resource: "optimizations", subresource: "status", namespace: T},
		{verb: "create", group: "batch", resource: "jobs", namespace: T},
		{verb: "create", resource: "pods", namespace: "kube-system"},
		{verb: "create", resource: "namespaces"},
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: T},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: T, name: solveSA},
	})
	checkAccess(ctx, t, T, solveSA, []access{
		{verb: "get", group: "routeopt.io", resource: "optimizations", namespace: T, name: second, allowed: true},
		{verb: "patch", group: "routeopt.io", resource: "optimizations", subresource: "status", namespace: T, name: second, allowed: true},
		{verb: "get", resource: "configmaps", namespace: T, name: second + "-result", allowed: true},
		{verb: "patch", resource: "configmaps", namespace: T, name: second + "-result", allowed: true},
		{verb: "get", resource: "configmaps", namespace: T, name: "routeopt-geocode-cache", allowed: true},
		// its orders and vehicles, read only
		{verb: "get", resource: "configmaps", namespace: T, name: second + "-input", allowed: true},
		{verb: "patch", resource: "configmaps", namespace: T, name: second + "-input"},
		// its result parts: create cannot be limited by name, overwriting can
		{verb: "create", resource: "configmaps", namespace: T, allowed: true},
		{verb: "patch", resource: "configmaps", namespace: T, name: second + "-result-1", allowed: true},
		{verb: "patch", resource: "configmaps", namespace: T, name: second + "-result-10", allowed: true},
		{verb: "patch", resource: "configmaps", namespace: T, name: second + "-result-11"},
		{verb: "get", resource: "configmaps", namespace: T, name: second + "-result-1"},
		{verb: "create", resource: "configmaps", namespace: "default"},
		// another optimization of the same tenant, and its result
		{verb: "get", group: "routeopt.io", resource: "optimizations", namespace: T, name: first},
		{verb: "patch", group: "routeopt.io", resource: "optimizations", subresource: "status", namespace: T, name: first},
		{verb: "get", resource: "configmaps", namespace: T, name: first + "-result"},
		{verb: "get", resource: "configmaps", namespace: T, name: first + "-input"},
		{verb: "patch", resource: "configmaps", namespace: T, name: first + "-result"},
		{verb: "patch", resource: "configmaps", namespace: T, name: first + "-result-1"},
		{verb: "list", group: "routeopt.io", resource: "optimizations", namespace: T},
		{verb: "list", resource: "configmaps", namespace: T},
		// its own spec (a cancel cannot be undone), the shared cache, new objects
		{verb: "patch", group: "routeopt.io", resource: "optimizations", namespace: T, name: second},
		{verb: "update", resource: "configmaps", namespace: T, name: "routeopt-geocode-cache"},
		{verb: "patch", resource: "configmaps", namespace: T, name: "routeopt-geocode-cache"},
		{verb: "delete", resource: "configmaps", namespace: T, name: second + "-result"},
		{verb: "get", resource: "secrets", namespace: T},
		{verb: "get", resource: "secrets", namespace: operatorNamespace},
		{verb: "create", group: "batch", resource: "jobs", namespace: T},
		{verb: "create", resource: "pods", namespace: T},
		{verb: "get", group: "routeopt.io", resource: "optimizations", namespace: "default", name: second},
	})

	// Not only the authorizer's word: the held solve's own token is refused
	// the other optimization, the API's token the tenant's Secrets.
	solveCfg, err := env.RESTConfigForServiceAccount(ctx, T, solveSA, pod)
	if err != nil {
		t.Fatal(err)
	}
	solveClient, err := client.New(solveCfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := solveClient.Get(ctx, client.ObjectKey{Namespace: T, Name: first}, &v1alpha1.Optimization{}); !apierrors.IsForbidden(err) {
		t.Errorf("a solve reading another optimization: %v, want forbidden", err)
	}
	if err := solveClient.Get(ctx, client.ObjectKey{Namespace: T, Name: second}, &v1alpha1.Optimization{}); err != nil {
		t.Errorf("a solve reading its own optimization: %v", err)
	}
	// It writes a result part owned by its optimization, as a large result
	// needs, and overwrites it by name; another optimization's part it may not.
	held := &v1alpha1.Optimization{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: T, Name: second}, held); err != nil {
		t.Fatal(err)
	}
	part := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: T, Name: held.ResultPartName(1), OwnerReferences: []metav1.OwnerReference{{
			APIVersion: v1alpha1.GroupVersion.String(), Kind: "Optimization", Name: held.Name, UID: held.UID, Controller: ptr.To(true),
		}}},
		BinaryData: map[string][]byte{v1alpha1.ResultPartKey: []byte("one")},
	}
	if err := solveClient.Create(ctx, part); err != nil {
		t.Errorf("a solve creating its result part: %v", err)
	}
	if err := solveClient.Patch(ctx, part, client.RawPatch(k8stypes.MergePatchType, []byte(`{"binaryData":{"part":"dHdv"}}`))); err != nil {
		t.Errorf("a solve overwriting its result part: %v", err)
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: T, Name: first + "-result-1"}}
	if err := solveClient.Patch(ctx, theirs, client.RawPatch(k8stypes.MergePatchType, []byte(`{"binaryData":{"part":"dHdv"}}`))); !apierrors.IsForbidden(err) {
		t.Errorf("a solve patching another optimization's result part: %v, want forbidden", err)
	}
	apiCfg, err := env.RESTConfigForServiceAccount(ctx, operatorNamespace, "routeopt-api", nil)
	if err != nil {
		t.Fatal(err)
	}
	apiClient, err := client.New(apiCfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := apiClient.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system")); !apierrors.IsForbidden(err) {
		t.Errorf("the API listing kube-system's Secrets: %v, want forbidden", err)
	}

	// Cancel the held one: its identity goes, so its pod could write nothing.
	if status, rec := call(url, acme.key, http.MethodPost, "/v1/optimizations/"+second+"/cancel", nil, nil); status != http.StatusOK {
		t.Fatalf("cancel: %d %v", status, rec)
	}
	waitState(t, url, acme.key, second, "cancelled", 10*time.Second)
	hooks.waitEvent(t, second, "optimization.cancelled").verify(t, secret)
	if err := waitGone(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: T, Name: solveSA}}); err != nil {
		t.Errorf("the cancelled solve's RoleBinding: %v", err)
	}

	// The metrics endpoint: a token allowed to GET /metrics, or nothing.
	if status, _ := scrape(mgr.metricsURL, ""); status != http.StatusUnauthorized {
		t.Errorf("metrics without a token: %d, want 401", status)
	}
	if status, _ := scrape(mgr.metricsURL, apiCfg.BearerToken); status != http.StatusForbidden {
		t.Errorf("metrics with the API's token: %d, want 403", status)
	}
	status, text := scrape(mgr.metricsURL, grantMetricsReader(t))
	if status != http.StatusOK || metricValue(text, `routeopt_optimizations_total{state="completed"}`) < 1 {
		t.Errorf("metrics with a metrics-reader token: %d, completed %v", status, metricValue(text, `routeopt_optimizations_total{state="completed"}`))
	}
}

// waitGone waits until obj no longer exists (or is being deleted).
func waitGone(ctx context.Context, obj client.Object) error {
	for {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) || (err == nil && !obj.GetDeletionTimestamp().IsZero()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
