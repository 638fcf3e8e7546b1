package webserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/docstore"
	"routeopt.io/routeopt/webserver/optcache"
	"routeopt.io/routeopt/webserver/schema"
	"routeopt.io/routeopt/webserver/storesize"
)

// CreateFieldManager is the field manager of the API's creates.
const CreateFieldManager = "routeopt-api"

// idempotencyNamespace seeds the UUIDv5 ids derived from (tenant, key).
var idempotencyNamespace = uuid.MustParse("6f1c8a52-3c2e-4a8e-9b7d-2f0c5e4d1a90")

// OptimizationID is the id of the optimization created in namespace with
// Idempotency-Key key: retried creates collide in etcd by construction.
func OptimizationID(namespace, key string) string {
	return uuid.NewSHA1(idempotencyNamespace, []byte(namespace+"\x00"+key)).String()
}

// readBody reads the request body, answering 413 past the limit.
func readBody(c *gin.Context) ([]byte, bool) {
	body, err := io.ReadAll(c.Request.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		abortError(c, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body is larger than the limit", map[string]any{"max_bytes": tooLarge.Limit})
		return nil, false
	}
	if err != nil {
		abortError(c, http.StatusBadRequest, CodeBadRequest, "request body could not be read", nil)
		return nil, false
	}
	return body, true
}

// newOptimization is the Optimization a create with Idempotency-Key key
// stores in namespace for validated request in, and the stored form of its
// input document (the orders and vehicles), which goes into the ConfigMap
// spec.input names.
func newOptimization(namespace, key string, in *schema.OptimizationIn) (*v1alpha1.Optimization, []byte, error) {
	doc := InputFromRequest(in)
	data, sum, err := v1alpha1.EncodeInput(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("unable to encode the input document: %w", err)
	}
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{
			Name:      OptimizationID(namespace, key),
			Namespace: namespace,
			Annotations: map[string]string{
				v1alpha1.IdempotencyKeyHashAnnotation: v1alpha1.SHA256Hex([]byte(key)),
				v1alpha1.RequestHashAnnotation:        v1alpha1.SHA256Hex(in.CanonicalJSON()),
			},
		},
		Spec: specFromRequest(in),
	}
	opt.Spec.Input = &v1alpha1.InputRef{
		Name:     opt.InputConfigMapName(),
		Orders:   int32(len(doc.Orders)),
		Vehicles: int32(len(doc.Vehicles)),
		SHA256:   sum,
	}
	return opt, data, nil
}

// stampQueuedAt records when the API accepted opt: creationTimestamp has
// whole seconds, so the solve queue orders by this instead.
func stampQueuedAt(opt *v1alpha1.Optimization, now time.Time) {
	opt.Annotations[v1alpha1.QueuedAtAnnotation] = now.UTC().Format(v1alpha1.QueuedAtLayout)
}

// createOptimization answers POST /v1/optimizations.
func (s *Server) createOptimization(c *gin.Context) {
	key, keyPresent := c.Request.Header["Idempotency-Key"]
	keyValue := ""
	if keyPresent && len(key) > 0 {
		keyValue = key[0]
	}
	details := schema.ValidateIdempotencyKey(keyValue, keyPresent)
	body, ok := readBody(c)
	if !ok {
		return
	}
	in, bodyDetails := schema.DecodeOptimizationIn(body)
	if len(bodyDetails) > 0 && bodyDetails[0].Type == "json_invalid" {
		// FastAPI parses the body before it validates anything else: a body
		// that is not JSON is the only error reported.
		details = nil
	}
	details = append(details, bodyDetails...)
	if len(details) > 0 {
		abortValidation(c, details)
		return
	}

	opt, input, err := newOptimization(principal(c).Namespace, keyValue, in)
	if err != nil {
		abortInternal(c, err)
		return
	}
	stampQueuedAt(opt, s.clock.Now())
	requestHash := opt.Annotations[v1alpha1.RequestHashAnnotation]
	// The Optimization and its input ConfigMap are written within the
	// request's one budget; a large input on a busy control plane may run
	// past it, and goes on while the API server answers.
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	if len(input) > storesize.MaxStoredBytes {
		msg, fields := storesize.TooLarge(len(input), storesize.MaxStoredBytes)
		s.refuseTooLarge(ctx, c, opt, input, keyValue, requestHash, msg, fields)
		return
	}
	// The Optimization first, then its input: the ConfigMap is owned by the
	// Optimization (deleted with it), and a create cut off between the two
	// leaves an Optimization whose solve waits for its input, which a
	// retry with the same Idempotency-Key writes, never a ConfigMap no one
	// owns.
	err = s.client.Create(ctx, opt, client.FieldOwner(CreateFieldManager))
	if apierrors.IsAlreadyExists(err) {
		existing := &v1alpha1.Optimization{}
		if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(opt), existing); err != nil {
			abortKube(c, err, "optimization")
			return
		}
		s.replay(ctx, c, existing, input, keyValue, requestHash)
		return
	}
	if apierrors.IsInvalid(err) {
		// The CRD's own rules caught something validation let through.
		abortValidation(c, []schema.Detail{{Loc: []any{"body"}, Msg: "Value error, " + err.Error(), Type: "value_error", Input: nil, Ctx: map[string]any{"error": map[string]any{}}}})
		return
	}
	if err != nil {
		abortKube(c, err, "optimization")
		return
	}
	if !s.storeInput(ctx, c, opt, input) {
		return
	}
	respondJSON(c, http.StatusAccepted, s.record(opt))
}

// storeInput writes opt's input document into the ConfigMap spec.input
// names, owned by opt. One already there is kept when it is opt's (a retried
// create) and taken over otherwise: a ConfigMap made ahead of a predictable
// id by someone else is never trusted (the solve checks the SHA-256 that
// spec.input records, too). On failure it answers the request itself.
func (s *Server) storeInput(ctx context.Context, c *gin.Context, opt *v1alpha1.Optimization, input []byte) bool {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      opt.Spec.Input.Name,
			Namespace: opt.Namespace,
			Labels:    map[string]string{v1alpha1.OptimizationLabel: opt.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "Optimization",
				Name: opt.Name, UID: opt.UID, Controller: ptr.To(true),
			}},
		},
		BinaryData: map[string][]byte{v1alpha1.InputDataKey: input},
	}
	err := s.client.Create(ctx, cm, client.FieldOwner(CreateFieldManager))
	if apierrors.IsAlreadyExists(err) {
		existing := &corev1.ConfigMap{}
		if err = s.apiReader.Get(ctx, client.ObjectKeyFromObject(cm), existing); err == nil {
			if owner := metav1.GetControllerOf(existing); owner != nil && owner.UID == opt.UID &&
				v1alpha1.SHA256Hex(existing.BinaryData[v1alpha1.InputDataKey]) == opt.Spec.Input.SHA256 {
				return true
			}
			cm.ResourceVersion = existing.ResourceVersion
			err = s.client.Update(ctx, cm, client.FieldOwner(CreateFieldManager))
		}
	}
	if storesize.IsRefusedForSize(err) {
		// The cluster's storage is stricter than MaxStoredBytes (a smaller
		// etcd --max-request-bytes): still a request the client can fix.
		// The Optimization goes too, so that nothing of it is kept.
		loggerFrom(c).Info("Kubernetes API refused an optimization's input for its size", "storedBytes", len(input), "error", err.Error())
		if derr := s.client.Delete(ctx, opt, client.Preconditions{UID: &opt.UID}); client.IgnoreNotFound(derr) != nil {
			loggerFrom(c).Error(derr, "Unable to delete the optimization whose input was refused", "optimization", opt.Name)
		}
		msg, fields := storesize.RefusedByStorage(len(input))
		abortError(c, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, msg, fields)
		return false
	}
	if err != nil {
		abortKube(c, err, "optimization input")
		return false
	}
	return true
}

// refuseTooLarge answers 413 with msg and fields for opt, too large to
// store, unless its Idempotency-Key already names a stored optimization: a
// replay is answered as one (or as a reused key), whatever its size.
func (s *Server) refuseTooLarge(ctx context.Context, c *gin.Context, opt *v1alpha1.Optimization, input []byte, keyValue, requestHash, msg string, fields map[string]any) {
	existing := &v1alpha1.Optimization{}
	err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(opt), existing)
	switch {
	case err == nil:
		s.replay(ctx, c, existing, input, keyValue, requestHash)
	case apierrors.IsNotFound(err):
		abortError(c, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, msg, fields)
	default:
		abortKube(c, err, "optimization")
	}
}

// replay answers a create whose Idempotency-Key names the stored
// optimization existing: 202 with its record for the same request, 422 for
// a different one. One not finished yet gets its input
// written again first, in case the create that made it was cut off before
// (its solve may already have started, waiting for that input).
func (s *Server) replay(ctx context.Context, c *gin.Context, existing *v1alpha1.Optimization, input []byte, keyValue, requestHash string) {
	if existing.Annotations[v1alpha1.RequestHashAnnotation] != requestHash {
		abortValidation(c, []schema.Detail{schema.IdempotencyKeyReused(keyValue)})
		return
	}
	if ref := existing.Spec.Input; ref != nil && !stateOf(existing).IsTerminal() &&
		ref.SHA256 == v1alpha1.SHA256Hex(input) && len(input) <= storesize.MaxStoredBytes {
		if !s.storeInput(ctx, c, existing, input) {
			return
		}
	}
	respondJSON(c, http.StatusAccepted, s.record(existing))
}

// listOptimizations answers GET /v1/optimizations, newest first.
func (s *Server) listOptimizations(c *gin.Context) {
	page, size, details := schema.PageQuery(c.Request.URL.Query())
	if len(details) > 0 {
		abortValidation(c, details)
		return
	}
	if s.index == nil {
		abortInternal(c, errors.New("the optimization list index was not started (IndexOptimizations)"))
		return
	}
	// page has no upper bound: one whose offset overflows int is past the end.
	offset := math.MaxInt
	if page-1 <= math.MaxInt/size {
		offset = (page - 1) * size
	}
	pageItems, total := s.index.Page(principal(c).Namespace, offset, size)
	out := make([]Record, 0, len(pageItems))
	for _, o := range pageItems {
		out = append(out, s.record(o))
	}
	respondJSON(c, http.StatusOK, gin.H{"items": out, "page": page, "page_size": size, "total": total})
}

// IndexOptimizations serves list requests from an index fed by the cache's
// Optimization informer instead of listing the cache on every request.
// Call it before serving; it returns once the index has the informer's
// initial contents.
func (s *Server) IndexOptimizations(ctx context.Context, c cache.Cache) error {
	idx := optcache.NewIndex()
	if err := idx.Watch(ctx, c); err != nil {
		return err
	}
	s.index = idx
	return nil
}

// lookup reads the optimization named in the path, in the caller's
// namespace only: another company's id is simply not found. queryDetails
// are the query parameters' errors, reported after the path's, all at once.
func (s *Server) lookup(c *gin.Context, queryDetails ...schema.Detail) (*v1alpha1.Optimization, bool) {
	id, details := schema.ParseUUIDParam("optimization_id", c.Param("optimization_id"))
	if details = append(details, queryDetails...); len(details) > 0 {
		abortValidation(c, details)
		return nil, false
	}
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	key := client.ObjectKey{Namespace: principal(c).Namespace, Name: id}
	opt := &v1alpha1.Optimization{}
	err := s.client.Get(ctx, key, opt)
	if apierrors.IsNotFound(err) {
		// The cache may not have seen a create that was just answered:
		// ask the API server before saying it does not exist.
		err = s.apiReader.Get(ctx, key, opt)
	}
	if err != nil {
		abortKube(c, err, "optimization")
		return nil, false
	}
	return opt, true
}

// getOptimization answers GET /v1/optimizations/{id}.
func (s *Server) getOptimization(c *gin.Context) {
	if opt, ok := s.lookup(c); ok {
		respondJSON(c, http.StatusOK, s.record(opt))
	}
}

// getResult answers GET /v1/optimizations/{id}/result.
func (s *Server) getResult(c *gin.Context) {
	includeRaw, present := c.GetQuery("include_path")
	includePath, details := schema.QueryBool("include_path", includeRaw, present, false)
	opt, ok := s.lookup(c, details...)
	if !ok {
		return
	}
	if state := stateOf(opt); state != v1alpha1.StateCompleted {
		abortError(c, http.StatusConflict, CodeResultNotReady, "the optimization is "+string(state)+"; a result exists once it is completed", map[string]any{"status": string(state)})
		return
	}
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	result := s.storedResult(ctx, c, opt, includePath)
	if result == nil {
		return
	}
	respondJSON(c, http.StatusOK, result)
}

// storedResult reads the result of completed optimization opt, with its
// polylines when withPaths. On failure it answers the request itself and
// returns nil.
func (s *Server) storedResult(ctx context.Context, c *gin.Context, opt *v1alpha1.Optimization, withPaths bool) *v1alpha1.Result {
	result, err := docstore.ReadResult(ctx, s.apiReader, opt, withPaths)
	var read *docstore.ReadError
	switch {
	case err == nil:
		return result
	case errors.As(err, &read) && !apierrors.IsNotFound(err):
		abortKube(c, err, "result")
	default:
		// A completed optimization without its ConfigMaps, or stored data
		// that does not decode.
		abortInternal(c, err)
	}
	return nil
}
