package webserver

import (
	"fmt"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/schema"
)

// CreateFieldManager is the field manager of the API's creates.
const CreateFieldManager = "routeopt-api"

// StoredSizeOfRequest is the size of the input document the create of JSON
// body would store, the figure a 413 reports; it fails for a body the create
// would refuse as invalid. Tests and capacity planning use it to find the
// largest request that can be stored.
func StoredSizeOfRequest(body []byte) (int, error) {
	in, details := schema.DecodeOptimizationIn(body)
	if len(details) > 0 {
		return 0, fmt.Errorf("invalid request: %s at %v", details[0].Msg, details[0].Loc)
	}
	data, _, err := v1alpha1.EncodeInput(inputFromRequest(in))
	return len(data), err
}
