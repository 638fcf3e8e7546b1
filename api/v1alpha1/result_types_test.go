package v1alpha1

import (
	"bytes"
	"strings"
	"testing"
)

// Split then join gives the data back, for sizes around the part size.
func TestSplitJoinBlob(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size, cut int
		parts     int
	}{
		{"empty", 0, 4, 1},
		{"smaller than a part", 3, 4, 1},
		{"exactly one part", 4, 4, 1},
		{"one byte over", 5, 4, 2},
		{"many parts", 4000, 7, 572},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bytes.Repeat([]byte("ab€"), tc.size)[:tc.size]
			pieces := SplitBlob(data, tc.cut)
			if len(pieces) != tc.parts {
				t.Fatalf("%d pieces, want %d", len(pieces), tc.parts)
			}
			for _, p := range pieces {
				if len(p) > tc.cut {
					t.Fatalf("piece of %d bytes, at most %d", len(p), tc.cut)
				}
			}
			got, err := NewStoredBlob(data).Join(pieces)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatal("joined data differs")
			}
		})
	}
}

// A part of another solve attempt, a missing part or a changed part is an
// error naming the cause, never a different document.
func TestJoinRejectsMixedAttempts(t *testing.T) {
	first := bytes.Repeat([]byte("first attempt "), 100)
	second := bytes.Repeat([]byte("other attempt "), 100)
	b := NewStoredBlob(first)
	p1, p2 := SplitBlob(first, 500), SplitBlob(second, 500)
	for _, tc := range []struct {
		name   string
		pieces [][]byte
	}{
		{"a part of another attempt", [][]byte{p1[0], p2[1], p1[2]}},
		{"a part missing", [][]byte{p1[0], p1[2]}},
		{"an empty part", [][]byte{p1[0], nil, p1[2]}},
		{"parts in another order", [][]byte{p1[1], p1[0], p1[2]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := b.Join(tc.pieces)
			if err == nil || !strings.Contains(err.Error(), "different solve attempts") {
				t.Fatalf("got %d bytes, error %v; want a mixed-attempts error", len(got), err)
			}
		})
	}
}

func TestDecodeManifest(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
	}{
		{"inline", `{"result":{"key":"result.json.gz","bytes":3,"sha256":"x"}}`, ""},
		{"in parts", `{"result":{"key":"result.json.gz","bytes":3,"sha256":"x"},"paths":{"first":1,"parts":10,"bytes":3,"sha256":"x"}}`, ""},
		{"past the last part", `{"result":{"key":"result.json.gz","bytes":3,"sha256":"x"},"paths":{"first":2,"parts":10,"bytes":3,"sha256":"x"}}`, "out of range"},
		{"part zero", `{"result":{"first":0,"parts":1,"bytes":3,"sha256":"x"}}`, "out of range"},
		{"nowhere", `{"result":{"bytes":3,"sha256":"x"}}`, "out of range"},
		{"both", `{"result":{"key":"k","first":1,"parts":1,"bytes":3,"sha256":"x"}}`, "both"},
		{"negative size", `{"result":{"key":"k","bytes":-1,"sha256":"x"}}`, "negative"},
		{"not JSON", `{`, "manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeManifest(tc.in)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestPathsRoundTrip(t *testing.T) {
	in := []string{"_p~iF~ps|U_ulLnnqC_mqNvxq`@", "", "??"}
	data, err := EncodePaths(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodePaths(data)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(out, "|") != strings.Join(in, "|") || len(out) != len(in) {
		t.Fatalf("got %q, want %q", out, in)
	}
}

// A stored document that expands past the bound is refused, not read
// into memory.
func TestDecodeBoundsExpansion(t *testing.T) {
	defer func(n int) { maxDecodedBytes = n }(maxDecodedBytes)
	maxDecodedBytes = 1 << 10
	small, err := EncodePaths([]string{strings.Repeat("a", 1000)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodePaths(small); err != nil {
		t.Fatalf("a document below the bound: %v", err)
	}
	huge, err := encodeGzipJSON(strings.Repeat("a", maxDecodedBytes))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodePaths(huge); err == nil || !strings.Contains(err.Error(), "expands past") {
		t.Fatalf("error %v, want the expansion bound", err)
	}
}

// The stored form is written by a solve pod: whatever it holds, decoding
// fails or gives a document that encodes again.
func FuzzDecodeResult(f *testing.F) {
	d := "Ada"
	seed, err := EncodeResult(&Result{ID: "x", Routes: []Route{{VehicleRef: "v1", DriverName: &d, Stops: []Stop{{Seq: 1, OrderRef: "o"}}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeResult(data)
		if err != nil {
			return
		}
		if _, err := EncodeResult(r); err != nil {
			t.Fatalf("a decoded result does not encode: %v", err)
		}
		_, _ = DecodePaths(data)
	})
}
