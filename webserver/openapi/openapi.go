// Package openapi holds the OpenAPI 3.1 document of the REST API
// (openapi.yaml, hand-written and embedded in the binary) and the handlers
// that serve it as JSON and render it with Swagger UI, whose assets are
// embedded too (github.com/swaggest/swgui/v5emb): nothing is fetched from a
// CDN.
//
// The integration tests validate every request they send and every response
// they get against the served document, so it cannot drift from the code.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
	"sigs.k8s.io/yaml"
)

// Paths the document and the UI are served at.
const (
	DocumentPath = "/openapi.json"
	DocsPath     = "/docs"
)

//go:embed openapi.yaml
var source []byte

// documentJSON is the document as JSON, converted once at start-up: a
// document that is not valid YAML is a build defect, caught by the tests.
var documentJSON = mustJSON(source)

func mustJSON(y []byte) []byte {
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		panic(fmt.Sprintf("openapi: the embedded openapi.yaml is not valid YAML: %v", err))
	}
	// YAMLToJSON escapes <, > and & as json.Marshal does; the document's
	// descriptions (Bearer <API_KEY>) read as written, like every other
	// JSON answer. Numbers stay as written.
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		panic(fmt.Sprintf("openapi: re-reading the document: %v", err))
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		panic(fmt.Sprintf("openapi: writing the document: %v", err))
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// DocumentHandler serves the document as JSON.
func DocumentHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// Known up front: HEAD carries the length GET does.
		w.Header().Set("Content-Length", strconv.Itoa(len(documentJSON)))
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(documentJSON)
	})
}

// DocsHandler serves Swagger UI at DocsPath (and its assets below it),
// reading the document from DocumentPath. The bearer token is entered in the
// UI's Authorize dialog; "Try it out" calls the API on the same host.
func DocsHandler() http.Handler {
	return v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "Route Optimization Service API",
		SwaggerJSON: DocumentPath,
		BasePath:    DocsPath + "/",
		SettingsUI: map[string]string{
			// Show the schemas section (swgui hides it by default).
			"defaultModelsExpandDepth": "1",
		},
	})
}
