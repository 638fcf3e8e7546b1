// Package webserver is the REST front door: Gin handlers that authenticate
// API keys, validate requests in the documented 422 shape, and translate
// between the snake_case REST resources and the Optimization custom
// resources. It never runs a solve and never writes status.
//
// This package holds the handlers, the middleware, the routing and the
// server's wiring; each mechanism they use is a subpackage with one job,
// which never imports this one:
//
//   - apikey: API keys, their scopes and Secrets, who a key speaks for
//   - ratelimit: the per-key and failed-authentication token buckets
//   - kubebudget: how long a request waits for the Kubernetes API
//   - storesize: whether an input fits in storage, and the 413 messages
//   - optcache: the cache transform and the list index
//   - docstore: reading the stored result and input of an optimization
//   - exportkey, exportlink: the export signing key and signed links
//   - schema: request decoding and validation; export: the driver sheets
//   - openapi, portal: the API's document and the web portal
package webserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-logr/logr"
	"github.com/klauspost/compress/gzhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/webserver/apikey"
	"routeopt.io/routeopt/webserver/exportkey"
	"routeopt.io/routeopt/webserver/exportlink"
	"routeopt.io/routeopt/webserver/kubebudget"
	"routeopt.io/routeopt/webserver/openapi"
	"routeopt.io/routeopt/webserver/optcache"
	"routeopt.io/routeopt/webserver/portal"
	"routeopt.io/routeopt/webserver/ratelimit"
)

// Options configure a Server.
type Options struct {
	// PublicURL is the base of the links in records, e.g. https://routes.example.com.
	PublicURL string
	// MaxBodyBytes bounds request bodies; 5 MiB when zero.
	MaxBodyBytes int64
	// RequestTimeout is a request's budget for all its calls to the
	// Kubernetes API together, counted from the first: past it the request
	// answers 503 unless the API server demonstrably answers (see
	// package kubebudget); 1.5 s when zero.
	RequestTimeout time.Duration
	// SlowRequestTimeout is how long a request may wait on its Kubernetes
	// calls past RequestTimeout while the API server answers its probe (a
	// busy control plane, a large write); 10 s when zero, never less than
	// RequestTimeout.
	SlowRequestTimeout time.Duration
	// RateLimit is the sustained requests per second allowed per API key;
	// 0 disables rate limiting.
	RateLimit float64
	// RateBurst is the bucket size of the per-key rate limit.
	RateBurst int
	// AuthFailureRate is the sustained failed authentications per second
	// allowed per source address (an IPv6 /64); past AuthFailureBurst the
	// source gets 429 before its key is checked. 0 disables the limit.
	AuthFailureRate float64
	// AuthFailureBurst is the bucket size of the failed-authentication limit.
	AuthFailureBurst int
	// TrustedProxies are the addresses or CIDRs of the proxies (the
	// ingress) whose X-Forwarded-For names the client's address; with none
	// the client is the TCP peer.
	TrustedProxies []string
	// OperatorNamespace holds the API key Secrets; routeopt-system when empty.
	OperatorNamespace string
	// WebhookPolicy decides which URLs may be registered as webhooks; nil
	// means public https targets only.
	WebhookPolicy *webhook.Policy
	// ExportLinkTTL is how long an export's download link lives;
	// DefaultExportLinkTTL when zero.
	ExportLinkTTL time.Duration
	// ExportKeyRefresh is how long the export signing keys read from their
	// Secret are used before being read again, so a rotation reaches every
	// replica within it; 10 s when zero. A link naming a key the replica
	// does not know makes it read them at once (at most once a second).
	ExportKeyRefresh time.Duration
	// MapTileURL is the tile URL template the portal's map draws on (see
	// portal.ValidateTileURL); empty draws the offline map.
	MapTileURL string
	// MapTileAttribution is the tile layer's credit line.
	MapTileAttribution string
}

// The REST API's permissions, generated into config/rbac/api_role.yaml.
// Optimizations are routeopt's own kind: one informer over every tenant,
// create, cancel by patch, and delete of one whose input the cluster's
// storage refused as too large (so a 413 leaves nothing behind). API key Secrets live in the operator's
// namespace only. Inside a tenant namespace (through the RoleBinding
// `routeopt tenant create` makes) the API writes each optimization's input
// ConfigMap (create, and update to take over one it did not make) and reads
// input and result ConfigMaps, by name.
// Webhook endpoints are routeopt's own kind too: registered (create),
// listed from one informer, removed (the signing finalizer by patch, then
// delete); their signing secrets are Secrets in the operator's namespace,
// created and deleted beside the API keys. The export signing key is one
// more Secret there, read by name (around the cache) and created when
// missing; only the platform team's `routeopt exportkey rotate` updates it.
// API keys are created and revoked over REST too, and their last use is
// recorded on their Secret by a merge patch (patch covers every Secret of
// the namespace, but delete and create did already).
// +kubebuilder:rbac:groups=routeopt.io,resources=optimizations,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=routeopt.io,resources=webhookendpoints,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",namespace=routeopt-system,resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:roleName=routeopt-api-tenant,groups="",resources=configmaps,verbs=get;create;update

// Server holds what handlers need.
type Server struct {
	// Client writes objects and reads them from the informer cache.
	client client.Client
	// apiReader reads around the cache: idempotent replays and results.
	apiReader client.Reader
	// keys finds API key Secrets (a cache restricted to them in production).
	keys    client.Reader
	opts    Options
	clock   clock.PassiveClock
	log     logr.Logger
	baseURL string
	limiter *ratelimit.PerKey
	// authFailures limits failed authentications per source address.
	authFailures *ratelimit.FailedAuth
	// index serves lists; IndexOptimizations sets it before serving.
	index *optcache.Index
	// exportKeys sign and verify export download links.
	exportKeys *exportkey.Ring
	// lastUse decides when an API key's use is recorded.
	lastUse apikey.LastUseRecorder
	// kubeProbe tells requests past their budget whether the API server answers.
	kubeProbe *kubebudget.Probe
}

// DefaultSlowRequestTimeout is Options.SlowRequestTimeout unless configured.
const DefaultSlowRequestTimeout = 10 * time.Second

// New builds a Server. keys is the reader API key Secrets are looked up in.
func New(c client.Client, apiReader, keys client.Reader, log logr.Logger, opts Options) *Server {
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = 5 << 20
	}
	if opts.OperatorNamespace == "" {
		opts.OperatorNamespace = v1alpha1.DefaultOperatorNamespace
	}
	if opts.WebhookPolicy == nil {
		opts.WebhookPolicy, _ = webhook.NewPolicy(nil, nil) // no allowed targets: cannot fail
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = 1500 * time.Millisecond
	}
	if opts.SlowRequestTimeout == 0 {
		opts.SlowRequestTimeout = DefaultSlowRequestTimeout
	}
	opts.SlowRequestTimeout = max(opts.SlowRequestTimeout, opts.RequestTimeout)
	if opts.ExportLinkTTL == 0 {
		opts.ExportLinkTTL = DefaultExportLinkTTL
	}
	if opts.ExportKeyRefresh == 0 {
		opts.ExportKeyRefresh = exportkey.DefaultRefresh
	}
	s := &Server{
		client: c, apiReader: apiReader, keys: keys, opts: opts,
		clock: clock.RealClock{}, log: log,
		baseURL: strings.TrimRight(opts.PublicURL, "/"),
	}
	s.exportKeys = exportkey.NewRing(apiReader, c, opts.OperatorNamespace, s.clock, opts.ExportKeyRefresh)
	s.kubeProbe = kubebudget.NewProbe(apiReader, opts.OperatorNamespace)
	if opts.RateLimit > 0 {
		s.limiter = ratelimit.NewPerKey(opts.RateLimit, max(1, opts.RateBurst))
	}
	if opts.AuthFailureRate > 0 {
		s.authFailures = ratelimit.NewFailedAuth(opts.AuthFailureRate, max(1, opts.AuthFailureBurst))
	}
	return s
}

// PortalPath is where the web portal is served; links.web points below it.
const PortalPath = portal.Root

// Context keys set by middleware.
const (
	ctxRequestID = "routeopt.requestID"
	ctxPrincipal = "routeopt.principal"
	ctxLogger    = "routeopt.logger"
)

// Handler returns the HTTP handler of the whole API.
func (s *Server) Handler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true
	// The client's address (for the failed-authentication limit) is the
	// TCP peer, or the last address in X-Forwarded-For that a trusted
	// proxy did not add.
	r.RemoteIPHeaders = []string{"X-Forwarded-For"}
	if err := r.SetTrustedProxies(s.opts.TrustedProxies); err != nil {
		s.log.Error(err, "Invalid trusted proxies: trusting none")
		_ = r.SetTrustedProxies(nil)
	}
	r.Use(s.requestID, s.recovery, s.withKubeBudget, s.bodyLimit)
	// An unknown route under /v1 needs a valid key like every /v1 route:
	// without one the answer is 401, whatever the path.
	r.NoRoute(underV1(s.authenticate), underV1(s.rateLimit), func(c *gin.Context) {
		abortError(c, http.StatusNotFound, CodeNotFound, "no route "+c.Request.Method+" "+c.Request.URL.Path, nil)
	})
	r.NoMethod(func(c *gin.Context) {
		abortError(c, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method "+c.Request.Method+" is not allowed on "+c.Request.URL.Path, nil)
	})
	getAndHead(r, "/healthz", func(c *gin.Context) { respondJSON(c, http.StatusOK, gin.H{"status": "ok"}) })
	// The OpenAPI document and Swagger UI (assets embedded); no API key.
	getAndHead(r, openapi.DocumentPath, gin.WrapH(openapi.DocumentHandler()))
	docs := gin.WrapH(openapi.DocsHandler())
	getAndHead(r, openapi.DocsPath, docs)
	getAndHead(r, openapi.DocsPath+"/*asset", docs)
	// An export's download link carries its own signature instead of a key.
	getAndHead(r, exportlink.Path+":export_id", s.downloadExport)
	// The web portal: pages and assets need no key (the script asks for one).
	pages, err := portal.New(portal.Options{MapTileURL: s.opts.MapTileURL, MapTileAttribution: s.opts.MapTileAttribution})
	if err != nil {
		s.log.Error(err, "Invalid portal options: the portal answers 500")
	}
	getAndHead(r, strings.TrimSuffix(PortalPath, "/"), gin.WrapH(pages))
	getAndHead(r, PortalPath+"*path", gin.WrapH(pages))

	v1 := r.Group("/v1", s.authenticate, s.rateLimit)
	getAndHead(v1, "/me", s.me)
	v1.POST("/optimizations", s.require(apikey.ScopeOptimizationsWrite), s.nonJSONBody, s.createOptimization)
	getAndHead(v1, "/optimizations", s.require(apikey.ScopeOptimizationsRead), s.listOptimizations)
	getAndHead(v1, "/optimizations/:optimization_id", s.require(apikey.ScopeOptimizationsRead), s.getOptimization)
	getAndHead(v1, "/optimizations/:optimization_id/result", s.require(apikey.ScopeOptimizationsRead), s.getResult)
	v1.POST("/optimizations/:optimization_id/cancel", s.require(apikey.ScopeOptimizationsWrite), s.cancelOptimization)
	v1.POST("/optimizations/:optimization_id/exports", s.require(apikey.ScopeExportsWrite), s.nonJSONBody, s.createExport)
	getAndHead(v1, "/webhooks", s.require(apikey.ScopeWebhooksRead), s.listWebhooks)
	v1.POST("/webhooks", s.require(apikey.ScopeWebhooksWrite), s.nonJSONBody, s.createWebhook)
	v1.DELETE("/webhooks/:webhook_id", s.require(apikey.ScopeWebhooksWrite), s.deleteWebhook)
	getAndHead(v1, "/api-keys", s.require(apikey.ScopeKeysWrite), s.listAPIKeys)
	v1.POST("/api-keys", s.require(apikey.ScopeKeysWrite), s.nonJSONBody, s.createAPIKey)
	v1.DELETE("/api-keys/:key_id", s.require(apikey.ScopeKeysWrite), s.deleteAPIKey)
	// Outermost: the request id, so every answer carries it; then gzip for
	// clients that accept it, above gzipMinSize (smaller bodies gain
	// nothing), with Vary: Accept-Encoding; an answer that already has a
	// Content-Encoding is passed through as it is.
	gz, err := gzhttp.NewWrapper(gzhttp.MinSize(gzipMinSize))
	if err != nil {
		panic("webserver: gzip options: " + err.Error()) // constant options
	}
	return withRequestID(gz(r))
}

// gzipMinSize is the smallest body compressed: below it the gzip framing
// and the CPU cost outweigh the bytes saved.
const gzipMinSize = 1024

// underV1 runs h for requests under /v1 only; others go on untouched.
func underV1(h gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if p := c.Request.URL.Path; p != "/v1" && !strings.HasPrefix(p, "/v1/") {
			c.Next()
			return
		}
		h(c)
	}
}

// requestID gives handlers the request id withRequestID chose, and a
// logger that carries it (so log calls must not add it again).
func (s *Server) requestID(c *gin.Context) {
	rid, _ := c.Request.Context().Value(requestIDKey{}).(string)
	c.Set(ctxRequestID, rid)
	c.Set(ctxLogger, s.log.WithValues("requestID", rid))
	c.Next()
}

// recovery turns a panic into a 500 envelope with the request id.
func (s *Server) recovery(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(r)
			}
			abortInternal(c, errors.New("panic: "+strings.TrimSpace(fmt.Sprint(r))))
		}
	}()
	c.Next()
}

// bodyLimit caps request bodies; handlers see a *http.MaxBytesError past it.
func (s *Server) bodyLimit(c *gin.Context) {
	if c.Request.ContentLength > s.opts.MaxBodyBytes {
		abortError(c, http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body is larger than the limit", map[string]any{"max_bytes": s.opts.MaxBodyBytes})
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes)
	c.Next()
}

// authenticate resolves the bearer API key to a apikey.Principal. A source
// address that failed too often is refused first, before its key is read.
func (s *Server) authenticate(c *gin.Context) {
	source := ratelimit.SourceKey(c.ClientIP())
	if s.authFailures != nil {
		if blocked, wait := s.authFailures.Blocked(source, s.clock.Now()); blocked {
			authRateLimitedTotal.Inc()
			abortRateLimited(c, wait, "too many failed authentications from this address")
			return
		}
	}
	scheme, key, ok := strings.Cut(c.GetHeader("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		s.abortUnauthorized(c, source)
		return
	}
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	p, err := apikey.Authenticate(ctx, s.keys, s.opts.OperatorNamespace, strings.TrimSpace(key))
	if err != nil {
		abortKube(c, err, "API key")
		return
	}
	if p == nil {
		s.abortUnauthorized(c, source)
		return
	}
	c.Set(ctxPrincipal, p)
	s.recordLastUse(c, p)
	c.Next()
}

// abortUnauthorized answers 401, and counts the failure against source;
// it never says whether a key exists.
func (s *Server) abortUnauthorized(c *gin.Context, source string) {
	if s.authFailures != nil {
		s.authFailures.Failed(source, s.clock.Now())
	}
	c.Header("WWW-Authenticate", "Bearer")
	abortError(c, http.StatusUnauthorized, CodeUnauthorized, "a valid API key is required: send Authorization: Bearer <API_KEY>", nil)
}

// require stops requests whose key lacks scope.
func (s *Server) require(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !principal(c).Has(scope) {
			abortError(c, http.StatusForbidden, CodeInsufficientScope, "this API key lacks the scope "+scope, map[string]any{"required_scope": scope})
			return
		}
		c.Next()
	}
}

func principal(c *gin.Context) *apikey.Principal {
	p, _ := c.Get(ctxPrincipal)
	return p.(*apikey.Principal)
}

func loggerFrom(c *gin.Context) logr.Logger {
	if l, ok := c.Get(ctxLogger); ok {
		return l.(logr.Logger)
	}
	return logr.Discard()
}

// me answers GET /v1/me.
func (s *Server) me(c *gin.Context) {
	p := principal(c)
	respondJSON(c, http.StatusOK, gin.H{
		"company": gin.H{"id": p.CompanyID, "name": p.CompanyName},
		"scopes":  p.Scopes,
	})
}

// LoadExportSigningKey reads the export signing key, creating it when it
// is missing (the first API replica to start does), so a replica that
// cannot reach it fails at start rather than at its first export.
func (s *Server) LoadExportSigningKey(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := s.exportKeys.Get(ctx, 0); err != nil {
		return fmt.Errorf("unable to load the export signing key (Secret %s/%s): %w", s.opts.OperatorNamespace, exportkey.SecretName, err)
	}
	return nil
}

// WarmUp sends a dry-run create of a minimal Optimization, so the API
// server builds its validators for the kind before the first client's
// create (the first write of a kind can take seconds, longer than
// RequestTimeout). Failures are only logged: serving goes on.
func (s *Server) WarmUp(ctx context.Context, namespace string) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lat, lon := 0.0, 0.0
	opt := &v1alpha1.Optimization{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "warm-up-", Namespace: namespace},
		Spec: v1alpha1.OptimizationSpec{
			Depot:  v1alpha1.Depot{Latitude: &lat, Longitude: &lon},
			Orders: []v1alpha1.Order{{ID: "warm-up", Latitude: &lat, Longitude: &lon}},
			Fleet:  &v1alpha1.Fleet{Count: 1, Capacity: 1},
		},
	}
	start := time.Now()
	if err := s.client.Create(ctx, opt, client.DryRunAll); err != nil {
		s.log.Info("Warm-up create failed", "error", err.Error())
		return
	}
	s.log.V(1).Info("Warmed up", "took", time.Since(start).String())
}
