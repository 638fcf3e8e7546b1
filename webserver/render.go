package webserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"routeopt.io/routeopt/webserver/schema"
)

// jsonRender writes v as JSON without HTML escaping, so a message reads
// `<API_KEY>` rather than `\u003cAPI_KEY\u003e` as FastAPI writes it, and
// with its Content-Length, so GET and HEAD carry the same headers.
type jsonRender struct{ v any }

// Render implements render.Render.
func (r jsonRender) Render(w http.ResponseWriter) error {
	r.WriteContentType(w)
	body, err := schema.MarshalNoEscape(r.v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err = w.Write(body)
	return err
}

// WriteContentType implements render.Render.
func (jsonRender) WriteContentType(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
}

// respondJSON answers status with v as JSON; every JSON answer goes
// through it instead of gin's c.JSON, which escapes HTML.
func respondJSON(c *gin.Context, status int, v any) {
	c.Render(status, jsonRender{v})
}

// abortJSON is respondJSON that also stops the handler chain.
func abortJSON(c *gin.Context, status int, v any) {
	c.Abort()
	respondJSON(c, status, v)
}

// getAndHead serves GET and HEAD on path with the same handlers: HEAD is
// answered wherever GET is (docs/API.md, "HTTP conventions"), and net/http
// drops the body.
func getAndHead(r gin.IRoutes, path string, handlers ...gin.HandlerFunc) {
	r.GET(path, handlers...)
	r.HEAD(path, handlers...)
}

// requestIDKey holds the request id in the request's context.
type requestIDKey struct{}

// withRequestID echoes the client's X-Request-ID or makes one, before gin
// routes the request: gin's trailing-slash redirects run no middleware, and
// they must carry the header too. Header fields over MaxHeaderBytes are
// refused here, with the request id.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := r.Header.Get("X-Request-ID")
		if rid == "" || len(rid) > 200 {
			b := make([]byte, 12)
			_, _ = rand.Read(b)
			rid = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-ID", rid)
		if refuseLargeHeaders(w, r) {
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, rid)))
	})
}

// isJSONContentType reports whether FastAPI parses a body of this
// Content-Type as JSON: none, application/json, or application/*+json,
// parameters allowed. Anything else (text, forms) it hands to pydantic as
// bytes, which a model refuses.
func isJSONContentType(ct string) bool {
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false // Python's email parser falls back to text/plain
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// nonJSONBody makes a non-empty body of a non-JSON Content-Type read as
// the JSON string of its text, so each handler's decoder reports what
// FastAPI does for it: one model_attributes_type at ["body"] echoing the
// text, beside any header errors. An empty body stays empty (a missing
// body, or an optional one's defaults).
func (s *Server) nonJSONBody(c *gin.Context) {
	if isJSONContentType(c.GetHeader("Content-Type")) {
		c.Next()
		return
	}
	body, ok := readBody(c)
	if !ok {
		return
	}
	if len(body) > 0 {
		body, _ = schema.MarshalNoEscape(string(body)) // a string always marshals
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	c.Request.ContentLength = int64(len(body))
	c.Next()
}
