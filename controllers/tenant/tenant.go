// Package tenant onboards and offboards companies. A tenant is a namespace
// labelled with its id, plus the RoleBindings that let routeopt's manager
// and API act inside it through routeopt's tenant ClusterRoles, and
// nowhere else: routeopt itself never creates namespaces or grants RBAC
// outside tenant namespaces. The platform team runs this (`routeopt tenant`).
package tenant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Identities and the ClusterRoles a tenant's RoleBindings grant them, as
// config/rbac names them.
const (
	ManagerServiceAccount = "routeopt-manager"
	APIServiceAccount     = "routeopt-api"
	// ManagerTenantRole: what the manager does in a tenant namespace (solve
	// Jobs and their per-solve identity, result ConfigMaps).
	ManagerTenantRole = "routeopt-manager-tenant"
	// APITenantRole: what the API does in a tenant namespace (read results).
	APITenantRole = "routeopt-api-tenant"
	// PodSecurityLabel enforces the restricted Pod Security Standard, which
	// every solve pod meets.
	PodSecurityLabel = "pod-security.kubernetes.io/enforce"
	managedByLabel   = "app.kubernetes.io/managed-by"
	managedBy        = "routeopt"
)

// MaxIDLength keeps the namespace name (tenant- + id) a DNS label.
const MaxIDLength = validation.DNS1123LabelMaxLength - len(v1alpha1.TenantNamespacePrefix)

// Tenant is one onboarded company.
type Tenant struct {
	ID          string
	DisplayName string
	Namespace   string
	Created     time.Time
	// Deleting: its namespace is being deleted.
	Deleting bool
}

// ErrNotFound: no tenant has that id.
var ErrNotFound = errors.New("no such tenant")

// ValidateID checks that id can name a tenant: a DNS label short enough
// for its namespace. The error suggests an id that would do.
func ValidateID(id string) error {
	if len(id) <= MaxIDLength && len(validation.IsDNS1123Label(id)) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%q is not a valid tenant id: use at most %d lower-case letters, digits and '-', starting and ending with a letter or digit", id, MaxIDLength)
	if s := SuggestID(id); s != "" {
		msg += fmt.Sprintf(`; try %q`, s)
	}
	return errors.New(msg)
}

// SuggestID turns a company name into a valid id: accents dropped, lower
// case, every run of other characters one '-', trimmed to MaxIDLength.
// It returns "" when nothing usable is left.
func SuggestID(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r): // a combining accent: é -> e
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		default:
			dash = true
		}
	}
	s := b.String()
	if len(s) > MaxIDLength {
		s = strings.TrimRight(s[:MaxIDLength], "-")
	}
	return s
}

// Create onboards tenant id, or brings an existing one up to date (its
// display name and RoleBindings), so running it again after an upgrade
// repairs a tenant. operatorNamespace is where routeopt's ServiceAccounts are.
func Create(ctx context.Context, c client.Client, id, displayName, operatorNamespace string) (*Tenant, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if displayName == "" {
		displayName = id
	}
	ns := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.TenantNamespace(id)}, ns)
	switch {
	case apierrors.IsNotFound(err):
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: v1alpha1.TenantNamespace(id),
			Labels: map[string]string{
				v1alpha1.TenantLabel: id,
				PodSecurityLabel:     "restricted",
				managedByLabel:       managedBy,
			},
			Annotations: map[string]string{v1alpha1.TenantDisplayNameAnnotation: displayName},
		}}
		if err := c.Create(ctx, ns); err != nil {
			return nil, fmt.Errorf("unable to create namespace %s: %w", ns.Name, err)
		}
	case err != nil:
		return nil, fmt.Errorf("unable to read namespace %s: %w", v1alpha1.TenantNamespace(id), err)
	case ns.Labels[v1alpha1.TenantLabel] != id:
		return nil, fmt.Errorf("namespace %s exists and is not routeopt's tenant %q: choose another id", ns.Name, id)
	case !ns.DeletionTimestamp.IsZero():
		return nil, fmt.Errorf("tenant %q is being deleted: wait until namespace %s is gone", id, ns.Name)
	case ns.Annotations[v1alpha1.TenantDisplayNameAnnotation] != displayName:
		patch := client.MergeFrom(ns.DeepCopy())
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[v1alpha1.TenantDisplayNameAnnotation] = displayName
		if err := c.Patch(ctx, ns, patch); err != nil {
			return nil, fmt.Errorf("unable to rename tenant %q: %w", id, err)
		}
	}
	for _, rb := range RoleBindings(ns.Name, operatorNamespace) {
		if err := ensureRoleBinding(ctx, c, rb); err != nil {
			return nil, err
		}
	}
	return tenantOf(ns), nil
}

// RoleBindings are the bindings of tenant namespace ns: each of routeopt's
// ServiceAccounts gets its tenant ClusterRole there, and only there.
func RoleBindings(ns, operatorNamespace string) []*rbacv1.RoleBinding {
	bind := func(sa, role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns, Labels: map[string]string{managedByLabel: managedBy}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: operatorNamespace}},
		}
	}
	return []*rbacv1.RoleBinding{
		bind(ManagerServiceAccount, ManagerTenantRole),
		bind(APIServiceAccount, APITenantRole),
	}
}

// ensureRoleBinding creates want or makes the existing binding match it; a
// binding's roleRef cannot change, so a different one is replaced.
func ensureRoleBinding(ctx context.Context, c client.Client, want *rbacv1.RoleBinding) error {
	got := &rbacv1.RoleBinding{}
	err := c.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		err = c.Create(ctx, want)
	} else if err == nil && (got.RoleRef != want.RoleRef || !slices.Equal(got.Subjects, want.Subjects)) {
		if err = c.Delete(ctx, got); err == nil {
			err = c.Create(ctx, want)
		}
	}
	if err != nil {
		return fmt.Errorf("unable to bind %s in %s: %w", want.RoleRef.Name, want.Namespace, err)
	}
	return nil
}

// Get finds tenant id; ErrNotFound when there is none.
func Get(ctx context.Context, c client.Reader, id string) (*Tenant, error) {
	ns := &corev1.Namespace{}
	err := c.Get(ctx, client.ObjectKey{Name: v1alpha1.TenantNamespace(id)}, ns)
	if apierrors.IsNotFound(err) || (err == nil && ns.Labels[v1alpha1.TenantLabel] != id) {
		return nil, fmt.Errorf("%w %q: create it with `routeopt tenant create %s`", ErrNotFound, id, id)
	}
	if err != nil {
		return nil, fmt.Errorf("unable to read tenant %q: %w", id, err)
	}
	return tenantOf(ns), nil
}

// List returns every tenant, by id.
func List(ctx context.Context, c client.Reader) ([]Tenant, error) {
	list := &corev1.NamespaceList{}
	if err := c.List(ctx, list, client.HasLabels{v1alpha1.TenantLabel}); err != nil {
		return nil, fmt.Errorf("unable to list tenants: %w", err)
	}
	out := make([]Tenant, 0, len(list.Items))
	for i := range list.Items {
		if t := tenantOf(&list.Items[i]); v1alpha1.TenantNamespace(t.ID) == t.Namespace {
			out = append(out, *t)
		}
	}
	slices.SortFunc(out, func(a, b Tenant) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Delete offboards tenant id: its Secrets in the operator's namespace (API
// keys, webhook signing secrets) first, so nobody can act for it any
// more, then its namespace with everything in it.
func Delete(ctx context.Context, c client.Client, id, operatorNamespace string) error {
	t, err := Get(ctx, c, id)
	if err != nil {
		return err
	}
	if t.Deleting {
		return fmt.Errorf("tenant %q is already being deleted", id)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(operatorNamespace), client.MatchingLabels{v1alpha1.TenantLabel: id}); err != nil {
		return fmt.Errorf("unable to delete the secrets of tenant %q: %w", id, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.Namespace}}
	if err := c.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("unable to delete namespace %s: %w", t.Namespace, err)
	}
	return nil
}

func tenantOf(ns *corev1.Namespace) *Tenant {
	return &Tenant{
		ID:          ns.Labels[v1alpha1.TenantLabel],
		DisplayName: ns.Annotations[v1alpha1.TenantDisplayNameAnnotation],
		Namespace:   ns.Name,
		Created:     ns.CreationTimestamp.Time,
		Deleting:    !ns.DeletionTimestamp.IsZero(),
	}
}
