package plan

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/matrix"
	"routeopt.io/routeopt/solver/vrp"
)

func TestDimensions(t *testing.T) {
	loads := func(names ...string) []v1alpha1.DimensionLoad {
		var out []v1alpha1.DimensionLoad
		for _, n := range names {
			out = append(out, v1alpha1.DimensionLoad{Name: n, Value: 1})
		}
		return out
	}
	tests := map[string]struct {
		orders []v1alpha1.Order
		want   []string
	}{
		"no loads":                {[]v1alpha1.Order{{ID: "a"}}, nil},
		"sorted union, each once": {[]v1alpha1.Order{{ID: "a", Loads: loads("weight_kg", "volume_l")}, {ID: "b"}, {ID: "c", Loads: loads("pallets", "weight_kg")}}, []string{"pallets", "volume_l", "weight_kg"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Dimensions(&v1alpha1.OptimizationSpec{Orders: tc.orders}); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Dimensions() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFleetConstraints(t *testing.T) {
	const eight, six = 8 * 3600, 18 * 3600
	everything := v1alpha1.VehicleConstraints{
		Skills:             []string{"fridge", "Tail lift"},
		Capacities:         []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 900}, {Name: "pallets", Value: 4}, {Name: "volume_l", Value: 2500.5}},
		Breaks:             []v1alpha1.Break{{Start: "11:30", End: "13:00", Minutes: 30}, {Start: "15:00", End: "16:00", Minutes: 15}},
		MaxDurationMinutes: 480,
		MaxDistanceKm:      120.4567,
		MaxStops:           25,
		OpenEnd:            ptr.To(true),
	}
	translated := vrp.Vehicle{
		Skills:      []string{"fridge", "Tail lift"},
		Capacities:  []float64{2500.5, 900}, // volume_l, weight_kg; pallets is no order's
		Breaks:      []vrp.Break{{Start: 11*3600 + 1800, End: 13 * 3600, Duration: 1800}, {Start: 15 * 3600, End: 16 * 3600, Duration: 900}},
		MaxDuration: 480 * 60, MaxDistance: 120457, MaxStops: 25,
		OpenEnd: true,
	}
	orders := []v1alpha1.Order{{ID: "o", Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 10}, {Name: "volume_l", Value: 20}}}}
	with := func(v vrp.Vehicle, name string, capacity float64) vrp.Vehicle {
		v.Name, v.Capacity, v.ShiftStart, v.ShiftEnd = name, capacity, eight, six
		return v
	}
	tests := map[string]struct {
		spec    v1alpha1.OptimizationSpec
		want    []Vehicle
		wantErr string
	}{
		"a vehicle with every constraint": {
			spec: v1alpha1.OptimizationSpec{Orders: orders, Vehicles: []v1alpha1.Vehicle{{ID: "v", Capacity: 5, VehicleConstraints: everything}, {ID: "w", Capacity: 6, VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 1}, {Name: "weight_kg", Value: 2}},
			}}}},
			want: []Vehicle{
				{Ref: "v", Vehicle: with(translated, "v", 5)},
				{Ref: "w", Vehicle: with(vrp.Vehicle{Capacities: []float64{1, 2}}, "w", 6)},
			},
		},
		"every vehicle of a fleet has the fleet's": {
			spec: v1alpha1.OptimizationSpec{Orders: orders, Fleet: &v1alpha1.Fleet{Count: 2, Capacity: 7, VehicleConstraints: everything}},
			want: []Vehicle{{Ref: "Vehicle 1", Vehicle: with(translated, "Vehicle 1", 7)}, {Ref: "Vehicle 2", Vehicle: with(translated, "Vehicle 2", 7)}},
		},
		"capacities without loads bind nothing": {
			spec: v1alpha1.OptimizationSpec{Orders: []v1alpha1.Order{{ID: "o"}}, Vehicles: []v1alpha1.Vehicle{{ID: "v", Capacity: 5, VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 900}}, OpenEnd: ptr.To(false),
			}}}},
			want: []Vehicle{{Ref: "v", Vehicle: with(vrp.Vehicle{}, "v", 5)}},
		},
		"a dimension the orders name is missing": {
			spec: v1alpha1.OptimizationSpec{Orders: orders, Vehicles: []v1alpha1.Vehicle{{ID: "v", Capacity: 5, VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "weight_kg", Value: 900}},
			}}}},
			wantErr: `vehicle "v": no capacity in "volume_l"`,
		},
		"a break that is not HH:MM": {
			spec: v1alpha1.OptimizationSpec{Vehicles: []v1alpha1.Vehicle{{ID: "v", Capacity: 5, VehicleConstraints: v1alpha1.VehicleConstraints{
				Breaks: []v1alpha1.Break{{Start: "noon", End: "13:00", Minutes: 30}},
			}}}},
			wantErr: `vehicle "v": time "noon" is not HH:MM`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := Fleet(&tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Fleet() error = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Fleet() =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestProblemOrderConstraints(t *testing.T) {
	tests := map[string]struct {
		order v1alpha1.Order
		want  vrp.Order
	}{
		"one time window is the order's window": {
			v1alpha1.Order{TimeWindows: []v1alpha1.TimeWindow{{Start: "09:00", End: "11:00"}}},
			vrp.Order{Demand: 1, ServiceS: 300, WindowStart: 9 * 3600, WindowEnd: 11 * 3600},
		},
		"several windows span first start to last end": {
			v1alpha1.Order{TimeWindows: []v1alpha1.TimeWindow{{Start: "08:00", End: "09:00"}, {Start: "12:00", End: "12:30"}, {Start: "16:00", End: "17:00"}}},
			vrp.Order{Demand: 1, ServiceS: 300, WindowStart: 8 * 3600, WindowEnd: 17 * 3600, Windows: []vrp.Window{{Start: 8 * 3600, End: 9 * 3600}, {Start: 12 * 3600, End: 12*3600 + 1800}, {Start: 16 * 3600, End: 17 * 3600}}},
		},
		"skills, priority and loads in the sorted dimensions": {
			v1alpha1.Order{Skills: []string{"fridge"}, Priority: ptr.To(int32(70)), Loads: []v1alpha1.DimensionLoad{{Name: "weight_kg", Value: 12.5}}},
			vrp.Order{Demand: 1, ServiceS: 300, WindowEnd: vrp.NoWindowEnd, Skills: []string{"fridge"}, Priority: 70, Loads: []float64{0, 12.5}},
		},
		"without loads, nil loads": {
			v1alpha1.Order{Priority: ptr.To(int32(0))},
			vrp.Order{Demand: 1, ServiceS: 300, WindowEnd: vrp.NoWindowEnd},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.order.ID = "x"
			spec := &v1alpha1.OptimizationSpec{Orders: []v1alpha1.Order{tc.order, {ID: "dims", Loads: []v1alpha1.DimensionLoad{{Name: "volume_l", Value: 1}, {Name: "weight_kg", Value: 1}}}}}
			fleet, err := Fleet(&v1alpha1.OptimizationSpec{Orders: spec.Orders, Fleet: &v1alpha1.Fleet{Count: 1, Capacity: 1, VehicleConstraints: v1alpha1.VehicleConstraints{
				Capacities: []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 10}, {Name: "weight_kg", Value: 10}},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := Problem(spec, &Located{Orders: []int{0, 1}}, &matrix.Matrix{Distance: square(3, 1), Duration: square(3, 1)}, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"volume_l", "weight_kg"}; !reflect.DeepEqual(p.Dimensions, want) {
				t.Errorf("dimensions = %v, want %v", p.Dimensions, want)
			}
			if !reflect.DeepEqual(p.Orders[0], tc.want) {
				t.Errorf("order = %+v, want %+v", p.Orders[0], tc.want)
			}
		})
	}
}

// TestPlaceEnds checks where vehicles start and end in the matrix: extra
// points after the located orders, one per distinct position, the depot's
// position as the depot.
func TestPlaceEnds(t *testing.T) {
	depot := matrix.Point{Lat: 52.5, Lon: 13.4}
	home := matrix.Point{Lat: 52.6, Lon: 13.5}
	yard := matrix.Point{Lat: 52.4, Lon: 13.3}
	byAddress := map[string]matrix.Point{"Home 1": home, "Depot street 1": depot}
	at := func(loc *v1alpha1.Location) matrix.Point {
		if loc.Latitude != nil {
			return matrix.Point{Lat: *loc.Latitude, Lon: *loc.Longitude}
		}
		return byAddress[*loc.Address]
	}
	coords := func(p matrix.Point) *v1alpha1.Location {
		return &v1alpha1.Location{Latitude: ptr.To(p.Lat), Longitude: ptr.To(p.Lon)}
	}
	place := func(p matrix.Point, address string) v1alpha1.Place {
		return v1alpha1.Place{Latitude: p.Lat, Longitude: p.Lon, Address: address}
	}
	atDepot := Terminal{Place: place(depot, "Depotweg 1")}
	// Three orders, the second not located: extra points come after the other two.
	located := func() *Located {
		return &Located{Depot: depot, Orders: []int{0, 2}, Points: []matrix.Point{depot, {Lat: 1, Lon: 1}, {Lat: 2, Lon: 2}}}
	}
	spec := func(vehicles ...v1alpha1.VehicleConstraints) *v1alpha1.OptimizationSpec {
		s := &v1alpha1.OptimizationSpec{Depot: v1alpha1.Depot{Address: ptr.To(" Depotweg 1 ")}, Orders: make([]v1alpha1.Order, 3)}
		for i, c := range vehicles {
			s.Vehicles = append(s.Vehicles, v1alpha1.Vehicle{ID: string(rune('a' + i)), Capacity: 1, VehicleConstraints: c})
		}
		return s
	}
	tests := map[string]struct {
		spec       *v1alpha1.OptimizationSpec
		wantEnds   []RouteEnds
		wantPoints []matrix.Point
	}{
		"no vehicle with a start, an end or open_end": {
			spec: spec(v1alpha1.VehicleConstraints{}, v1alpha1.VehicleConstraints{OpenEnd: ptr.To(false)}),
		},
		"same positions share a point; the depot's is the depot": {
			spec: spec(
				v1alpha1.VehicleConstraints{Start: &v1alpha1.Location{Address: ptr.To("Home 1")}, End: coords(yard)},
				v1alpha1.VehicleConstraints{Start: coords(home), OpenEnd: ptr.To(true)},
				v1alpha1.VehicleConstraints{},
				v1alpha1.VehicleConstraints{Start: &v1alpha1.Location{Address: ptr.To("Depot street 1")}, End: coords(yard)},
			),
			wantEnds: []RouteEnds{
				{Start: Terminal{Point: 3, Place: place(home, "Home 1")}, End: Terminal{Point: 4, Place: place(yard, "")}},
				{Start: Terminal{Point: 3, Place: place(home, "")}, Open: true},
				{Start: atDepot, End: atDepot},
				{Start: Terminal{Place: place(depot, "Depot street 1")}, End: Terminal{Point: 4, Place: place(yard, "")}},
			},
			wantPoints: []matrix.Point{home, yard},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := located()
			in.PlaceEnds(tc.spec, at)
			if !reflect.DeepEqual(in.Ends, tc.wantEnds) {
				t.Errorf("ends =\n%+v\nwant\n%+v", in.Ends, tc.wantEnds)
			}
			if extra := in.Points[3:]; !reflect.DeepEqual(extra, tc.wantPoints) && (len(extra) > 0 || len(tc.wantPoints) > 0) {
				t.Errorf("extra points = %v, want %v", extra, tc.wantPoints)
			}
			fleet, err := Fleet(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			n := len(in.Points)
			p, err := Problem(tc.spec, in, &matrix.Matrix{Distance: square(n, 1), Duration: square(n, 1)}, fleet)
			if err != nil {
				t.Fatal(err)
			}
			if p.ExtraLocations != len(tc.wantPoints) {
				t.Errorf("extra locations = %d, want %d", p.ExtraLocations, len(tc.wantPoints))
			}
			for i, e := range tc.wantEnds {
				v := p.Vehicles[i]
				wantEnd := e.End.Point
				if e.Open {
					wantEnd = 0
				}
				if v.Start != e.Start.Point || v.End != wantEnd || v.OpenEnd != e.Open {
					t.Errorf("vehicle %d starts at %d, ends at %d, open %v; want %d, %d, %v", i, v.Start, v.End, v.OpenEnd, e.Start.Point, wantEnd, e.Open)
				}
			}
		})
	}
}
