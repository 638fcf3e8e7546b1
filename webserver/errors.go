package webserver

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"routeopt.io/routeopt/webserver/kubebudget"
	"routeopt.io/routeopt/webserver/schema"
)

// Error codes of the error envelope (docs/API.md, "Error codes").
const (
	// CodeBadRequest answers a body that broke its framing while it was read.
	CodeBadRequest          = "bad_request"
	CodeUnauthorized        = "unauthorized"
	CodeInsufficientScope   = "insufficient_scope"
	CodeNotFound            = "not_found"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeResultNotReady      = "result_not_ready"
	CodeInvalidState        = "invalid_state"
	CodeWebhookLimitReached = "webhook_limit_reached"
	CodeAPIKeyLimitReached  = "api_key_limit_reached"
	CodePayloadTooLarge     = "payload_too_large"
	CodeRateLimited         = "rate_limited"
	CodeUnavailable         = "unavailable"
	CodeInternal            = "internal_error"
	// CodeInvalidSignature and CodeLinkExpired answer an export's download
	// link, which carries its own signature instead of an API key.
	CodeInvalidSignature = "invalid_signature"
	CodeLinkExpired      = "link_expired"
)

// errorBody is the envelope of every error except validation.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields"`
}

// abortError answers with the error envelope and stops the handler chain.
func abortError(c *gin.Context, status int, code, message string, fields map[string]any) {
	abortJSON(c, status, errorBody{Error: errorDetail{Code: code, Message: message, Fields: fields}})
}

// abortValidation answers 422 with pydantic-style details.
func abortValidation(c *gin.Context, details []schema.Detail) {
	abortJSON(c, http.StatusUnprocessableEntity, schema.ValidationError{Detail: details})
}

// retryAfterUnavailable is the Retry-After of a 503 while the Kubernetes API is down.
const retryAfterUnavailable = 5

// statusClientClosedRequest is what a request whose client went away
// before the answer "answers": nothing reaches the client, and access logs
// read it as nginx's 499.
const statusClientClosedRequest = 499

// abortKube maps an error of the Kubernetes API to the envelope: not found
// is 404, anything that means the API could not answer is 503, the rest 500.
// A client that went away meanwhile is no outage, whatever the error.
func abortKube(c *gin.Context, err error, what string) {
	switch {
	case clientGone(c):
		abortClientGone(c, err)
	case apierrors.IsNotFound(err):
		abortError(c, http.StatusNotFound, CodeNotFound, what+" not found", nil)
	case kubebudget.IsUnavailable(err):
		keysAndValues := []any{"error", err.Error()}
		if b, ok := c.Get(ctxKubeBudget); ok {
			if cause := b.(*kubebudget.Budget).Cause(); cause != nil {
				keysAndValues = append(keysAndValues, "cause", cause.Error())
			}
		}
		loggerFrom(c).Info("Kubernetes API unavailable", keysAndValues...)
		kubeUnavailableTotal.Inc()
		c.Header("Retry-After", strconv.Itoa(retryAfterUnavailable))
		abortError(c, http.StatusServiceUnavailable, CodeUnavailable, "the service's storage is unavailable; retry later", nil)
	default:
		abortInternal(c, err)
	}
}

// clientGone reports whether the client closed the request (or its
// connection) before it was answered.
func clientGone(c *gin.Context) bool {
	return c.Request.Context().Err() != nil
}

// abortClientGone ends a request whose client went away: nothing to
// answer, nothing to alert on.
func abortClientGone(c *gin.Context, err error) {
	loggerFrom(c).V(1).Info("Client closed the request before it was answered", "error", err.Error())
	clientGoneTotal.Inc()
	c.AbortWithStatus(statusClientClosedRequest)
}

// abortInternal logs err with the request id and answers 500 without details.
func abortInternal(c *gin.Context, err error) {
	if clientGone(c) {
		abortClientGone(c, err)
		return
	}
	rid := c.GetString(ctxRequestID)
	loggerFrom(c).Error(err, "Request failed") // the logger carries requestID
	abortError(c, http.StatusInternalServerError, CodeInternal, "internal error; request id "+rid, map[string]any{"request_id": rid})
}
