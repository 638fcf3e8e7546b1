// Package portal serves the web portal: one HTML shell for every
// page under /portal/ and the script and styles built from web/ into dist/,
// embedded so the binary needs no files and no CDN at run time. The script
// talks to the public REST API of the same origin only (README.md here is
// the contract between its parts).
//
// Every answer carries a strict Content-Security-Policy: no inline script
// or style, nothing from another origin except, when configured, the map's
// tile server for images.
package portal

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Paths the portal answers.
const (
	// Root is the list page; every page lives below it.
	Root = "/portal/"
	// AssetsPath is where dist/ is served.
	AssetsPath = Root + "assets/"
)

//go:embed all:dist
var dist embed.FS

// Options configure the portal.
type Options struct {
	// MapTileURL is a tile URL template such as
	// https://tile.example.com/{z}/{x}/{y}.png; empty draws the offline map.
	MapTileURL string
	// MapTileAttribution is the tile layer's credit line (plain text).
	MapTileAttribution string
}

// placeholderRe finds a tile URL's placeholders.
var placeholderRe = regexp.MustCompile(`\{[^{}]*\}`)

// tilePlaceholders are those Leaflet fills without extra options; any other
// would make it throw at run time. {s} is a subdomain (Leaflet's a, b, c).
var tilePlaceholders = map[string]string{"{z}": "0", "{x}": "0", "{y}": "0", "{r}": "", "{s}": "a"}

// hostRe is what a CSP host-source may hold: a DNS name or IPv4 address.
// Anything else could not be named in img-src (or could break out of it).
var hostRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)

// ValidateTileURL checks a --map-tile-url value and returns the origin the
// CSP must allow images from, e.g. https://tile.example.com or, with a {s}
// subdomain, https://*.tile.example.com.
func ValidateTileURL(raw string) (origin string, err error) {
	if raw == "" {
		return "", errors.New("the map tile URL is empty")
	}
	if len(raw) > 2048 {
		return "", errors.New("the map tile URL is longer than 2048 characters")
	}
	if strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", fmt.Errorf("the map tile URL %q contains white space or control characters", raw)
	}
	for _, p := range []string{"{z}", "{x}", "{y}"} {
		if !strings.Contains(raw, p) {
			return "", fmt.Errorf("the map tile URL %q lacks the placeholder %s (it needs {z}, {x} and {y})", raw, p)
		}
	}
	filled := placeholderRe.ReplaceAllStringFunc(raw, func(p string) string {
		if v, ok := tilePlaceholders[p]; ok {
			return v
		}
		err = fmt.Errorf("the map tile URL %q has the unknown placeholder %s (known: {z}, {x}, {y}, {s}, {r})", raw, p)
		return p
	})
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(filled, "{}") {
		return "", fmt.Errorf("the map tile URL %q has an unbalanced { or }", raw)
	}
	u, perr := url.Parse(filled)
	if perr != nil {
		return "", fmt.Errorf("the map tile URL %q is not a URL: %w", raw, perr)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("the map tile URL %q must start with http:// or https://", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("the map tile URL %q must not contain a user name or password: every visitor's browser would see them", raw)
	}
	host := u.Hostname()
	if host == "" {
		return "", fmt.Errorf("the map tile URL %q has no host", raw)
	}
	if !hostRe.MatchString(host) {
		return "", fmt.Errorf("the map tile URL %q must name its host by DNS name or IPv4 address (a Content-Security-Policy cannot allow %q)", raw, host)
	}
	rawHost := strings.SplitN(raw, "://", 2)[1]
	if i := strings.IndexAny(rawHost, "/?#"); i >= 0 {
		rawHost = rawHost[:i]
	}
	if strings.Contains(rawHost, "{") {
		// Placeholders in the host: only a leading {s}. label, allowed as *.
		if !strings.HasPrefix(rawHost, "{s}.") || strings.Contains(rawHost[len("{s}."):], "{") {
			return "", fmt.Errorf("the map tile URL %q may have a placeholder in its host only as a leading {s}. subdomain", raw)
		}
		host = "*" + strings.TrimPrefix(host, "a")
	}
	origin = u.Scheme + "://" + host
	if port := u.Port(); port != "" {
		n, perr := strconv.Atoi(port)
		if perr != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("the map tile URL %q has an invalid port", raw)
		}
		origin += ":" + port
	}
	return origin, nil
}

// ValidateTileAttribution checks a --map-tile-attribution value: one line
// of at most 300 characters.
func ValidateTileAttribution(s string) error {
	if len(s) > 300 {
		return errors.New("the map tile attribution is longer than 300 characters")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return errors.New("the map tile attribution must be one line without control characters")
	}
	return nil
}

// csp builds the Content-Security-Policy; tileOrigin is added to img-src
// when a tile layer is configured.
func csp(tileOrigin string) string {
	img := "'self'"
	if tileOrigin != "" {
		img += " " + tileOrigin
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src " + img +
		"; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// shellTemplate is the page every portal URL answers; the script renders
// the page for location.pathname into #app. Configuration goes in <meta>
// tags because the CSP forbids inline script.
var shellTemplate = template.Must(template.New("shell").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>routeopt</title>
{{- if .TileURL}}
<meta name="routeopt-map-tile-url" content="{{.TileURL}}">
<meta name="routeopt-map-tile-attribution" content="{{.Attribution}}">
{{- end}}
<link rel="icon" type="image/svg+xml" href="` + AssetsPath + `favicon.svg">
<link rel="stylesheet" href="` + AssetsPath + `styles.css">
<script type="module" src="` + AssetsPath + `app.js"></script>
</head>
<body>
<div id="app"><noscript><p>The routeopt portal needs JavaScript. The REST API and its documentation at /docs work without it.</p></noscript></div>
</body>
</html>
`))

// asset is one file of dist/, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
	// immutable: the name carries a content hash, so it may be cached for good.
	immutable bool
}

// Handler serves the portal: pages, assets and the /portal redirect.
type Handler struct {
	shell  []byte
	csp    string
	assets map[string]asset
	// err, when set, is answered with 500 on every request: the options
	// were invalid (the flags validate them first, so this is a defect).
	err error
}

// contentTypes of the files the build writes. A file of another kind is
// refused at start (see New), so a new kind cannot go out as octet-stream
// by accident, which nosniff would make the browser refuse.
var contentTypes = map[string]string{
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".png":  "image/png",
	".svg":  "image/svg+xml",
	".json": "application/json",
	".map":  "application/json",
}

// hashedDirs hold only content-hashed names (chunkNames and assetNames in
// web/build.mjs), so their files may be cached for good.
var hashedDirs = []string{"chunks/", "assets/"}

// New builds the handler. With invalid options it returns the error and a
// handler that answers 500 saying so, so a caller that only logs the error
// still serves something that explains itself.
func New(opts Options) (*Handler, error) {
	h, err := build(opts, dist)
	if err != nil {
		return &Handler{csp: csp(""), err: err}, err
	}
	return h, nil
}

func build(opts Options, files fs.FS) (*Handler, error) {
	var origin string
	if opts.MapTileURL != "" {
		var err error
		if origin, err = ValidateTileURL(opts.MapTileURL); err != nil {
			return nil, err
		}
	} else if opts.MapTileAttribution != "" {
		return nil, errors.New("a map tile attribution needs a map tile URL")
	}
	if err := ValidateTileAttribution(opts.MapTileAttribution); err != nil {
		return nil, err
	}
	var shell bytes.Buffer
	if err := shellTemplate.Execute(&shell, struct{ TileURL, Attribution string }{opts.MapTileURL, opts.MapTileAttribution}); err != nil {
		return nil, fmt.Errorf("portal: rendering the page shell: %w", err)
	}
	h := &Handler{shell: shell.Bytes(), csp: csp(origin), assets: map[string]asset{}}
	sub, err := fs.Sub(files, "dist")
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return fmt.Errorf("portal: dist/%s has no known content type (add it to contentTypes)", name)
		}
		body, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		h.assets[name] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, immutable: slices.ContainsFunc(hashedDirs, func(d string) bool { return strings.HasPrefix(name, d) })}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"app.js", "styles.css", "favicon.svg"} {
		if _, ok := h.assets[need]; !ok {
			return nil, fmt.Errorf("portal: dist/%s is missing: run make portal", need)
		}
	}
	return h, nil
}

// IsPage reports whether p is a portal page: the list, one optimization,
// or the API keys. Other paths under Root answer the shell with 404, which
// the script shows as "Page not found".
func IsPage(p string) bool {
	if p == Root || p == Root+"api-keys" {
		return true
	}
	id, ok := strings.CutPrefix(p, Root+"optimizations/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// ServeHTTP answers GET and HEAD for the shell and the assets; every answer
// carries the security headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", h.csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		plain(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path)
		return
	}
	if h.err != nil {
		plain(w, http.StatusInternalServerError, "the portal is not configured correctly: "+h.err.Error())
		return
	}
	p := r.URL.Path
	switch {
	case p == strings.TrimSuffix(Root, "/"):
		target := Root
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		hdr.Set("Location", target)
		hdr.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusMovedPermanently)
	case strings.HasPrefix(p, AssetsPath):
		h.serveAsset(w, r, strings.TrimPrefix(p, AssetsPath))
	case strings.HasPrefix(p, Root):
		status := http.StatusOK
		if !IsPage(p) {
			status = http.StatusNotFound
		}
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("Content-Length", strconv.Itoa(len(h.shell)))
		w.WriteHeader(status)
		if r.Method == http.MethodGet {
			_, _ = w.Write(h.shell)
		}
	default:
		plain(w, http.StatusNotFound, "no portal page at "+p)
	}
}

// serveAsset serves dist/name; directories and unknown names are 404 (no listings).
func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := h.assets[name]
	if !ok {
		plain(w, http.StatusNotFound, "no portal asset "+AssetsPath+name)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", a.contentType)
	hdr.Set("ETag", a.etag)
	if a.immutable {
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// app.js, styles.css and the icon keep their names across builds: revalidate.
		hdr.Set("Cache-Control", "no-cache")
	}
	// ServeContent answers If-None-Match with 304, ranges, and HEAD without a body.
	http.ServeContent(w, r, name, zeroTime, bytes.NewReader(a.body))
}

// zeroTime: embedded files have no modification time, so no Last-Modified.
var zeroTime time.Time

// plain answers a short text error.
func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}
