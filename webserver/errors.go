package webserver

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"routeopt.io/routeopt/webserver/schema"
)

// Error codes of the error envelope (API-DECISIONS.md).
const (
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

// abortKube maps an error of the Kubernetes API to the envelope: not found
// is 404, anything that means the API could not answer is 503, the rest 500.
func abortKube(c *gin.Context, err error, what string) {
	switch {
	case apierrors.IsNotFound(err):
		abortError(c, http.StatusNotFound, CodeNotFound, what+" not found", nil)
	case isUnavailable(err):
		loggerFrom(c).Info("Kubernetes API unavailable", "error", err.Error())
		c.Header("Retry-After", strconv.Itoa(retryAfterUnavailable))
		abortError(c, http.StatusServiceUnavailable, CodeUnavailable, "the service's storage is unavailable; retry later", nil)
	default:
		abortInternal(c, err)
	}
}

// isUnavailable reports errors that mean the API server could not answer.
func isUnavailable(err error) bool {
	if apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	var status apierrors.APIStatus
	// Anything that is not a Kubernetes status (connection refused, a
	// deadline, DNS) means the API could not be reached.
	return !errors.As(err, &status)
}

// abortInternal logs err with the request id and answers 500 without details.
func abortInternal(c *gin.Context, err error) {
	rid := c.GetString(ctxRequestID)
	loggerFrom(c).Error(err, "Request failed") // the logger carries requestID
	abortError(c, http.StatusInternalServerError, CodeInternal, "internal error; request id "+rid, map[string]any{"request_id": rid})
}
