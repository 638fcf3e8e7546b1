package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/api/webhook"
	"routeopt.io/routeopt/webserver"
	"routeopt.io/routeopt/webserver/optcache"
	"routeopt.io/routeopt/webserver/portal"
)

// apiOptions configure the REST server.
type apiOptions struct {
	listen       string
	publicURL    string
	maxBodyBytes int64
	rateLimit    float64
	rateBurst    int
	kubeTimeout  time.Duration
	// kubeSlowTimeout is how long a request may wait on a Kubernetes API
	// that answers, past kubeTimeout.
	kubeSlowTimeout time.Duration
	// authFailureRate and authFailureBurst limit failed authentications
	// per source address.
	authFailureRate  float64
	authFailureBurst int
	// trustedProxies may name the client in X-Forwarded-For.
	trustedProxies []string
	// metricsAddr serves /metrics; "0" turns it off.
	metricsAddr string
	tlsCertFile string
	tlsKeyFile  string
	// operatorNamespace holds the API key Secrets.
	operatorNamespace string
	// webhookAllowTargets are HOST:PORT webhook targets allowed although
	// private (local development).
	webhookAllowTargets []string
	// exportLinkTTL is how long export download links live.
	exportLinkTTL time.Duration
	// mapTileURL and mapTileAttribution give the portal's map a tile layer.
	mapTileURL         string
	mapTileAttribution string
}

func (o *apiOptions) addFlags(cmd *cobra.Command, defaultListen string) {
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", defaultListen, "address the REST API listens on")
	f.StringVar(&o.publicURL, "public-url", "", "base URL clients reach the API at, for links in records; default http://<listen>")
	f.Int64Var(&o.maxBodyBytes, "max-body-bytes", 5<<20, "largest accepted request body")
	f.Float64Var(&o.rateLimit, "rate-limit", 20, "sustained requests per second per API key; 0 disables the limit")
	f.IntVar(&o.rateBurst, "rate-burst", 100, "requests an API key may send at once before the rate limit applies")
	f.DurationVar(&o.kubeTimeout, "kube-timeout", 1500*time.Millisecond, "a request's budget for all its Kubernetes API calls together: past it the request answers 503 unless the API server still answers its health probe")
	f.DurationVar(&o.kubeSlowTimeout, "kube-slow-timeout", webserver.DefaultSlowRequestTimeout, "how long a request may wait on its Kubernetes API calls while the API server answers its health probe (a busy control plane); at least --kube-timeout")
	f.Float64Var(&o.authFailureRate, "auth-failure-rate", 1, "failed authentications per second allowed per source address (IPv6: per /64) before it gets 429 without its key being checked; 0 disables the limit")
	f.IntVar(&o.authFailureBurst, "auth-failure-burst", 20, "failed authentications a source address may make at once before --auth-failure-rate applies")
	f.StringSliceVar(&o.trustedProxies, "trusted-proxies", nil, "addresses or CIDRs of the proxies (the ingress) whose X-Forwarded-For names the client, comma-separated; default none: the client is the TCP peer")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "address to serve the API's Prometheus metrics on at /metrics, plain HTTP; 0 turns it off")
	f.StringVar(&o.tlsCertFile, "tls-cert-file", "", "serve HTTPS with this certificate (PEM); default plain HTTP behind the ingress")
	f.StringVar(&o.tlsKeyFile, "tls-key-file", "", "private key (PEM) of --tls-cert-file")
	f.StringVar(&o.operatorNamespace, "operator-namespace", v1alpha1.DefaultOperatorNamespace, "namespace routeopt runs in: API keys are Secrets there")
	addWebhookAllowTargetFlag(f, &o.webhookAllowTargets)
	f.DurationVar(&o.exportLinkTTL, "export-link-ttl", webserver.DefaultExportLinkTTL, "how long an export's signed download link lives")
	f.StringVar(&o.mapTileURL, "map-tile-url", "", "tile URL template, e.g. https://tile.example.com/{z}/{x}/{y}.png; the portal's map draws on it; empty draws an offline map")
	f.StringVar(&o.mapTileAttribution, "map-tile-attribution", "", "credit line of --map-tile-url's tiles, shown on the map (e.g. © OpenStreetMap contributors)")
}

// addWebhookAllowTargetFlag is --webhook-allow-target, which the API (to
// register) and the manager (to deliver) both need.
func addWebhookAllowTargetFlag(f *pflag.FlagSet, into *[]string) {
	f.StringArrayVar(into, "webhook-allow-target", nil, "HOST:PORT a webhook may target although private, over http too (repeatable; local development only)")
}

func (o *apiOptions) validate() error {
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		return errors.New("--tls-cert-file and --tls-key-file go together")
	}
	if o.kubeTimeout < 0 || o.kubeSlowTimeout < 0 {
		return errors.New("--kube-timeout and --kube-slow-timeout cannot be negative")
	}
	if o.kubeSlowTimeout > 0 && o.kubeSlowTimeout < o.kubeTimeout {
		return errors.New("--kube-slow-timeout must be at least --kube-timeout")
	}
	if o.authFailureRate < 0 || o.authFailureBurst < 0 {
		return errors.New("--auth-failure-rate and --auth-failure-burst cannot be negative")
	}
	for _, p := range o.trustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return fmt.Errorf("--trusted-proxies: %q is neither an address nor a CIDR", p)
			}
		}
	}
	if o.exportLinkTTL < 0 || o.exportLinkTTL > 0 && o.exportLinkTTL < time.Second {
		return errors.New("--export-link-ttl must be at least 1s (links expire at whole seconds)")
	}
	if o.mapTileURL != "" {
		if _, err := portal.ValidateTileURL(o.mapTileURL); err != nil {
			return fmt.Errorf("--map-tile-url: %w", err)
		}
	} else if o.mapTileAttribution != "" {
		return errors.New("--map-tile-attribution needs --map-tile-url")
	}
	if err := portal.ValidateTileAttribution(o.mapTileAttribution); err != nil {
		return fmt.Errorf("--map-tile-attribution: %w", err)
	}
	_, err := webhook.NewPolicy(o.webhookAllowTargets, nil)
	return err
}

// public is the base URL clients reach the API at: --public-url, else the
// address ln listens on.
func (o *apiOptions) public(ln net.Listener) string {
	if o.publicURL != "" {
		return o.publicURL
	}
	scheme := "http://"
	if o.tlsCertFile != "" {
		scheme = "https://"
	}
	return scheme + ln.Addr().String()
}

// serveAPI serves the REST API on ln until ctx ends, then drains in-flight
// requests for up to 10 s.
func serveAPI(ctx context.Context, ln net.Listener, c cluster.Cluster, o apiOptions, log logr.Logger) error {
	public := o.public(ln)
	webhooks, err := webhook.NewPolicy(o.webhookAllowTargets, nil)
	if err != nil {
		return err
	}
	srv := webserver.New(c.GetClient(), c.GetAPIReader(), c.GetClient(), log.WithName("api"), webserver.Options{
		WebhookPolicy: webhooks,
		PublicURL:     public, MaxBodyBytes: o.maxBodyBytes,
		RequestTimeout: o.kubeTimeout, SlowRequestTimeout: o.kubeSlowTimeout,
		RateLimit: o.rateLimit, RateBurst: o.rateBurst, OperatorNamespace: o.operatorNamespace,
		AuthFailureRate: o.authFailureRate, AuthFailureBurst: o.authFailureBurst, TrustedProxies: o.trustedProxies,
		ExportLinkTTL: o.exportLinkTTL,
		MapTileURL:    o.mapTileURL, MapTileAttribution: o.mapTileAttribution,
	})
	if err := srv.IndexOptimizations(ctx, c.GetCache()); err != nil {
		return err
	}
	if err := srv.LoadExportSigningKey(ctx); err != nil {
		return err
	}
	srv.WarmUp(ctx, metav1.NamespaceDefault)
	srv.ProbeKubernetes(ctx)
	if err := serveMetrics(ctx, o.metricsAddr, log); err != nil {
		return err
	}
	httpServer := &http.Server{
		Handler: srv.Handler(),
		// Above the documented limit, so the handler answers 431 in the
		// error envelope for headers between the two.
		MaxHeaderBytes:    webserver.HardMaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() {
		if o.tlsCertFile != "" {
			errc <- httpServer.ServeTLS(ln, o.tlsCertFile, o.tlsKeyFile)
			return
		}
		errc <- httpServer.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveMetrics serves controller-runtime's metrics registry, the API's
// counters included, on addr until ctx ends; "0" or empty serves nothing.
func serveMetrics(ctx context.Context, addr string, log logr.Logger) error {
	if addr == "" || addr == "0" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("unable to listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "The metrics endpoint stopped")
		}
	}()
	log.Info("Serving metrics", "address", ln.Addr().String())
	return nil
}

func newAPICommand() *cobra.Command {
	var (
		kubeconfig string
		o          apiOptions
	)
	cmd := &cobra.Command{
		Use:   "api",
		Short: "Serve the REST API (stateless; run several replicas)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			c, err := cluster.New(cfg, func(co *cluster.Options) {
				co.Scheme = NewScheme()
				co.Cache = APICacheOptions(o.operatorNamespace)
				// The API serves records, not requests: keep the bulky
				// orders and vehicles out of its cache.
				co.Cache.DefaultTransform = optcache.Slim
			})
			if err != nil {
				return fmt.Errorf("unable to create client: %w", err)
			}
			ctx := ctrl.SetupSignalHandler()
			go func() { _ = c.Start(ctx) }()
			if err := StartAPIInformers(ctx, c.GetCache()); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", o.listen)
			if err != nil {
				return err
			}
			log := ctrl.Log.WithName("routeopt")
			log.Info("Serving the REST API", "address", ln.Addr().String())
			return serveAPI(ctx, ln, c, o, log)
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; default in-cluster or $KUBECONFIG")
	o.addFlags(cmd, ":8080")
	return cmd
}
