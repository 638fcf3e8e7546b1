package v1alpha1

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
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

// A result without fleet constraints is the document it was before they
// existed: none of their keys appear.
func TestResultWithoutFleetConstraints(t *testing.T) {
	r := &Result{
		ID: "74664201-cd11-59b0-af6c-dddd4df97de2", Status: StateCompleted, Strategy: StrategyOptimized,
		KPIs: KPIs{OrdersTotal: 1, OrdersAssigned: 1, VehiclesAvailable: 1, VehiclesUsed: 1,
			PerVehicle: []VehicleKPI{{VehicleRef: "van-1", Stops: 1, DistanceM: 10, Load: 1, Capacity: 8}}},
		Routes: []Route{{VehicleRef: "van-1", DepartS: 28800, ReturnS: 30000, DistanceM: 10, Load: 1, Capacity: 8,
			Stops: []Stop{{Seq: 1, OrderRef: "A-1", Latitude: 52.5, Longitude: 13.4}}}},
		Unassigned: []Unassigned{}, Warnings: []Warning{},
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"74664201-cd11-59b0-af6c-dddd4df97de2","status":"completed","strategy":"optimized",` +
		`"kpis":{"orders_total":1,"orders_assigned":1,"orders_unassigned":0,"vehicles_available":1,"vehicles_used":1,"distance_m":0,"drive_seconds":0,"route_seconds":0,"late_stops":0,"avg_utilization":0,` +
		`"per_vehicle":[{"vehicle_ref":"van-1","stops":1,"distance_m":10,"load":1,"capacity":8}]},` +
		`"routes":[{"vehicle_ref":"van-1","driver_name":null,"depart_s":28800,"return_s":30000,"distance_m":10,"load":1,"capacity":8,` +
		`"stops":[{"seq":1,"order_ref":"A-1","address":"","latitude":52.5,"longitude":13.4,"arrival_s":0,"start_s":0,"depart_s":0,"wait_s":0,"late_s":0,"leg_distance_m":0,"leg_travel_s":0,"customer":null,"time_window_start":null,"time_window_end":null}]}],` +
		`"unassigned":[],"warnings":[]}`
	if string(raw) != want {
		t.Errorf("result\n got  %s\n want %s", raw, want)
	}
}

// The fleet constraints' fields of a result survive storage: an open route's
// end stays null, a closed one's stays a place, a route without either
// stays without, and empty lists and objects stay empty rather than absent.
func TestResultFleetConstraintsRoundTrip(t *testing.T) {
	start := &Place{Latitude: 52.5, Longitude: 13.4, Address: "Yard Street 1"}
	r := &Result{
		ID: "74664201-cd11-59b0-af6c-dddd4df97de2", Status: StateCompleted, Strategy: StrategyOptimized,
		KPIs: KPIs{PerVehicle: []VehicleKPI{
			{VehicleRef: "van-1", Loads: map[string]float64{"weight_kg": 120.5}, Capacities: map[string]float64{"weight_kg": 1000}},
			{VehicleRef: "van-2", Loads: map[string]float64{}, Capacities: map[string]float64{"weight_kg": 800}},
		}},
		Routes: []Route{
			{VehicleRef: "van-1", Start: start, End: RouteEnd{At: &Place{Latitude: 52.4, Longitude: 13.3}},
				Loads: map[string]float64{"weight_kg": 120.5}, Capacities: map[string]float64{"weight_kg": 1000},
				Breaks: []RouteBreak{{StartS: 43200, EndS: 45000, AfterSeq: 0}, {StartS: 50000, EndS: 50600, AfterSeq: 2}},
				Stops:  []Stop{{Seq: 1, OrderRef: "A-1"}, {Seq: 2, OrderRef: "A-2", TimeWindowStart: ptr.To("14:00"), TimeWindowEnd: ptr.To("16:00")}}},
			{VehicleRef: "van-2", Start: start, End: RouteEnd{Open: true}, Breaks: []RouteBreak{}, Stops: []Stop{{Seq: 1, OrderRef: "A-3"}}},
			{VehicleRef: "van-3", Stops: []Stop{{Seq: 1, OrderRef: "A-4"}}},
		},
		Unassigned: []Unassigned{{OrderRef: "A-5", Reason: "skills_missing", Message: `no vehicle has the skill "fridge"`}},
		Warnings:   []Warning{},
	}
	data, err := EncodeResult(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeResult(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, r)
	}
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"capacities":{"weight_kg":1000},"start":{"latitude":52.5,"longitude":13.4,"address":"Yard Street 1"},"end":{"latitude":52.4,"longitude":13.3,"address":""},"breaks":[{"start_s":43200,"end_s":45000,"after_seq":0},{"start_s":50000,"end_s":50600,"after_seq":2}],"stops":`,
		`"vehicle_ref":"van-2","driver_name":null,"depart_s":0,"return_s":0,"distance_m":0,"load":0,"capacity":0,"start":{"latitude":52.5,"longitude":13.4,"address":"Yard Street 1"},"end":null,"breaks":[],"stops":`,
		`"vehicle_ref":"van-3","driver_name":null,"depart_s":0,"return_s":0,"distance_m":0,"load":0,"capacity":0,"stops":`,
		`{"vehicle_ref":"van-2","stops":0,"distance_m":0,"load":0,"capacity":0,"loads":{},"capacities":{"weight_kg":800}}`,
		`"time_window_start":"14:00","time_window_end":"16:00"`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("result lacks %s:\n%s", want, raw)
		}
	}
	var end RouteEnd
	if err := json.Unmarshal([]byte(`{"latitude":"north"}`), &end); err == nil {
		t.Error("an end that is not a place decoded")
	}
}
