package record

import (
	"os"
	"testing"
)

func TestTerminationMessageRoundTrip(t *testing.T) {
	path := t.TempDir() + "/termination-log"
	WriteTerminationMessage(path, &Failure{Code: "matrix_unavailable", Message: "OSRM answered 503"})
	f, ok := readTermination(t, path)
	if !ok || f.Code != "matrix_unavailable" || f.Message != "OSRM answered 503" {
		t.Fatalf("round trip = %+v, %v", f, ok)
	}
	for _, bad := range []string{"", "panic: oops", `{"message":"no code"}`, `{"code":`} {
		if _, ok := ParseTerminationMessage(bad); ok {
			t.Errorf("ParseTerminationMessage(%q) accepted", bad)
		}
	}
}

// FuzzParseTerminationMessage: a pod's termination message is outside input.
func FuzzParseTerminationMessage(f *testing.F) {
	f.Add(`{"code":"solver_error","message":"x"}`)
	f.Add("OOMKilled")
	f.Fuzz(func(t *testing.T, msg string) {
		if fl, ok := ParseTerminationMessage(msg); ok && fl.Code == "" {
			t.Fatal("accepted a failure without a code")
		}
	})
}

func readTermination(t *testing.T, path string) (*Failure, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ParseTerminationMessage(string(b))
}
