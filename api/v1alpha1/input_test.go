package v1alpha1

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

func TestDecodeInput(t *testing.T) {
	doc := &Input{
		Orders:   []Order{{ID: "A-1", Latitude: ptr.To(52.5), Longitude: ptr.To(13.4), Demand: ptr.To(2.0)}},
		Vehicles: []Vehicle{{ID: "van-1", Capacity: 10, ShiftStart: "08:00", ShiftEnd: "18:00"}},
	}
	data, sum, err := EncodeInput(doc)
	if err != nil {
		t.Fatal(err)
	}
	if sum != SHA256Hex(data) || len(sum) != 64 {
		t.Fatalf("sum %q", sum)
	}
	bomb := func() []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(`{"orders":[{"id":"`))
		_, _ = zw.Write(bytes.Repeat([]byte("x"), maxDecodedBytes))
		_ = zw.Close()
		return b.Bytes()
	}()
	for name, tc := range map[string]struct {
		binary map[string][]byte
		data   map[string]string
		want   string
		err    string
	}{
		"compressed, recorded sum": {binary: map[string][]byte{InputDataKey: data}, want: sum},
		"compressed, no sum":       {binary: map[string][]byte{InputDataKey: data}},
		"compressed wins over plain": {
			binary: map[string][]byte{InputDataKey: data}, data: map[string]string{InputPlainKey: `{"orders":[]}`},
		},
		"plain":                      {data: map[string]string{InputPlainKey: `{"orders":[{"id":"A-1","latitude":52.5,"longitude":13.4,"demand":2}],"vehicles":[{"id":"van-1","capacity":10,"shiftStart":"08:00","shiftEnd":"18:00"}]}`}},
		"another document":           {binary: map[string][]byte{InputDataKey: data}, want: strings.Repeat("0", 64), err: "does not match the SHA-256"},
		"plain where a sum is known": {data: map[string]string{InputPlainKey: `{"orders":[]}`}, want: sum, err: "has no binaryData input.json.gz"},
		"neither key":                {data: map[string]string{"orders.json": `{}`}, err: "holds neither binaryData input.json.gz nor data input.json"},
		"an unknown field":           {data: map[string]string{InputPlainKey: `{"orders":[{"id":"A-1","servicMinutes":3}]}`}, err: `unknown field "servicMinutes"`},
		"two documents":              {data: map[string]string{InputPlainKey: `{"orders":[]} {"orders":[]}`}, err: "more than one JSON value"},
		"not gzip":                   {binary: map[string][]byte{InputDataKey: []byte(`{"orders":[]}`)}, err: "input.json.gz: gzip: invalid header"},
		"a gzip bomb":                {binary: map[string][]byte{InputDataKey: bomb}, err: "expands past"},
	} {
		t.Run(name, func(t *testing.T) {
			in, err := DecodeInput(tc.binary, tc.data, tc.want)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Orders) != 1 || in.Orders[0].ID != "A-1" || *in.Orders[0].Demand != 2 || len(in.Vehicles) != 1 || in.Vehicles[0].Capacity != 10 {
				t.Errorf("decoded %+v", in)
			}
		})
	}
}

func TestSpecTotalsWithInput(t *testing.T) {
	spec := OptimizationSpec{Input: &InputRef{Name: "x", Orders: 120, Vehicles: 8}}
	if spec.OrderTotal() != 120 || spec.VehicleTotal() != 8 {
		t.Errorf("totals %d, %d", spec.OrderTotal(), spec.VehicleTotal())
	}
	spec.Input.Vehicles, spec.Fleet = 0, &Fleet{Count: 5}
	if spec.VehicleTotal() != 5 {
		t.Errorf("fleet total %d", spec.VehicleTotal())
	}
	full := spec.WithInput(&Input{Orders: make([]Order, 120)})
	if full.OrderTotal() != 120 || len(full.Orders) != 120 || spec.Orders != nil {
		t.Errorf("WithInput: %d orders, original changed: %v", len(full.Orders), spec.Orders != nil)
	}
}

// FuzzDecodeInput: a ConfigMap written by hand is outside input; any bytes
// decode to a document or an error, never a panic, and a document encoded
// again decodes to the same.
func FuzzDecodeInput(f *testing.F) {
	data, _, _ := EncodeInput(&Input{Orders: []Order{{ID: "A-1"}}})
	f.Add([]byte(`{"orders":[{"id":"A-1","latitude":52.5,"longitude":13.4}],"vehicles":[{"id":"v","capacity":1}]}`), false)
	f.Add([]byte(`{"orders":null}`), false)
	f.Add([]byte(`[]`), false)
	f.Add(data, true)
	f.Fuzz(func(t *testing.T, raw []byte, compressed bool) {
		var in *Input
		var err error
		if compressed {
			in, err = DecodeInput(map[string][]byte{InputDataKey: raw}, nil, "")
		} else {
			in, err = DecodeInput(nil, map[string]string{InputPlainKey: string(raw)}, "")
		}
		if err != nil {
			return
		}
		again, sum, err := EncodeInput(in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeInput(map[string][]byte{InputDataKey: again}, nil, sum)
		if err != nil {
			t.Fatalf("a decoded document does not decode again: %v", err)
		}
		if len(back.Orders) != len(in.Orders) || len(back.Vehicles) != len(in.Vehicles) {
			t.Fatalf("round trip changed the counts: %d/%d orders, %d/%d vehicles", len(back.Orders), len(in.Orders), len(back.Vehicles), len(in.Vehicles))
		}
	})
}

// The fleet constraints travel through the input document: what EncodeInput
// stores decodes to the same orders and vehicles, and a document written by
// hand names them as the spec does.
func TestInputCarriesFleetConstraints(t *testing.T) {
	doc := &Input{
		Orders: []Order{{
			ID: "A-1", Latitude: ptr.To(52.5), Longitude: ptr.To(13.4),
			TimeWindows: []TimeWindow{{Start: "09:00", End: "10:00"}, {Start: "14:00", End: "16:00"}},
			Skills:      []string{"fridge"},
			Loads:       []DimensionLoad{{Name: "volume_l", Value: 0}, {Name: "weight_kg", Value: 120.5}},
			Priority:    ptr.To[int32](80),
		}},
		Vehicles: []Vehicle{{
			ID: "van-1", Capacity: 10,
			VehicleConstraints: VehicleConstraints{
				Skills:             []string{"fridge", "lift"},
				Capacities:         []DimensionCapacity{{Name: "volume_l", Value: 3000}, {Name: "weight_kg", Value: 1000}},
				Breaks:             []Break{{Start: "11:30", End: "13:30", Minutes: 30}},
				MaxDurationMinutes: 480, MaxDistanceKm: 250.5, MaxStops: 40,
				Start:   &Location{Label: ptr.To("Yard"), Address: ptr.To("Yard Street 1")},
				End:     &Location{Latitude: ptr.To(52.4), Longitude: ptr.To(13.3)},
				OpenEnd: ptr.To(false),
			},
		}},
	}
	data, sum, err := EncodeInput(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeInput(map[string][]byte{InputDataKey: data}, nil, sum)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, doc) {
		t.Errorf("decoded %+v, want %+v", got, doc)
	}

	plain := `{"orders":[{"id":"A-1","latitude":52.5,"longitude":13.4,"timeWindows":[{"start":"09:00","end":"10:00"}],"skills":["fridge"],"loads":[{"name":"weight_kg","value":1}],"priority":5}],` +
		`"vehicles":[{"id":"van-1","capacity":10,"skills":["fridge"],"capacities":[{"name":"weight_kg","value":2}],"breaks":[{"start":"12:00","end":"13:00","minutes":30}],` +
		`"maxDurationMinutes":60,"maxDistanceKm":12.5,"maxStops":3,"start":{"address":"Yard Street 1"},"openEnd":true}]}`
	in, err := DecodeInput(nil, map[string]string{InputPlainKey: plain}, "")
	if err != nil {
		t.Fatal(err)
	}
	o, v := in.Orders[0], in.Vehicles[0]
	if len(o.TimeWindows) != 1 || o.Skills[0] != "fridge" || o.Loads[0].Value != 1 || *o.Priority != 5 ||
		v.Capacities[0].Value != 2 || v.Breaks[0].Minutes != 30 || v.MaxDurationMinutes != 60 || v.MaxDistanceKm != 12.5 ||
		v.MaxStops != 3 || *v.Start.Address != "Yard Street 1" || v.End != nil || !*v.OpenEnd {
		t.Errorf("decoded %+v", in)
	}
	if _, err := DecodeInput(nil, map[string]string{InputPlainKey: `{"orders":[{"id":"A-1","timeWindow":[]}]}`}, ""); err == nil || !strings.Contains(err.Error(), `unknown field "timeWindow"`) {
		t.Errorf("a misspelt constraint: %v", err)
	}
}
