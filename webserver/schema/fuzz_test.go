package schema

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeOptimizationIn checks that any body yields either a value and no
// details, or details that all sit under "body", have a type and a message,
// and serialise; a value must give valid canonical JSON.
func FuzzDecodeOptimizationIn(f *testing.F) {
	seeds := []string{
		``, `null`, `[]`, `{}`, `"x"`, `{"a":1,}`, `[1e400, NaN]`, "\xff", `"\ud800"`,
		withTop(""), withVehicle(vehOK), withTop(`,"vehicles":[` + vehOK + `]`),
		withOrder(`{"id":"o","address":"x","time_window_start":"17:00","time_window_end":"09:00"}`),
		withFleet(`{"count":"2.0","capacity":"1_000","name_prefix":"é"}`),
		withOptions(`{"strategy":"baseline","solver_seconds":"60"}`),
		withDepot(`{"latitude":-0.0,"longitude":"inf"}`),
		withOrders(`[{"id":"a","latitude":1,"longitude":2},{"id":"a","address":"x"}]`),
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, details := DecodeOptimizationIn(body)
		if o != nil {
			if len(details) > 0 {
				t.Fatalf("value and %d details", len(details))
			}
			if c := o.CanonicalJSON(); !json.Valid(c) {
				t.Fatalf("invalid canonical JSON %s", c)
			}
			return
		}
		if len(details) == 0 {
			t.Fatal("neither value nor details")
		}
		for _, d := range details {
			if len(d.Loc) == 0 || d.Loc[0] != "body" || d.Type == "" || d.Msg == "" {
				t.Fatalf("bad detail %+v", d)
			}
		}
		b, err := json.Marshal(NewValidationError(details))
		if err != nil || !json.Valid(b) {
			t.Fatalf("details do not marshal: %v", err)
		}
	})
}
