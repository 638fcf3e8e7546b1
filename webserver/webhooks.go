package webserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/schema"
)

// Webhook endpoints (docs/API.md, "Webhooks"). An endpoint is a
// WebhookEndpoint in the tenant namespace,
// named after the first free one of the company's five slots: etcd refuses
// a second object of a name, so the limit holds however many creates race.
// Its REST id is its uid. Its signing secret is a Secret in the operator's
// namespace, labelled with the tenant and the endpoint's uid; the endpoint
// carries a finalizer until that Secret is gone.

// webhookCheckTimeout bounds the DNS lookups of a registration check.
const webhookCheckTimeout = 3 * time.Second

// WebhookRecord is the REST record of a webhook endpoint.
type WebhookRecord struct {
	ID           string `json:"id"`
	URL          string `json:"url"`
	CreatedAt    string `json:"created_at"`
	LastStatus   *int   `json:"last_status"`
	FailureCount int    `json:"failure_count"`
	Disabled     bool   `json:"disabled"`
}

// webhookCreated is the answer to a create: the record and, this once, the
// signing secret.
type webhookCreated struct {
	WebhookRecord
	Secret string `json:"secret"`
}

// webhookRecord renders an endpoint. last_status is an HTTP status or null:
// an attempt that got no answer has no status to show.
func webhookRecord(ep *v1alpha1.WebhookEndpoint) WebhookRecord {
	rec := WebhookRecord{
		ID:           string(ep.UID),
		URL:          ep.Spec.URL,
		CreatedAt:    timestamp(ep.CreationTimestamp.Time),
		FailureCount: int(ep.Status.FailureCount),
		Disabled:     ep.Status.Disabled,
	}
	if st := ep.Status.LastStatus; st != nil && *st >= 100 && *st <= 599 {
		v := int(*st)
		rec.LastStatus = &v
	}
	return rec
}

// listWebhooks answers GET /v1/webhooks: the company's endpoints, oldest
// first, from the cache. Endpoints being deleted are left out.
func (s *Server) listWebhooks(c *gin.Context) {
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	list := &v1alpha1.WebhookEndpointList{}
	if err := s.client.List(ctx, list, client.InNamespace(principal(c).Namespace)); err != nil {
		abortKube(c, err, "webhook endpoints")
		return
	}
	items := make([]*v1alpha1.WebhookEndpoint, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp.IsZero() {
			items = append(items, &list.Items[i])
		}
	}
	slices.SortFunc(items, func(a, b *v1alpha1.WebhookEndpoint) int {
		if d := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]WebhookRecord, 0, len(items))
	for _, ep := range items {
		out = append(out, webhookRecord(ep))
	}
	respondJSON(c, http.StatusOK, gin.H{"items": out})
}

// createWebhook answers POST /v1/webhooks.
func (s *Server) createWebhook(c *gin.Context) {
	body, ok := readBody(c)
	if !ok {
		return
	}
	in, details := schema.DecodeWebhookIn(body)
	if len(details) > 0 {
		abortValidation(c, details)
		return
	}
	if refusal := s.checkWebhookURL(c.Request.Context(), in.URL); refusal != nil {
		abortValidation(c, []schema.Detail{schema.ValueError([]any{"body", "url"}, refusal.Error(), in.URL)})
		return
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		abortInternal(c, err)
		return
	}
	secretName, err := webhookSecretName()
	if err != nil {
		abortInternal(c, err)
		return
	}

	p := principal(c)
	ep, err := s.takeWebhookSlot(c, p, in.URL, secretName)
	if err != nil {
		var invalid *apierrors.StatusError
		switch {
		case errors.Is(err, errWebhookLimit):
			abortError(c, http.StatusConflict, CodeWebhookLimitReached,
				fmt.Sprintf("at most %d webhook endpoints can be registered; delete one first", v1alpha1.MaxWebhookEndpoints),
				map[string]any{"limit": v1alpha1.MaxWebhookEndpoints})
		case apierrors.IsInvalid(err) && errors.As(err, &invalid):
			// The CRD's own rules caught something validation let through.
			abortValidation(c, []schema.Detail{schema.ValueError([]any{"body", "url"}, invalid.ErrStatus.Message, in.URL)})
		default:
			abortKube(c, err, "webhook endpoint")
		}
		return
	}

	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      secretName,
			Namespace: s.opts.OperatorNamespace,
			Labels: map[string]string{
				v1alpha1.TenantLabel:             p.CompanyID,
				v1alpha1.WebhookEndpointUIDLabel: string(ep.UID),
			},
		},
		Type: corev1.SecretType(v1alpha1.WebhookSecretType),
		Data: map[string][]byte{v1alpha1.WebhookSecretKey: []byte(secret)},
	}
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	if err := s.client.Create(ctx, sec); err != nil {
		s.undoWebhookEndpoint(c, ep)
		if apierrors.IsNotFound(err) {
			// The operator's namespace is missing: nothing the client did.
			abortInternal(c, fmt.Errorf("storing the signing secret: %w", err))
			return
		}
		abortKube(c, err, "webhook signing secret")
		return
	}
	respondJSON(c, http.StatusCreated, webhookCreated{WebhookRecord: webhookRecord(ep), Secret: secret})
}

// checkWebhookURL asks the policy whether raw may receive events, with its
// DNS lookups bounded.
func (s *Server) checkWebhookURL(ctx context.Context, raw string) error {
	ctx, cancel := context.WithTimeout(ctx, webhookCheckTimeout)
	defer cancel()
	return s.opts.WebhookPolicy.CheckURL(ctx, raw)
}

// errWebhookLimit means every slot is taken.
var errWebhookLimit = errors.New("webhook endpoint limit reached")

// takeWebhookSlot creates the endpoint in the first free slot: a create
// that finds its name taken tries the next one.
func (s *Server) takeWebhookSlot(c *gin.Context, p *apikey.Principal, url, secretName string) (*v1alpha1.WebhookEndpoint, error) {
	for slot := 1; slot <= v1alpha1.MaxWebhookEndpoints; slot++ {
		ep := &v1alpha1.WebhookEndpoint{
			ObjectMeta: metav1.ObjectMeta{
				Name:       v1alpha1.WebhookEndpointName(slot),
				Namespace:  p.Namespace,
				Labels:     map[string]string{v1alpha1.TenantLabel: p.CompanyID},
				Finalizers: []string{v1alpha1.SigningSecretFinalizer},
			},
			Spec: v1alpha1.WebhookEndpointSpec{URL: url, SecretName: secretName},
		}
		ctx, cancel := s.kubeContext(c)
		err := s.client.Create(ctx, ep)
		cancel()
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return ep, nil
	}
	return nil, errWebhookLimit
}

// undoWebhookEndpoint removes, in the background, an endpoint whose
// signing secret could not be stored: without a secret it could never be
// used. A create that timed out may have stored the Secret all the same,
// so that goes too. The request is answered at once; the undo goes on
// after it, and only logs its own failures.
func (s *Server) undoWebhookEndpoint(c *gin.Context, ep *v1alpha1.WebhookEndpoint) {
	log := loggerFrom(c)
	ctx := context.WithoutCancel(c.Request.Context())
	go func() {
		ctx, cancel := context.WithTimeout(ctx, s.opts.SlowRequestTimeout)
		defer cancel()
		if err := s.deleteSigningSecret(ctx, ep); err != nil {
			log.Error(err, "Could not delete the signing secret of an undone webhook endpoint", "namespace", s.opts.OperatorNamespace, "name", ep.Spec.SecretName)
		}
		if err := s.removeSigningFinalizer(ctx, ep); err == nil {
			err = s.deleteEndpoint(ctx, ep)
			if err == nil {
				return
			}
			log.Error(err, "Could not delete a webhook endpoint without a signing secret", "namespace", ep.Namespace, "name", ep.Name)
		} else {
			log.Error(err, "Could not remove the finalizer of a webhook endpoint without a signing secret", "namespace", ep.Namespace, "name", ep.Name)
		}
	}()
}

// deleteWebhook answers DELETE /v1/webhooks/{webhook_id}: the signing
// Secret, then the finalizer, then the endpoint itself.
func (s *Server) deleteWebhook(c *gin.Context) {
	uid, details := schema.ParseUUIDParam("webhook_id", c.Param("webhook_id"))
	if len(details) > 0 {
		abortValidation(c, details)
		return
	}
	ep, err := s.findWebhook(c, principal(c).Namespace, types.UID(uid))
	if err != nil {
		abortKube(c, err, "webhook endpoint")
		return
	}
	if ep == nil {
		abortError(c, http.StatusNotFound, CodeNotFound, "webhook endpoint not found", nil)
		return
	}

	// Each step is bounded on its own; a step that fails leaves the ones
	// before it done, and a retried delete finishes the work.
	for _, step := range []struct {
		what string
		do   func(context.Context, *v1alpha1.WebhookEndpoint) error
	}{
		{"webhook signing secret", s.deleteSigningSecret},
		{"webhook endpoint", s.removeSigningFinalizer},
		{"webhook endpoint", s.deleteEndpoint},
	} {
		ctx, cancel := s.kubeContext(c)
		err := step.do(ctx, ep)
		cancel()
		if err != nil {
			abortKube(c, err, step.what)
			return
		}
	}
	c.Status(http.StatusNoContent)
}

// findWebhook finds the endpoint of namespace with uid, in the cache and,
// when the cache does not have it (a create just answered), on the API
// server. It returns nil when there is none.
func (s *Server) findWebhook(c *gin.Context, namespace string, uid types.UID) (*v1alpha1.WebhookEndpoint, error) {
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	for _, reader := range []client.Reader{s.client, s.apiReader} {
		list := &v1alpha1.WebhookEndpointList{}
		if err := reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			if list.Items[i].UID == uid {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// deleteSigningSecret deletes ep's signing Secret, if it is the one
// labelled with ep's uid. Secrets are read around the API's cache, which
// holds API keys only.
func (s *Server) deleteSigningSecret(ctx context.Context, ep *v1alpha1.WebhookEndpoint) error {
	if ep.Spec.SecretName == "" {
		return nil
	}
	sec := &corev1.Secret{}
	err := s.apiReader.Get(ctx, client.ObjectKey{Namespace: s.opts.OperatorNamespace, Name: ep.Spec.SecretName}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if sec.Labels[v1alpha1.WebhookEndpointUIDLabel] != string(ep.UID) {
		return nil
	}
	err = s.client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// removeSigningFinalizer takes SigningSecretFinalizer off ep with a merge
// patch that carries the resourceVersion, re-reading ep on a conflict; an
// endpoint gone or replaced by another of the same name is left alone.
func (s *Server) removeSigningFinalizer(ctx context.Context, ep *v1alpha1.WebhookEndpoint) error {
	current := ep.DeepCopy()
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			current = &v1alpha1.WebhookEndpoint{}
			err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(ep), current)
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if current.UID != ep.UID {
				return nil
			}
		}
		first = false
		if !slices.Contains(current.Finalizers, v1alpha1.SigningSecretFinalizer) {
			return nil
		}
		patched := current.DeepCopy()
		patched.Finalizers = slices.DeleteFunc(patched.Finalizers, func(f string) bool { return f == v1alpha1.SigningSecretFinalizer })
		err := s.client.Patch(ctx, patched, client.MergeFromWithOptions(current, client.MergeFromWithOptimisticLock{}))
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// deleteEndpoint deletes ep, and only ep: the uid is a precondition, so an
// endpoint registered since in the same slot stays.
func (s *Server) deleteEndpoint(ctx context.Context, ep *v1alpha1.WebhookEndpoint) error {
	uid := ep.UID
	target := &v1alpha1.WebhookEndpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ep.Namespace, Name: ep.Name}}
	err := s.client.Delete(ctx, target, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// Gone already, or the name now belongs to another endpoint.
		return nil
	}
	return err
}

// webhookSecretName names a signing-secret Secret: whsec- and 16 random
// hex digits.
func webhookSecretName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "whsec-" + hex.EncodeToString(b), nil
}
