package apikey

import (
	"testing"
	"time"
)

func TestLastUseRecorderClaims(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	type use struct {
		id       string
		recorded time.Time // the cached annotation
		at       time.Time
		release  bool // the write of a granted claim ends before the next use
		want     bool
	}
	tests := []struct {
		name string
		uses []use
	}{
		{"never recorded: recorded at once", []use{{id: "a", at: t0, want: true}}},
		{"recorded 59 s ago: not yet", []use{{id: "a", recorded: t0.Add(-59 * time.Second), at: t0, want: false}}},
		{"recorded a minute ago: again", []use{{id: "a", recorded: t0.Add(-time.Minute), at: t0, want: true}}},
		{"recorded ahead of this replica's clock: recent enough", []use{{id: "a", recorded: t0.Add(time.Hour), at: t0, want: false}}},
		{"a second use before the cache shows the first: once a minute per replica", []use{
			{id: "a", at: t0, release: true, want: true},
			{id: "a", at: t0.Add(30 * time.Second), release: true, want: false},
			{id: "a", at: t0.Add(59 * time.Second), want: false},
			{id: "a", at: t0.Add(time.Minute), release: true, want: true},
		}},
		{"keys are independent", []use{
			{id: "a", at: t0, release: true, want: true},
			{id: "b", at: t0, release: true, want: true},
		}},
		{"writes in flight are bounded; a busy use is not remembered", []use{
			{id: "a", at: t0, want: true}, {id: "b", at: t0, want: true},
			{id: "c", at: t0, want: true}, {id: "d", at: t0, want: true},
			{id: "e", at: t0, want: false},
			{id: "f", at: t0, release: true, want: false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r LastUseRecorder
			for i, u := range tc.uses {
				got := r.claim(u.id, u.recorded, u.at)
				if got != u.want {
					t.Fatalf("use %d (%s at %s): claim %v, want %v", i, u.id, u.at.Format(time.TimeOnly), got, u.want)
				}
				if got && u.release {
					r.Release()
				}
			}
		})
	}

	t.Run("a busy use is recorded by a later request", func(t *testing.T) {
		var r LastUseRecorder
		for _, id := range []string{"a", "b", "c", "d"} {
			r.claim(id, time.Time{}, t0)
		}
		if r.claim("e", time.Time{}, t0) {
			t.Fatal("a fifth write in flight was allowed")
		}
		r.Release()
		if !r.claim("e", time.Time{}, t0.Add(time.Second)) {
			t.Fatal("the key refused while busy was not recorded once a write ended")
		}
	})

	t.Run("old entries are swept", func(t *testing.T) {
		var r LastUseRecorder
		for _, id := range []string{"a", "b", "c"} {
			r.claim(id, time.Time{}, t0)
			r.Release()
		}
		r.claim("d", time.Time{}, t0.Add(2*time.Minute))
		r.Release()
		if len(r.sent) != 1 {
			t.Fatalf("%d entries remembered, want only the fresh one: %v", len(r.sent), r.sent)
		}
	})

	t.Run("a key without a Secret is never recorded", func(t *testing.T) {
		var r LastUseRecorder
		if r.Claim(&Principal{KeyID: "a"}, t0) {
			t.Fatal("claimed a write for a key with no Secret to write")
		}
		if !r.Claim(&Principal{KeyID: "a", secretName: "apikey-a"}, t0) {
			t.Fatal("a key never recorded was not claimed")
		}
	})
}
