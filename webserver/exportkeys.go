package webserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The export signing key signs the download links of exports (exports.go).
// It is one Secret in the operator's namespace, shared by every API
// replica: a current key, with which links are signed, and after a
// rotation the previous one, with which links signed before the rotation
// still verify until they expire. Exactly one previous key is kept, so a
// second rotation within a link lifetime invalidates the links the oldest
// key signed. The API creates the Secret when it is missing; only the
// platform team rotates it (`routeopt exportkey rotate`, RotateExportSigningKey).
const (
	// ExportSigningKeySecret names the Secret.
	ExportSigningKeySecret = "routeopt-export-signing-key"
	// SecretTypeExportSigningKey is its type.
	SecretTypeExportSigningKey corev1.SecretType = "routeopt.io/export-signing-key"

	exportKeyCurrentIDField  = "current-key-id"
	exportKeyCurrentField    = "current-key"
	exportKeyPreviousIDField = "previous-key-id"
	exportKeyPreviousField   = "previous-key"
	// exportKeyRotatedAnnot holds when the key was last rotated (RFC 3339).
	exportKeyRotatedAnnot = "routeopt.io/rotated-at"
	// exportKeyBytes is the length of a signing key.
	exportKeyBytes = 32

	// defaultExportKeyRefresh is how long a replica signs and verifies with
	// the keys it read before reading them again (Options.ExportKeyRefresh):
	// a rotation reaches every replica within it.
	defaultExportKeyRefresh = 10 * time.Second
	// exportKeyRecheck is how often a link with a key id the replica does
	// not know may make it read the Secret again (a rotation it has not
	// seen yet), so forged links cannot hammer the Kubernetes API.
	exportKeyRecheck = time.Second
)

// SigningKey is one export signing key and its id, which links name.
type SigningKey struct {
	ID  string
	Key []byte
}

// ExportSigningKeys is the content of the signing key Secret.
type ExportSigningKeys struct {
	Current SigningKey
	// Previous is the key before the last rotation, nil before any.
	Previous *SigningKey
	// RotatedAt is when the last rotation happened; zero before any.
	RotatedAt time.Time
}

// byID returns the key named id, or nil.
func (k *ExportSigningKeys) byID(id string) *SigningKey {
	switch {
	case k == nil || id == "":
		return nil
	case k.Current.ID == id:
		return &k.Current
	case k.Previous != nil && k.Previous.ID == id:
		return k.Previous
	}
	return nil
}

// newSigningKey makes a random key. Its id is derived from it (the first 12
// hex digits of its SHA-256), so ids of different keys differ.
func newSigningKey() (SigningKey, error) {
	key := make([]byte, exportKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return SigningKey{}, err
	}
	sum := sha256.Sum256(key)
	return SigningKey{ID: hex.EncodeToString(sum[:6]), Key: key}, nil
}

// parseExportSigningKeys reads the Secret.
func parseExportSigningKeys(s *corev1.Secret) (*ExportSigningKeys, error) {
	if s.Type != SecretTypeExportSigningKey {
		return nil, fmt.Errorf("secret %s/%s has type %q, want %q", s.Namespace, s.Name, s.Type, SecretTypeExportSigningKey)
	}
	k := &ExportSigningKeys{Current: SigningKey{ID: string(s.Data[exportKeyCurrentIDField]), Key: s.Data[exportKeyCurrentField]}}
	if k.Current.ID == "" || len(k.Current.Key) < exportKeyBytes {
		return nil, fmt.Errorf("secret %s/%s has no current key of %d bytes with its id", s.Namespace, s.Name, exportKeyBytes)
	}
	if id, key := string(s.Data[exportKeyPreviousIDField]), s.Data[exportKeyPreviousField]; id != "" && len(key) >= exportKeyBytes && id != k.Current.ID {
		k.Previous = &SigningKey{ID: id, Key: key}
	}
	if at, err := time.Parse(time.RFC3339, s.Annotations[exportKeyRotatedAnnot]); err == nil {
		k.RotatedAt = at
	}
	return k, nil
}

// fill writes k into s.
func (k *ExportSigningKeys) fill(s *corev1.Secret) {
	s.Type = SecretTypeExportSigningKey
	s.Data = map[string][]byte{
		exportKeyCurrentIDField: []byte(k.Current.ID),
		exportKeyCurrentField:   k.Current.Key,
	}
	if k.Previous != nil {
		s.Data[exportKeyPreviousIDField] = []byte(k.Previous.ID)
		s.Data[exportKeyPreviousField] = k.Previous.Key
	}
	if !k.RotatedAt.IsZero() {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[exportKeyRotatedAnnot] = k.RotatedAt.UTC().Format(time.RFC3339)
	}
}

// EnsureExportSigningKey reads the signing key Secret of namespace through
// r, creating it with a new key through w when it is missing. A replica
// that loses the race to create it reads the winner's.
func EnsureExportSigningKey(ctx context.Context, r client.Reader, w client.Writer, namespace string) (*ExportSigningKeys, error) {
	s := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ExportSigningKeySecret}, s)
	if err == nil {
		return parseExportSigningKeys(s)
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	current, err := newSigningKey()
	if err != nil {
		return nil, err
	}
	keys := &ExportSigningKeys{Current: current}
	s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ExportSigningKeySecret, Namespace: namespace}}
	keys.fill(s)
	err = w.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		s = &corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ExportSigningKeySecret}, s); err != nil {
			return nil, err
		}
		return parseExportSigningKeys(s)
	}
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// ExportKeyRotation tells what a rotation did.
type ExportKeyRotation struct {
	// Current is the id of the new key, which signs links from now on.
	Current string
	// Previous is the id of the key it replaced, which still verifies the
	// links it signed until they expire; empty when there was none.
	Previous string
	// Dropped is the id of the key before that, whose links no longer
	// verify; empty when there was none.
	Dropped string
	// DroppedRotatedAt is when Dropped stopped signing (the rotation
	// before this one); zero when unknown.
	DroppedRotatedAt time.Time
}

// RotateExportSigningKey makes a new current key; the current one becomes
// the previous one and the previous one is dropped. The Secret is updated
// with its resourceVersion (retried on conflict), so concurrent rotations
// do not lose a key silently; a missing Secret is created.
func RotateExportSigningKey(ctx context.Context, c client.Client, namespace string, now time.Time) (ExportKeyRotation, error) {
	var out ExportKeyRotation
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		out = ExportKeyRotation{}
		s := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ExportSigningKeySecret}, s)
		if apierrors.IsNotFound(err) {
			keys, err := EnsureExportSigningKey(ctx, c, c, namespace)
			if err != nil {
				return err
			}
			out.Current = keys.Current.ID
			return nil
		}
		if err != nil {
			return err
		}
		keys, err := parseExportSigningKeys(s)
		if err != nil {
			return fmt.Errorf("%w; delete the Secret to start over (every link signed so far stops working)", err)
		}
		next, err := newSigningKey()
		if err != nil {
			return err
		}
		if keys.Previous != nil {
			out.Dropped, out.DroppedRotatedAt = keys.Previous.ID, keys.RotatedAt
		}
		out.Previous, out.Current = keys.Current.ID, next.ID
		rotated := &ExportSigningKeys{Current: next, Previous: &keys.Current, RotatedAt: now}
		rotated.fill(s)
		return c.Update(ctx, s)
	})
	return out, err
}

// exportKeyring is a replica's copy of the signing keys, read directly from
// the API server (the API's Secret informer holds API keys only) and read
// again when older than refresh.
type exportKeyring struct {
	reader    client.Reader
	writer    client.Writer
	namespace string
	clock     clock.PassiveClock
	refresh   time.Duration

	// lock is held while the keys are read; waiting for it ends with the
	// caller's context, so requests do not queue behind a read that hangs.
	lock     *semaphore.Weighted
	keys     *ExportSigningKeys
	loadedAt time.Time
}

// get returns the keys, read again when the copy is older than maxAge.
func (k *exportKeyring) get(ctx context.Context, maxAge time.Duration) (*ExportSigningKeys, error) {
	if err := k.lock.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("waiting for the export signing key: %w", err)
	}
	defer k.lock.Release(1)
	now := k.clock.Now()
	if k.keys != nil && now.Sub(k.loadedAt) < maxAge {
		return k.keys, nil
	}
	keys, err := EnsureExportSigningKey(ctx, k.reader, k.writer, k.namespace)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		return nil, errors.New("no export signing key")
	}
	k.keys, k.loadedAt = keys, now
	return keys, nil
}

// current returns the keys, read again when the copy is older than refresh.
func (k *exportKeyring) current(ctx context.Context) (*ExportSigningKeys, error) {
	return k.get(ctx, k.refresh)
}

// lookup returns the key named id: from the copy, else (a rotation this
// replica has not seen yet) from a fresh read at most every exportKeyRecheck.
func (k *exportKeyring) lookup(ctx context.Context, id string) (*SigningKey, error) {
	keys, err := k.current(ctx)
	if err != nil {
		return nil, err
	}
	if key := keys.byID(id); key != nil {
		return key, nil
	}
	if keys, err = k.get(ctx, exportKeyRecheck); err != nil {
		return nil, err
	}
	return keys.byID(id), nil
}
