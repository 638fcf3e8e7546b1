// Package exportkey is the key that signs export download links: one
// Secret in the operator's namespace that every API replica shares, its
// rotation, and each replica's copy of it.
package exportkey

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

// The export signing key signs the download links of exports.
// It is one Secret in the operator's namespace, shared by every API
// replica: a current key, with which links are signed, and after a
// rotation the previous one, with which links signed before the rotation
// still verify until they expire. Exactly one previous key is kept, so a
// second rotation within a link lifetime invalidates the links the oldest
// key signed. The API creates the Secret when it is missing; only the
// platform team rotates it (`routeopt exportkey rotate`, Rotate).
const (
	// SecretName names the Secret.
	SecretName = "routeopt-export-signing-key"
	// SecretType is its type.
	SecretType corev1.SecretType = "routeopt.io/export-signing-key"

	currentIDField  = "current-key-id"
	currentField    = "current-key"
	previousIDField = "previous-key-id"
	previousField   = "previous-key"
	// rotatedAnnot holds when the key was last rotated (RFC 3339).
	rotatedAnnot = "routeopt.io/rotated-at"
	// keyBytes is the length of a signing key.
	keyBytes = 32

	// DefaultRefresh is how long a replica signs and verifies with the
	// keys it read before reading them again: a rotation reaches every
	// replica within it.
	DefaultRefresh = 10 * time.Second
	// recheck is how often a link with a key id the replica does
	// not know may make it read the Secret again (a rotation it has not
	// seen yet), so forged links cannot hammer the Kubernetes API.
	recheck = time.Second
)

// Key is one export signing key and its id, which links name.
type Key struct {
	ID  string
	Key []byte
}

// Keys is the content of the signing key Secret.
type Keys struct {
	Current Key
	// Previous is the key before the last rotation, nil before any.
	Previous *Key
	// RotatedAt is when the last rotation happened; zero before any.
	RotatedAt time.Time
}

// ByID returns the key named id, or nil.
func (k *Keys) ByID(id string) *Key {
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

// newKey makes a random key. Its id is derived from it (the first 12
// hex digits of its SHA-256), so ids of different keys differ.
func newKey() (Key, error) {
	key := make([]byte, keyBytes)
	if _, err := rand.Read(key); err != nil {
		return Key{}, err
	}
	sum := sha256.Sum256(key)
	return Key{ID: hex.EncodeToString(sum[:6]), Key: key}, nil
}

// parse reads the Secret.
func parse(s *corev1.Secret) (*Keys, error) {
	if s.Type != SecretType {
		return nil, fmt.Errorf("secret %s/%s has type %q, want %q", s.Namespace, s.Name, s.Type, SecretType)
	}
	k := &Keys{Current: Key{ID: string(s.Data[currentIDField]), Key: s.Data[currentField]}}
	if k.Current.ID == "" || len(k.Current.Key) < keyBytes {
		return nil, fmt.Errorf("secret %s/%s has no current key of %d bytes with its id", s.Namespace, s.Name, keyBytes)
	}
	if id, key := string(s.Data[previousIDField]), s.Data[previousField]; id != "" && len(key) >= keyBytes && id != k.Current.ID {
		k.Previous = &Key{ID: id, Key: key}
	}
	if at, err := time.Parse(time.RFC3339, s.Annotations[rotatedAnnot]); err == nil {
		k.RotatedAt = at
	}
	return k, nil
}

// fill writes k into s.
func (k *Keys) fill(s *corev1.Secret) {
	s.Type = SecretType
	s.Data = map[string][]byte{
		currentIDField: []byte(k.Current.ID),
		currentField:   k.Current.Key,
	}
	if k.Previous != nil {
		s.Data[previousIDField] = []byte(k.Previous.ID)
		s.Data[previousField] = k.Previous.Key
	}
	if !k.RotatedAt.IsZero() {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[rotatedAnnot] = k.RotatedAt.UTC().Format(time.RFC3339)
	}
}

// Ensure reads the signing key Secret of namespace through
// r, creating it with a new key through w when it is missing. A replica
// that loses the race to create it reads the winner's.
func Ensure(ctx context.Context, r client.Reader, w client.Writer, namespace string) (*Keys, error) {
	s := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName}, s)
	if err == nil {
		return parse(s)
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	current, err := newKey()
	if err != nil {
		return nil, err
	}
	keys := &Keys{Current: current}
	s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: namespace}}
	keys.fill(s)
	err = w.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		s = &corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName}, s); err != nil {
			return nil, err
		}
		return parse(s)
	}
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// Rotation tells what a rotation did.
type Rotation struct {
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

// Rotate makes a new current key; the current one becomes
// the previous one and the previous one is dropped. The Secret is updated
// with its resourceVersion (retried on conflict), so concurrent rotations
// do not lose a key silently; a missing Secret is created.
func Rotate(ctx context.Context, c client.Client, namespace string, now time.Time) (Rotation, error) {
	var out Rotation
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		out = Rotation{}
		s := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: SecretName}, s)
		if apierrors.IsNotFound(err) {
			keys, err := Ensure(ctx, c, c, namespace)
			if err != nil {
				return err
			}
			out.Current = keys.Current.ID
			return nil
		}
		if err != nil {
			return err
		}
		keys, err := parse(s)
		if err != nil {
			return fmt.Errorf("%w; delete the Secret to start over (every link signed so far stops working)", err)
		}
		next, err := newKey()
		if err != nil {
			return err
		}
		if keys.Previous != nil {
			out.Dropped, out.DroppedRotatedAt = keys.Previous.ID, keys.RotatedAt
		}
		out.Previous, out.Current = keys.Current.ID, next.ID
		rotated := &Keys{Current: next, Previous: &keys.Current, RotatedAt: now}
		rotated.fill(s)
		return c.Update(ctx, s)
	})
	return out, err
}

// Ring is a replica's copy of the signing keys, read directly from the API
// server (the API's Secret informer holds API keys only) and read again
// when older than its refresh.
type Ring struct {
	reader    client.Reader
	writer    client.Writer
	namespace string
	clock     clock.PassiveClock
	refresh   time.Duration

	// lock is held while the keys are read; waiting for it ends with the
	// caller's context, so requests do not queue behind a read that hangs.
	lock     *semaphore.Weighted
	keys     *Keys
	loadedAt time.Time
}

// NewRing reads the keys of namespace through reader, creating them through
// writer when they are missing, and reads them again when its copy is older
// than refresh (DefaultRefresh when zero).
func NewRing(reader client.Reader, writer client.Writer, namespace string, clk clock.PassiveClock, refresh time.Duration) *Ring {
	if refresh == 0 {
		refresh = DefaultRefresh
	}
	return &Ring{reader: reader, writer: writer, namespace: namespace, clock: clk, refresh: refresh, lock: semaphore.NewWeighted(1)}
}

// Get returns the keys, read again when the copy is older than maxAge
// (at once with 0).
func (k *Ring) Get(ctx context.Context, maxAge time.Duration) (*Keys, error) {
	if err := k.lock.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("waiting for the export signing key: %w", err)
	}
	defer k.lock.Release(1)
	now := k.clock.Now()
	if k.keys != nil && now.Sub(k.loadedAt) < maxAge {
		return k.keys, nil
	}
	keys, err := Ensure(ctx, k.reader, k.writer, k.namespace)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		return nil, errors.New("no export signing key")
	}
	k.keys, k.loadedAt = keys, now
	return keys, nil
}

// Current returns the keys, read again when the copy is older than refresh.
func (k *Ring) Current(ctx context.Context) (*Keys, error) {
	return k.Get(ctx, k.refresh)
}

// Lookup returns the key named id, nil when there is none: from the copy,
// else (a rotation this replica has not seen yet) from a fresh read at most
// every recheck.
func (k *Ring) Lookup(ctx context.Context, id string) (*Key, error) {
	keys, err := k.Current(ctx)
	if err != nil {
		return nil, err
	}
	if key := keys.ByID(id); key != nil {
		return key, nil
	}
	if keys, err = k.Get(ctx, recheck); err != nil {
		return nil, err
	}
	return keys.ByID(id), nil
}
