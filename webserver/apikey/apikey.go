// Package apikey is the REST API's keys: what a key looks like, the scopes
// it grants, the Secrets that store it (create, list, revoke, move, and
// the record of its last use), and finding who a key speaks for.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// API keys are Secrets of type SecretType in the operator's namespace
// (never a tenant's, so the internet-facing API needs Secret access in one
// namespace only), labelled with their tenant. They hold the SHA-256 of the
// key, never the key; the key id label (a prefix of that hash) lets the
// server find the Secret with a label-filtered lookup instead of listing
// every Secret.
const (
	SecretType corev1.SecretType = "routeopt.io/api-key"
	// IDLabel holds the key id: the first 16 hex digits of the key's SHA-256.
	IDLabel = "routeopt.io/api-key-id"
	// Prefix starts every key.
	Prefix = "svc_sk_"
	// LastUsedAnnotation records, in RFC 3339, when the key was last
	// used; the API writes it at most about once a minute per key.
	LastUsedAnnotation = "routeopt.io/api-key-last-used"
	// MaxPerCompany bounds a company's keys, so a key holding keys:write
	// cannot fill etcd.
	MaxPerCompany = 100

	hashField        = "sha256"
	scopesField      = "scopes"
	companyNameAnnot = v1alpha1.TenantDisplayNameAnnotation
	keyNameAnnot     = "routeopt.io/api-key-name"
	keyPrefixAnnot   = "routeopt.io/api-key-prefix"
	idLength         = 16
	// keyPrefixChars of the random part are shown, so a person can tell keys apart.
	keyPrefixChars = 4
)

// Scopes (docs/API.md, "Scopes").
const (
	ScopeOptimizationsRead  = "optimizations:read"
	ScopeOptimizationsWrite = "optimizations:write"
	ScopeExportsWrite       = "exports:write"
	ScopeWebhooksRead       = "webhooks:read"
	ScopeWebhooksWrite      = "webhooks:write"
	// ScopeKeysWrite lists, creates and revokes the company's API keys
	// (the portal's API keys page); a key grants only scopes it holds.
	ScopeKeysWrite = "keys:write"
)

// AllScopes lists every scope, in the order /v1/me shows them.
var AllScopes = []string{ScopeOptimizationsRead, ScopeOptimizationsWrite, ScopeExportsWrite, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeKeysWrite}

// Principal is who an API key speaks for.
type Principal struct {
	// KeyID identifies the key (a prefix of its hash) for rate limiting and logs.
	KeyID string
	// Namespace is the tenant namespace.
	Namespace   string
	CompanyID   string
	CompanyName string
	Scopes      []string
	// LastUsedAt is the key's recorded last use (cached, so possibly a
	// little behind); zero when never recorded.
	LastUsedAt time.Time

	// secretName names the key's Secret, where its last use is recorded.
	secretName string
}

// Has reports whether the key carries scope.
func (p *Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

func hashKey(key string) string { return v1alpha1.SHA256Hex([]byte(key)) }

// wellFormedKey reports whether key can be an API key: the prefix, at
// least 20 more characters, at most 200 in all.
func wellFormedKey(key string) bool {
	return strings.HasPrefix(key, Prefix) && len(key) >= len(Prefix)+20 && len(key) <= 200
}

// ID is key's id: the label value that finds its Secret.
func ID(key string) string { return hashKey(key)[:idLength] }

// Authenticate finds the Principal of key among the key Secrets of
// namespace (the operator's) through reader, a cache restricted to them in
// production. It returns nil for an unknown key.
func Authenticate(ctx context.Context, reader client.Reader, namespace, key string) (*Principal, error) {
	if !wellFormedKey(key) {
		return nil, nil
	}
	secrets := &corev1.SecretList{}
	if err := reader.List(ctx, secrets, client.InNamespace(namespace), client.MatchingLabels{IDLabel: ID(key)}); err != nil {
		return nil, err
	}
	want := []byte(hashKey(key))
	for i := range secrets.Items {
		s := &secrets.Items[i]
		tenant := s.Labels[v1alpha1.TenantLabel]
		if s.Type != SecretType || !s.DeletionTimestamp.IsZero() || tenant == "" {
			continue
		}
		if subtle.ConstantTimeCompare(s.Data[hashField], want) != 1 {
			continue
		}
		return &Principal{
			KeyID:       ID(key),
			Namespace:   v1alpha1.TenantNamespace(tenant),
			CompanyID:   tenant,
			CompanyName: s.Annotations[companyNameAnnot],
			Scopes:      strings.Split(string(s.Data[scopesField]), ","),
			LastUsedAt:  lastUsed(s),
			secretName:  s.Name,
		}, nil
	}
	return nil, nil
}

// Spec describes a key to create.
type Spec struct {
	// Namespace is the operator's namespace, where every key Secret lives.
	Namespace string
	// Tenant is the company id the key speaks for.
	Tenant string
	// CompanyName is the company's display name, shown by /v1/me.
	CompanyName string
	// Name tells people what the key is for.
	Name string
	// Scopes the key grants; each one of AllScopes.
	Scopes []string
	// Key registers this key instead of a random one (dev mode's --api-key).
	Key string
}

// Info is what may be shown of a stored key: never the key itself.
type Info struct {
	ID        string
	Tenant    string
	Name      string
	Prefix    string
	Scopes    []string
	CreatedAt time.Time
	// LastUsedAt is nil until the key's use is first recorded.
	LastUsedAt *time.Time
}

// Create stores a new key as spec says and returns it; the key is not
// stored and cannot be shown again. Registering the same fixed key twice
// (a dev-mode restart) answers the key again, with spec's scopes.
func Create(ctx context.Context, c client.Client, spec Spec) (string, Info, error) {
	if spec.Namespace == "" || spec.Tenant == "" {
		return "", Info{}, errors.New("an API key needs the operator namespace and a tenant")
	}
	if len(spec.Scopes) == 0 {
		return "", Info{}, fmt.Errorf("an API key needs at least one scope (known: %s)", strings.Join(AllScopes, ", "))
	}
	for _, s := range spec.Scopes {
		if !slices.Contains(AllScopes, s) {
			return "", Info{}, fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(AllScopes, ", "))
		}
	}
	// Stored once each, in AllScopes' order, so every listing reads alike.
	scopes := make([]string, 0, len(spec.Scopes))
	for _, s := range AllScopes {
		if slices.Contains(spec.Scopes, s) {
			scopes = append(scopes, s)
		}
	}
	key := spec.Key
	if key == "" {
		var err error
		if key, err = newKey(); err != nil {
			return "", Info{}, err
		}
	} else if !wellFormedKey(key) {
		return "", Info{}, fmt.Errorf("an API key starts with %s and has 20 to %d more characters", Prefix, 200-len(Prefix))
	}
	id := ID(key)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      secretName(id),
			Namespace: spec.Namespace,
			Labels:    map[string]string{IDLabel: id, v1alpha1.TenantLabel: spec.Tenant},
			Annotations: map[string]string{
				companyNameAnnot: spec.CompanyName,
				keyNameAnnot:     spec.Name,
				keyPrefixAnnot:   key[:len(Prefix)+keyPrefixChars],
			},
		},
		Type: SecretType,
		Data: map[string][]byte{
			hashField:   []byte(hashKey(key)),
			scopesField: []byte(strings.Join(scopes, ",")),
		},
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			existing := &corev1.Secret{}
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(secret), existing); gerr == nil &&
				string(existing.Data[hashField]) == hashKey(key) && existing.Labels[v1alpha1.TenantLabel] == spec.Tenant {
				// The scopes asked for now win: a dev-mode key stored by an
				// earlier version gains the scopes added since.
				if want := secret.Data[scopesField]; string(existing.Data[scopesField]) != string(want) {
					before := existing.DeepCopy()
					existing.Data[scopesField] = want
					if perr := c.Patch(ctx, existing, client.MergeFrom(before)); perr != nil {
						return "", Info{}, fmt.Errorf("unable to update the scopes of API key %s: %w", infoOf(existing).ID, perr)
					}
				}
				return key, infoOf(existing), nil
			}
		}
		return "", Info{}, fmt.Errorf("unable to store API key: %w", err)
	}
	return key, infoOf(secret), nil
}

func secretName(id string) string { return "apikey-" + id }

func infoOf(s *corev1.Secret) Info {
	out := Info{
		ID:        s.Labels[IDLabel],
		Tenant:    s.Labels[v1alpha1.TenantLabel],
		Name:      s.Annotations[keyNameAnnot],
		Prefix:    s.Annotations[keyPrefixAnnot],
		Scopes:    strings.Split(string(s.Data[scopesField]), ","),
		CreatedAt: s.CreationTimestamp.Time,
	}
	if t := lastUsed(s); !t.IsZero() {
		out.LastUsedAt = &t
	}
	return out
}

// lastUsed reads the recorded last use of key Secret s; zero when there is
// none or it cannot be read (it is only ever a hint).
func lastUsed(s *corev1.Secret) time.Time {
	t, err := time.Parse(time.RFC3339, s.Annotations[LastUsedAnnotation])
	if err != nil {
		return time.Time{}
	}
	return t
}

// List lists the keys of tenant stored in namespace, oldest first.
func List(ctx context.Context, reader client.Reader, namespace, tenant string) ([]Info, error) {
	secrets := &corev1.SecretList{}
	if err := reader.List(ctx, secrets, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.TenantLabel: tenant}, client.HasLabels{IDLabel}); err != nil {
		return nil, fmt.Errorf("unable to list API keys: %w", err)
	}
	out := make([]Info, 0, len(secrets.Items))
	for i := range secrets.Items {
		if secrets.Items[i].Type == SecretType {
			out = append(out, infoOf(&secrets.Items[i]))
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// ErrNotFound: no key of that id belongs to the tenant.
var ErrNotFound = errors.New("no such API key")

// Revoke deletes key id of tenant; a key of another tenant is
// ErrNotFound, as is an unknown one.
func Revoke(ctx context.Context, c client.Client, namespace, tenant, id string) error {
	return RevokeThrough(ctx, c, c, namespace, tenant, id)
}

// RevokeThrough is Revoke reading the Secret through reader: the API
// reads around its cache, so a key created a moment ago can be revoked.
func RevokeThrough(ctx context.Context, reader client.Reader, c client.Client, namespace, tenant, id string) error {
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName(id)}, secret)
	if apierrors.IsNotFound(err) || (err == nil && (secret.Type != SecretType || secret.Labels[v1alpha1.TenantLabel] != tenant)) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("unable to read API key: %w", err)
	}
	err = c.Delete(ctx, secret, client.Preconditions{UID: &secret.UID})
	if apierrors.IsNotFound(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("unable to revoke API key: %w", err)
	}
	return nil
}

// Migrate moves key Secrets that earlier versions kept in tenant
// namespaces into namespace (the operator's), so the API needs Secret
// access there alone. Each is copied, then the old one deleted; running it
// again after an interruption finishes the job. It returns how many moved.
// It needs cluster-wide Secret access: the platform team runs it, never
// routeopt's own components.
func Migrate(ctx context.Context, c client.Client, namespace string) (int, error) {
	secrets := &corev1.SecretList{}
	if err := c.List(ctx, secrets, client.MatchingFields{"type": string(SecretType)}); err != nil {
		return 0, fmt.Errorf("unable to list API keys: %w", err)
	}
	moved := 0
	for i := range secrets.Items {
		old := &secrets.Items[i]
		if old.Namespace == namespace {
			continue
		}
		tenant := old.Labels[v1alpha1.TenantLabel]
		if tenant == "" {
			tenant = strings.TrimPrefix(old.Namespace, v1alpha1.TenantNamespacePrefix)
		}
		id := old.Labels[IDLabel]
		if id == "" || len(old.Data[hashField]) == 0 {
			continue
		}
		copied := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:        secretName(id),
				Namespace:   namespace,
				Labels:      map[string]string{IDLabel: id, v1alpha1.TenantLabel: tenant},
				Annotations: old.Annotations,
			},
			Type: SecretType,
			Data: old.Data,
		}
		if err := c.Create(ctx, copied); err != nil && !apierrors.IsAlreadyExists(err) {
			return moved, fmt.Errorf("unable to move API key %s of %s: %w", id, old.Namespace, err)
		}
		if err := c.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
			return moved, fmt.Errorf("unable to delete API key %s from %s: %w", id, old.Namespace, err)
		}
		moved++
	}
	return moved, nil
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newKey is svc_sk_ followed by 32 random bytes in base62.
func newKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	n := new(big.Int).SetBytes(b)
	var sb strings.Builder
	sb.WriteString(Prefix)
	digits := make([]byte, 0, 44)
	radix := big.NewInt(62)
	mod := new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		digits = append(digits, base62[mod.Int64()])
	}
	for len(digits) < 43 {
		digits = append(digits, '0')
	}
	slices.Reverse(digits)
	sb.Write(digits)
	return sb.String(), nil
}
