package v1alpha1

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// An optimization's orders and vehicles can live outside the Optimization,
// in a ConfigMap of its namespace named by spec.input. Every write to an
// Optimization (status, progress, cancel, labels, the webhook ledger) makes
// the API server decode, validate, diff and re-encode the whole object, so
// with 500 orders inline each write costs twenty times what it costs with
// 10. The REST API always stores them apart, which makes every write's cost
// independent of the request's size; a spec written by hand may still list
// them inline.
const (
	// InputConfigMapSuffix is appended to an Optimization's name to name the
	// ConfigMap the REST API stores its input in.
	InputConfigMapSuffix = "-input"
	// InputDataKey is the binaryData key of the gzip-compressed input
	// document, as the REST API writes it.
	InputDataKey = "input.json.gz"
	// InputPlainKey is the data key of an uncompressed input document, as a
	// person writes it (kubectl create configmap NAME --from-file=input.json).
	InputPlainKey = "input.json"
	// MaxInputBytes is the largest stored input document: a ConfigMap holds
	// at most 1 MiB (1,048,576 bytes), keys and metadata included.
	MaxInputBytes = 1_000_000
)

// Input is the input document: the orders and the individual vehicles of
// an optimization, with the same field names and rules as spec.orders and
// spec.vehicles.
// +kubebuilder:object:generate=false
type Input struct {
	Orders   []Order   `json:"orders"`
	Vehicles []Vehicle `json:"vehicles,omitempty"`
}

// InputConfigMapName is the name of the ConfigMap the REST API stores o's
// input in.
func (o *Optimization) InputConfigMapName() string {
	return o.Name + InputConfigMapSuffix
}

// EncodeInput is the stored form of in (InputDataKey) and its SHA-256, which
// spec.input.sha256 records.
func EncodeInput(in *Input) (data []byte, sum string, err error) {
	data, err = encodeGzipJSON(in)
	if err != nil {
		return nil, "", err
	}
	return data, SHA256Hex(data), nil
}

// SHA256Hex is the lowercase hex SHA-256 of data.
func SHA256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ErrNoInputDocument is DecodeInput's error for a ConfigMap that holds
// neither InputDataKey nor InputPlainKey.
var ErrNoInputDocument = errors.New("holds neither binaryData " + InputDataKey + " nor data " + InputPlainKey)

// DecodeInput reads the input document of a ConfigMap's binaryData and
// data: the compressed form when present, else the plain one. A non-empty
// want is the SHA-256 the compressed form must have: the REST API records
// it in spec.input, so a ConfigMap that someone else made or changed under
// the expected name is refused rather than solved.
func DecodeInput(binaryData map[string][]byte, data map[string]string, want string) (*Input, error) {
	if raw, ok := binaryData[InputDataKey]; ok {
		if want != "" && SHA256Hex(raw) != want {
			return nil, fmt.Errorf("%s does not match the SHA-256 recorded in spec.input", InputDataKey)
		}
		doc, err := gunzip(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", InputDataKey, err)
		}
		in, err := decodeInputJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", InputDataKey, err)
		}
		return in, nil
	}
	if want != "" {
		return nil, fmt.Errorf("has no binaryData %s, whose SHA-256 spec.input records", InputDataKey)
	}
	raw, ok := data[InputPlainKey]
	if !ok {
		return nil, ErrNoInputDocument
	}
	in, err := decodeInputJSON([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", InputPlainKey, err)
	}
	return in, nil
}

// decodeInputJSON reads one Input object, refusing unknown fields as the
// API server refuses them in spec.orders: a misspelt field written by hand
// is an error, not a silently applied default.
func decodeInputJSON(doc []byte) (*Input, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	in := &Input{}
	if err := dec.Decode(in); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return in, nil
}

// OrderTotal is the number of orders the spec describes, inline or in its
// input ConfigMap.
func (s *OptimizationSpec) OrderTotal() int {
	if s.Input != nil && s.Orders == nil {
		return int(s.Input.Orders)
	}
	return len(s.Orders)
}

// WithInput is s with the orders and vehicles of in, as if they had been
// inline; s itself is not changed.
func (s *OptimizationSpec) WithInput(in *Input) OptimizationSpec {
	out := *s
	out.Orders, out.Vehicles = in.Orders, in.Vehicles
	return out
}
