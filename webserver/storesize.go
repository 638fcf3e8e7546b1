package webserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/schema"
)

// CreateFieldManager is the field manager of the API's creates. Naming it
// (instead of the user agent the API server would take) makes the
// managedFields entry, and so the stored size, known in advance.
const CreateFieldManager = "routeopt-api"

// MaxStoredBytes is the largest stored form of an Optimization the API
// accepts. etcd refuses a write over its --max-request-bytes (1.5 MiB,
// 1,572,864 bytes, by default); the 72,864 bytes left over cover the
// transaction's own key and framing, encryption at rest, and what the
// controller, the solver and the notifier add later (status, finalizers,
// their managedFields), so that a stored optimization can always finish.
const MaxStoredBytes = 1_500_000

// placeholderUID stands for the uid the API server assigns (always 36 bytes).
const placeholderUID = "00000000-0000-0000-0000-000000000000"

// storedSize is a conservative estimate of the bytes opt takes in etcd once
// created by CreateFieldManager: the object as the API server encodes it
// (JSON, HTML-escaped as its encoder does) with the metadata the create adds
// and the managedFields entry listing every field it sets. For spec.orders
// and spec.vehicles (listType=map) that entry repeats every element's key
// and field names: a tenth to a half of the total. Only bytes the API server
// may leave out are counted in excess (the empty status, a few bytes), never
// fewer: storesize_test.go checks it against objects stored by
// kube-apiserver, test/integration/limits_test.go on envtest.
//
// The object is encoded once, with an empty fieldsV1, and the entry's
// length is computed from that encoding without building it: the estimate
// costs about a tenth of decoding the request.
func storedSize(opt *v1alpha1.Optimization) (int, error) {
	o := *opt // shallow: only the metadata changes
	o.ObjectMeta = *opt.ObjectMeta.DeepCopy()
	o.APIVersion, o.Kind = v1alpha1.GroupVersion.String(), "Optimization"
	now := metav1.NewTime(time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)) // same length as any RFC 3339 second
	o.UID = placeholderUID
	o.CreationTimestamp = now
	o.Generation = 1
	o.ResourceVersion = "" // etcd does not store it
	o.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager:    CreateFieldManager,
		Operation:  metav1.ManagedFieldsOperationUpdate,
		APIVersion: o.APIVersion,
		Time:       &now,
		FieldsType: "FieldsV1",
		FieldsV1:   metav1.NewFieldsV1("{}"),
	}}
	raw, err := json.Marshal(&o)
	if err != nil {
		return 0, err
	}
	fields, err := createdFieldsSize(raw)
	if err != nil {
		return 0, err
	}
	return len(raw) - len("{}") + fields, nil
}

// ownedMetadata are the metadata fields a create's field manager owns (the
// API server sets name, uid and the times itself).
var ownedMetadata = map[string]bool{`"labels"`: true, `"annotations"`: true, `"finalizers"`: true, `"ownerReferences"`: true}

// createdFieldsSize is the length of the FieldsV1 set an Update creating
// the object encoded as raw (encoding/json's compact output) records: every
// field of spec and the owned metadata, as structured-merge-diff serializes
// them: "f:<name>" members, "." for each object the create makes,
// "k:{"id":...}" for the elements of the keyed lists (spec.orders,
// spec.vehicles) and "v:<value>" for the elements of any other list, the
// larger of a set's and an atomic list's forms.
func createdFieldsSize(raw []byte) (size int, err error) {
	defer func() {
		if recover() != nil { // raw is not what encoding/json writes
			err = fmt.Errorf("the encoded optimization could not be measured")
		}
	}()
	sc := fieldScanner{b: raw}
	size = 2 // {}
	members := 0
	sc.i++ // {
	for sc.b[sc.i] != '}' {
		key := sc.str()
		sc.i++ // :
		switch key {
		case `"spec"`:
			child, _ := sc.object(true)
			size += len(key) + len("f:") + 1 + child
			members++
		case `"metadata"`:
			if child, n := sc.metadata(); n > 0 {
				size += len(key) + len("f:") + 1 + child
				members++
			}
		default:
			sc.skip()
		}
		sc.comma()
	}
	return size + max(members-1, 0), nil
}

// fieldScanner walks compact JSON from encoding/json, b[i] the next byte.
type fieldScanner struct {
	b []byte
	i int
}

// str consumes a string and returns it quoted, as encoded.
func (sc *fieldScanner) str() string {
	start := sc.i
	sc.i++
	for sc.b[sc.i] != '"' {
		if sc.b[sc.i] == '\\' {
			sc.i++
		}
		sc.i++
	}
	sc.i++
	return string(sc.b[start:sc.i])
}

func (sc *fieldScanner) comma() {
	if sc.b[sc.i] == ',' {
		sc.i++
	}
}

// skip consumes one value.
func (sc *fieldScanner) skip() {
	switch sc.b[sc.i] {
	case '"':
		sc.str()
	case '{', '[':
		depth := 0
		for {
			switch sc.b[sc.i] {
			case '"':
				sc.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			sc.i++
			if depth == 0 {
				return
			}
		}
	default:
		for sc.b[sc.i] != ',' && sc.b[sc.i] != '}' && sc.b[sc.i] != ']' {
			sc.i++
		}
	}
}

// value consumes one value and returns the size of its set.
func (sc *fieldScanner) value() int {
	switch sc.b[sc.i] {
	case '{':
		size, _ := sc.object(true)
		return size
	case '[':
		return sc.list()
	default:
		sc.skip()
		return len("{}")
	}
}

// object consumes an object and returns the size of its set ("." first
// when dot) and its "id" as encoded, if it has one.
func (sc *fieldScanner) object(dot bool) (size int, id []byte) {
	size, members := 2, 0
	if dot {
		size += len(`".":{}`)
		members++
	}
	sc.i++ // {
	for sc.b[sc.i] != '}' {
		key := sc.str()
		sc.i++ // :
		start := sc.i
		child := sc.value()
		if key == `"id"` {
			id = sc.b[start:sc.i]
		}
		size += len(key) + len("f:") + 1 + child
		members++
		sc.comma()
	}
	sc.i++
	return size + max(members-1, 0), id
}

// metadata consumes the object's metadata and returns the size of the set
// of its owned fields and their number.
func (sc *fieldScanner) metadata() (size, members int) {
	size = 2
	sc.i++ // {
	for sc.b[sc.i] != '}' {
		key := sc.str()
		sc.i++ // :
		if ownedMetadata[key] {
			size += len(key) + len("f:") + 1 + sc.value()
			members++
		} else {
			sc.skip()
		}
		sc.comma()
	}
	sc.i++
	return size + max(members-1, 0), members
}

// list consumes a list and returns the size of its set.
func (sc *fieldScanner) list() int {
	size, members := 2+len(`".":{}`), 1
	sc.i++ // [
	for sc.b[sc.i] != ']' {
		start := sc.i
		var id []byte
		child := len("{}")
		if sc.b[sc.i] == '{' {
			child, id = sc.object(true)
		} else {
			sc.skip()
		}
		if id != nil {
			// k:{"id":<id>}: the key is JSON inside a JSON string.
			size += quotedLen(`k:{"id":`+string(id)+`}`) + 1 + child
		} else {
			size += quotedLen("v:"+string(sc.b[start:sc.i])) + 1 + len("{}")
		}
		members++
		sc.comma()
	}
	sc.i++
	return size + members - 1
}

// quotedLen is the length of s as a JSON string whose content is already
// escaped JSON: only quotes and backslashes gain a byte.
func quotedLen(s string) int {
	return len(s) + 2 + strings.Count(s, `"`) + strings.Count(s, `\`)
}

// StoredSizeOfRequest is storedSize for the create of JSON body with
// Idempotency-Key key in namespace, the figure a 413 reports; it fails for
// a body the create would refuse as invalid. Tests and capacity planning
// use it to find the largest request that can be stored.
func StoredSizeOfRequest(namespace, key string, body []byte) (int, error) {
	in, details := schema.DecodeOptimizationIn(body)
	if len(details) > 0 {
		return 0, fmt.Errorf("invalid request: %s at %v", details[0].Msg, details[0].Loc)
	}
	opt := newOptimization(namespace, key, in)
	stampQueuedAt(opt, time.Time{}) // as a create does; any time has the same size
	return storedSize(opt)
}

// tooLargeToStore is the 413 error of an optimization whose stored form
// (storedBytes, an estimate) is over maxBytes.
func tooLargeToStore(storedBytes, maxBytes int) (string, map[string]any) {
	msg := fmt.Sprintf("the optimization would be stored as %s bytes; one stored object may be at most %s bytes: send fewer orders or shorter texts",
		thousands(storedBytes), thousands(maxBytes))
	return msg, map[string]any{"stored_bytes": storedBytes, "max_stored_bytes": maxBytes}
}

// isTooLargeForStorage reports the API server's (or etcd's) refusal of an
// object for its size, for when it is stricter than MaxStoredBytes: a 413,
// etcd's "request is too large", or gRPC's limit on the message to etcd
// (kube-apiserver answers the last two as 500s).
func isTooLargeForStorage(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsRequestEntityTooLargeError(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "request is too large") ||
		strings.Contains(msg, "Request entity too large") ||
		(strings.Contains(msg, "ResourceExhausted") && strings.Contains(msg, "larger than max"))
}

// thousands writes n with comma separators, as 1,500,000.
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
