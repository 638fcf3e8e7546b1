package webserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"math/big"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
)

// API keys are Secrets of type SecretTypeAPIKey in the tenant namespace.
// They hold the SHA-256 of the key, never the key; the key id label (a
// prefix of that hash) lets the server find the Secret with a label-filtered
// lookup instead of listing every Secret.
const (
	SecretTypeAPIKey corev1.SecretType = "routeopt.io/api-key"
	// APIKeyIDLabel holds the key id: the first 16 hex digits of the key's SHA-256.
	APIKeyIDLabel = "routeopt.io/api-key-id"
	// APIKeyPrefix starts every key.
	APIKeyPrefix = "svc_sk_"

	apiKeyHashField   = "sha256"
	apiKeyScopesField = "scopes"
	companyNameAnnot  = v1alpha1.TenantDisplayNameAnnotation
	keyIDLength       = 16
)

// Scopes of API-DECISIONS.md.
const (
	ScopeOptimizationsRead  = "optimizations:read"
	ScopeOptimizationsWrite = "optimizations:write"
	ScopeExportsWrite       = "exports:write"
	ScopeWebhooksRead       = "webhooks:read"
	ScopeWebhooksWrite      = "webhooks:write"
)

// AllScopes lists every scope, in the order /v1/me shows them.
var AllScopes = []string{ScopeOptimizationsRead, ScopeOptimizationsWrite, ScopeExportsWrite, ScopeWebhooksRead, ScopeWebhooksWrite}

// Principal is who an API key speaks for.
type Principal struct {
	// KeyID identifies the key (a prefix of its hash) for rate limiting and logs.
	KeyID string
	// Namespace is the tenant namespace.
	Namespace   string
	CompanyID   string
	CompanyName string
	Scopes      []string
}

// Has reports whether the key carries scope.
func (p *Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

func hashKey(key string) string { return sha256Hex([]byte(key)) }

// wellFormedKey reports whether key can be an API key: the prefix, at
// least 20 more characters, at most 200 in all.
func wellFormedKey(key string) bool {
	return strings.HasPrefix(key, APIKeyPrefix) && len(key) >= len(APIKeyPrefix)+20 && len(key) <= 200
}

// KeyID is the label value that finds key's Secret.
func KeyID(key string) string { return hashKey(key)[:keyIDLength] }

// Authenticate finds the Principal of key through reader (a cache restricted
// to API key Secrets in production). It returns nil for an unknown key.
func Authenticate(ctx context.Context, reader client.Reader, key string) (*Principal, error) {
	if !wellFormedKey(key) {
		return nil, nil
	}
	secrets := &corev1.SecretList{}
	if err := reader.List(ctx, secrets, client.MatchingLabels{APIKeyIDLabel: KeyID(key)}); err != nil {
		return nil, err
	}
	want := []byte(hashKey(key))
	for i := range secrets.Items {
		s := &secrets.Items[i]
		if s.Type != SecretTypeAPIKey || !s.DeletionTimestamp.IsZero() {
			continue
		}
		if subtle.ConstantTimeCompare(s.Data[apiKeyHashField], want) != 1 {
			continue
		}
		return &Principal{
			KeyID:       KeyID(key),
			Namespace:   s.Namespace,
			CompanyID:   s.Labels[v1alpha1.TenantLabel],
			CompanyName: s.Annotations[companyNameAnnot],
			Scopes:      strings.Split(string(s.Data[apiKeyScopesField]), ","),
		}, nil
	}
	return nil, nil
}

// TenantNamespace is the namespace of company id.
func TenantNamespace(companyID string) string { return "tenant-" + companyID }

// EnsureTenant creates the namespace of a company, labelled as a tenant.
func EnsureTenant(ctx context.Context, c client.Client, companyID, companyName string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:        TenantNamespace(companyID),
		Labels:      map[string]string{v1alpha1.TenantLabel: companyID},
		Annotations: map[string]string{v1alpha1.TenantDisplayNameAnnotation: companyName},
	}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("unable to create tenant namespace: %w", err)
	}
	return ns.Name, nil
}

// CreateAPIKey makes a new key for the company in its namespace and returns
// it; the key is not stored and cannot be shown again. With key non-empty
// that key is registered instead of a random one (dev mode's --api-key).
func CreateAPIKey(ctx context.Context, c client.Client, companyID, companyName string, scopes []string, key string) (string, error) {
	for _, s := range scopes {
		if !slices.Contains(AllScopes, s) {
			return "", fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(AllScopes, ", "))
		}
	}
	if key == "" {
		var err error
		if key, err = newAPIKey(); err != nil {
			return "", err
		}
	} else if !wellFormedKey(key) {
		return "", fmt.Errorf("an API key starts with %s and has 20 to %d more characters", APIKeyPrefix, 200-len(APIKeyPrefix))
	}
	ns, err := EnsureTenant(ctx, c, companyID, companyName)
	if err != nil {
		return "", err
	}
	id := KeyID(key)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "apikey-" + id,
			Namespace:   ns,
			Labels:      map[string]string{APIKeyIDLabel: id, v1alpha1.TenantLabel: companyID},
			Annotations: map[string]string{companyNameAnnot: companyName},
		},
		Type: SecretTypeAPIKey,
		Data: map[string][]byte{
			apiKeyHashField:   []byte(hashKey(key)),
			apiKeyScopesField: []byte(strings.Join(scopes, ",")),
		},
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			existing := &corev1.Secret{}
			if gerr := c.Get(ctx, client.ObjectKeyFromObject(secret), existing); gerr == nil && string(existing.Data[apiKeyHashField]) == hashKey(key) {
				return key, nil // the same key registered before (dev restart)
			}
		}
		return "", fmt.Errorf("unable to store API key: %w", err)
	}
	return key, nil
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newAPIKey is svc_sk_ followed by 32 random bytes in base62.
func newAPIKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	n := new(big.Int).SetBytes(b)
	var sb strings.Builder
	sb.WriteString(APIKeyPrefix)
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
