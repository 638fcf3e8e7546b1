package record

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestTerminationMessageRoundTrip(t *testing.T) {
	path := t.TempDir() + "/termination-log"
	WriteTerminationMessage(path, &Failure{Code: "matrix_unavailable", Message: "OSRM answered 503"})
	f, ok := readTermination(t, path)
	if !ok || f.Code != "matrix_unavailable" || f.Message != "OSRM answered 503" {
		t.Fatalf("round trip = %+v, %v", f, ok)
	}
	for _, bad := range []string{"", "panic: oops", `{"message":"no code"}`, `{"code":`, `{"code":"solver_error","message":" "}`} {
		if _, ok := ParseTerminationMessage(bad); ok {
			t.Errorf("ParseTerminationMessage(%q) accepted", bad)
		}
	}
}

// FuzzParseTerminationMessage: a pod's termination message is outside
// input (with FallbackToLogsOnError it may be the tail of any log). A
// failure read from it carries one of the documented error codes and a
// message, and is read back unchanged once written.
func FuzzParseTerminationMessage(f *testing.F) {
	f.Add(`{"code":"solver_error","message":"x"}`)
	f.Add(`{"code":"matrix_unavailable","message":"OSRM answered 503","extra":1}`)
	f.Add("OOMKilled")
	f.Add(`{"code":"","message":"x"}`)
	f.Add(`{"Code":"matrix_unavailable"}`)
	f.Add(`{"code":"solver_error"}{"code":"internal_error"}`)
	f.Add(`{"code":"SOLVER_ERROR","Message":"\u0000"}`)
	f.Fuzz(func(t *testing.T, msg string) {
		fl, ok := ParseTerminationMessage(msg)
		if !ok {
			return
		}
		if !slices.Contains(Codes, fl.Code) || strings.TrimSpace(fl.Message) == "" {
			t.Fatalf("accepted a failure with code %q and message %q", fl.Code, fl.Message)
		}
		path := t.TempDir() + "/termination-log"
		WriteTerminationMessage(path, fl)
		if again, ok := readTermination(t, path); !ok || *again != *fl {
			t.Fatalf("%+v reads back as %+v, %v", fl, again, ok)
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
