package webserver

import (
	"net/http"
	"strconv"

	"routeopt.io/routeopt/webserver/schema"
)

// MaxHeaderBytes is the documented limit on a request's line and header
// fields together; past it the answer is 431 in the error envelope.
const MaxHeaderBytes = 32 << 10

// HardMaxHeaderBytes is the http.Server's MaxHeaderBytes: headers between
// MaxHeaderBytes and it reach the handler, which answers 431 in the
// envelope with the request id; past it net/http answers 431 itself, in
// plain text, before any handler runs.
const HardMaxHeaderBytes = 1 << 20

// CodeHeadersTooLarge answers a request whose header fields are too large.
const CodeHeadersTooLarge = "request_header_fields_too_large"

// headerBytes counts a request's line and header fields as they came on the
// wire: name, ": ", value and CRLF per field.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2
	}
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n
}

// refuseLargeHeaders answers 431 when r's header fields are over
// MaxHeaderBytes, and reports whether it did. It runs before routing.
func refuseLargeHeaders(w http.ResponseWriter, r *http.Request) bool {
	size := headerBytes(r)
	if size <= MaxHeaderBytes {
		return false
	}
	body, err := schema.MarshalNoEscape(errorBody{Error: errorDetail{
		Code:    CodeHeadersTooLarge,
		Message: "the request line and header fields take " + strconv.Itoa(size) + " bytes; at most " + strconv.Itoa(MaxHeaderBytes) + " are accepted",
		Fields:  map[string]any{"header_bytes": size, "max_header_bytes": MaxHeaderBytes},
	}})
	if err != nil {
		panic("webserver: an error body always marshals: " + err.Error())
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
	_, _ = w.Write(body)
	return true
}
