package webserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"routeopt.io/routeopt/api/v1alpha1"
	rest "routeopt.io/routeopt/webserver/schema"
)

func decodeRequest(t *testing.T, body string) *rest.OptimizationIn {
	t.Helper()
	in, details := rest.DecodeOptimizationIn([]byte(body))
	if len(details) > 0 {
		t.Fatal(details)
	}
	return in
}

// Every fleet constraint of the request reaches the custom resource: the
// orders' and vehicles' in the input document, the fleet's in the spec,
// named dimensions listed by name.
func TestTranslateFleetConstraints(t *testing.T) {
	const order = `{"id":"A-1","latitude":52.53,"longitude":13.38,"time_windows":[{"start":"09:00","end":"10:30"},{"start":"14:00","end":"16:00"}],` +
		`"skills":["fridge"],"loads":{"weight_kg":120,"volume_l":0},"priority":80}`
	const constraints = `"skills":["fridge","lift"],"capacities":{"weight_kg":1000,"volume_l":3000.5},"breaks":[{"start":"11:30","end":"13:30","minutes":30}],` +
		`"max_duration_minutes":480,"max_distance_km":250.5,"max_stops":40,"start":{"label":"Yard","address":"Yard Street 1"},"open_end":true`
	wantOrder := v1alpha1.Order{
		ID: "A-1", Latitude: ptr.To(52.53), Longitude: ptr.To(13.38), Demand: ptr.To(1.0), ServiceMinutes: ptr.To(5.0),
		TimeWindows: []v1alpha1.TimeWindow{{Start: "09:00", End: "10:30"}, {Start: "14:00", End: "16:00"}},
		Skills:      []string{"fridge"},
		Loads:       []v1alpha1.DimensionLoad{{Name: "volume_l", Value: 0}, {Name: "weight_kg", Value: 120}},
		Priority:    ptr.To[int32](80),
	}
	wantConstraints := v1alpha1.VehicleConstraints{
		Skills:             []string{"fridge", "lift"},
		Capacities:         []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 3000.5}, {Name: "weight_kg", Value: 1000}},
		Breaks:             []v1alpha1.Break{{Start: "11:30", End: "13:30", Minutes: 30}},
		MaxDurationMinutes: 480, MaxDistanceKm: 250.5, MaxStops: 40,
		Start:   &v1alpha1.Location{Label: ptr.To("Yard"), Address: ptr.To("Yard Street 1")},
		OpenEnd: ptr.To(true),
	}
	depot := `"depot":{"latitude":52.52,"longitude":13.405}`

	in := decodeRequest(t, `{`+depot+`,"orders":[`+order+`],"vehicles":[{"id":"van-1","capacity":10,`+constraints+`},{"id":"van-2","capacity":8,"capacities":{"weight_kg":800,"volume_l":1},"end":{"latitude":52.4,"longitude":13.3}}]}`)
	doc := InputFromRequest(in)
	if diff := cmp.Diff([]v1alpha1.Order{wantOrder}, doc.Orders); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}
	wantVehicles := []v1alpha1.Vehicle{
		{ID: "van-1", Capacity: 10, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: wantConstraints},
		{ID: "van-2", Capacity: 8, ShiftStart: "08:00", ShiftEnd: "18:00", VehicleConstraints: v1alpha1.VehicleConstraints{
			Capacities: []v1alpha1.DimensionCapacity{{Name: "volume_l", Value: 1}, {Name: "weight_kg", Value: 800}},
			End:        &v1alpha1.Location{Latitude: ptr.To(52.4), Longitude: ptr.To(13.3)},
		}},
	}
	if diff := cmp.Diff(wantVehicles, doc.Vehicles); diff != "" {
		t.Errorf("vehicles (-want +got):\n%s", diff)
	}

	in = decodeRequest(t, `{`+depot+`,"orders":[`+order+`],"fleet":{"count":3,"capacity":10,`+constraints+`}}`)
	wantFleet := &v1alpha1.Fleet{Count: 3, Capacity: 10, ShiftStart: "08:00", ShiftEnd: "18:00", NamePrefix: "Vehicle", VehicleConstraints: wantConstraints}
	if diff := cmp.Diff(wantFleet, specFromRequest(in).Fleet); diff != "" {
		t.Errorf("fleet (-want +got):\n%s", diff)
	}
}

// A request without fleet constraints stores the input document it stored
// before they existed, byte for byte, and its defaults (priority 0, no
// skills, open_end false) store nothing either.
func TestTranslateWithoutFleetConstraints(t *testing.T) {
	const want = `{"orders":[{"id":"A-1","latitude":52.53,"longitude":13.38,"demand":1,"serviceMinutes":5,"timeWindowStart":"09:00","timeWindowEnd":"12:00"}],` +
		`"vehicles":[{"id":"van-1","capacity":10,"shiftStart":"08:00","shiftEnd":"18:00"}]}`
	for _, body := range []string{
		`{"depot":{"latitude":52.52,"longitude":13.405},"orders":[{"id":"A-1","latitude":52.53,"longitude":13.38,"time_window_start":"09:00","time_window_end":"12:00"}],"vehicles":[{"id":"van-1","capacity":10}]}`,
		`{"depot":{"latitude":52.52,"longitude":13.405},"orders":[{"id":"A-1","latitude":52.53,"longitude":13.38,"time_window_start":"09:00","time_window_end":"12:00","priority":0,"skills":[]}],"vehicles":[{"id":"van-1","capacity":10,"skills":[],"breaks":[],"open_end":false}]}`,
	} {
		if got := mustJSON(t, InputFromRequest(decodeRequest(t, body))); got != want {
			t.Errorf("input document\n got  %s\n want %s", got, want)
		}
	}
	fleet := specFromRequest(decodeRequest(t, `{"depot":{"latitude":52.52,"longitude":13.405},"orders":[{"id":"A-1","latitude":52.53,"longitude":13.38}],"fleet":{"count":2,"capacity":8,"open_end":false}}`)).Fleet
	if got, want := mustJSON(t, fleet), `{"count":2,"capacity":8,"shiftStart":"08:00","shiftEnd":"18:00","namePrefix":"Vehicle"}`; got != want {
		t.Errorf("fleet\n got  %s\n want %s", got, want)
	}
}
