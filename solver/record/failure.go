package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"routeopt.io/routeopt/api/v1alpha1"
)

// Failure is a solve that ended badly, with the error_code the record
// shows. The pipeline returns it, a solve Job writes it as its termination
// message, and the controller writes it into the status.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// MaxListedProblems bounds the problems one invalid_input message lists,
// so a spec with 500 bad orders still gives a short, readable errorMessage.
const MaxListedProblems = 5

// Failf builds a Failure with a formatted message.
func Failf(code, format string, args ...any) *Failure {
	return &Failure{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsFailure maps any error of a solve to a Failure; unknown errors are internal.
func AsFailure(err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return &Failure{Code: v1alpha1.ErrorInternal, Message: err.Error()}
}

// TerminationMessagePath is where Kubernetes reads a container's termination message.
const TerminationMessagePath = "/dev/termination-log"

// WriteTerminationMessage records f as JSON at path so the controller can read
// the failure from the pod status. Errors are ignored: the exit code still
// tells that the solve failed.
func WriteTerminationMessage(path string, f *Failure) {
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	_ = os.WriteFile(path, b, 0o600) // the kubelet reads it as root
}

// Codes are the error codes a failed optimization may carry, as the
// service documents them.
var Codes = []string{
	v1alpha1.ErrorGeocodingUnavailable, v1alpha1.ErrorMatrixUnavailable, v1alpha1.ErrorSolver,
	v1alpha1.ErrorDeadlineExceeded, v1alpha1.ErrorInternal, v1alpha1.ErrorInvalidInput,
}

// ParseTerminationMessage reads a message written by WriteTerminationMessage.
// Anything else is not a solve's failure, a JSON object with another code
// or without a message included: with FallbackToLogsOnError the message may
// be the tail of the pod's log, and a failed record must never show an
// undocumented error_code or an empty error_message.
func ParseTerminationMessage(msg string) (*Failure, bool) {
	var f Failure
	if err := json.Unmarshal([]byte(msg), &f); err != nil || !slices.Contains(Codes, f.Code) || strings.TrimSpace(f.Message) == "" {
		return nil, false
	}
	return &f, true
}
