package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"routeopt.io/routeopt/solver/vrp"
)

// OverlayFormat names the version of the overlay file format.
const OverlayFormat = "routeopt-features/1"

// Overlay is one instance of a feature set: a Solomon-format instance of
// an embedded set (Base) and what the feature adds to it. Times and
// durations are in the units of Instance.Problem (the file's times x 10),
// coordinates in the file's units; the orders' arrays hold one entry per
// customer, in file order.
type Overlay struct {
	Format  string `json:"format"`
	Base    string `json:"base"`    // "<set>/<instance>", e.g. "solomon/c101"
	Feature string `json:"feature"` // the feature set the instance belongs to
	Seed    uint64 `json:"seed"`    // the generator's seed
	// Dimensions name the load dimensions beyond the demand.
	Dimensions []string `json:"dimensions,omitempty"`
	// ExtraLocations are where vehicles start or end other than the depot
	// (x, y); VehicleGroup.Start and End number them from 1.
	ExtraLocations [][2]int        `json:"extra_locations,omitempty"`
	Fleet          []VehicleGroup  `json:"fleet"`
	Orders         OrderProperties `json:"orders"`
}

// OrderProperties are what the overlay sets on the orders: each array is
// empty or has one entry per customer.
type OrderProperties struct {
	// Windows replace the file's window: one [start, end] or several,
	// sorted and apart; an empty entry keeps the file's.
	Windows  [][][2]int  `json:"windows,omitempty"`
	Skills   [][]string  `json:"skills,omitempty"`
	Loads    [][]float64 `json:"loads,omitempty"` // one per dimension
	Priority []int       `json:"priority,omitempty"`
}

// VehicleGroup is Count identical vehicles. Each has the instance's
// capacity Q and the depot's horizon as its shift.
type VehicleGroup struct {
	Count       int       `json:"count"`
	Skills      []string  `json:"skills,omitempty"`
	Capacities  []float64 `json:"capacities,omitempty"` // one per dimension
	Breaks      [][3]int  `json:"breaks,omitempty"`     // start, end, duration
	MaxDuration int       `json:"max_duration,omitempty"`
	MaxDistance int       `json:"max_distance,omitempty"`
	MaxStops    int       `json:"max_stops,omitempty"`
	Start       int       `json:"start,omitempty"` // 0 the depot, k the k-th extra location
	End         int       `json:"end,omitempty"`
	OpenEnd     bool      `json:"open_end,omitempty"`
}

// maxFleet bounds an overlay's vehicles, maxOverlayBytes its file.
const (
	maxFleet        = 10000
	maxOverlayBytes = 4 << 20
)

var (
	baseName    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9_]*$`)
	featureName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
)

// ParseOverlay reads an overlay file and checks everything that does not
// need the base instance: Problem checks the rest.
func ParseOverlay(r io.Reader) (*Overlay, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxOverlayBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxOverlayBytes {
		return nil, fmt.Errorf("overlay larger than %d bytes", maxOverlayBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var o Overlay
	if err := dec.Decode(&o); err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	if dec.More() {
		return nil, errors.New("overlay: data after the object")
	}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	return &o, nil
}

// check validates the overlay on its own.
func (o *Overlay) check() error {
	var errs []error
	add := func(format string, args ...any) {
		if len(errs) < 10 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	if o.Format != OverlayFormat {
		add("format %q, want %q", o.Format, OverlayFormat)
	}
	if !baseName.MatchString(o.Base) {
		add("base %q, want <set>/<instance> in lower case", o.Base)
	}
	if !featureName.MatchString(o.Feature) {
		add("feature %q, want a lower-case name", o.Feature)
	}
	for i, d := range o.Dimensions {
		if strings.TrimSpace(d) == "" {
			add("dimension %d has no name", i)
		}
	}
	for i, xy := range o.ExtraLocations {
		if max(abs(xy[0]), abs(xy[1])) > maxCoord {
			add("extra location %d: coordinates beyond ±%d", i+1, maxCoord)
		}
	}
	total := 0
	for g, v := range o.Fleet {
		if v.Count < 1 || v.Count > maxFleet {
			add("fleet group %d: count %d, want 1 to %d", g, v.Count, maxFleet)
		}
		total += max(v.Count, 0)
		if len(v.Capacities) != len(o.Dimensions) {
			add("fleet group %d: %d capacities for %d dimensions", g, len(v.Capacities), len(o.Dimensions))
		}
		for _, c := range v.Capacities {
			if !(c > 0) || math.IsInf(c, 0) {
				add("fleet group %d: capacity %v, want a finite number > 0", g, c)
			}
		}
		if err := skillsValid(v.Skills); err != nil {
			add("fleet group %d: %v", g, err)
		}
		for k, b := range v.Breaks {
			if b[2] <= 0 || b[0] < 0 || b[0]+b[2] > b[1] || b[1] > vrp.NoWindowEnd {
				add("fleet group %d: break %d %v, want 0 <= start, start + duration <= end <= %d, duration > 0", g, k, b, vrp.NoWindowEnd)
			}
		}
		if v.MaxDuration < 0 || v.MaxDistance < 0 || v.MaxStops < 0 {
			add("fleet group %d: route limits must be >= 0", g)
		}
		if v.Start < 0 || v.Start > len(o.ExtraLocations) || v.End < 0 || v.End > len(o.ExtraLocations) {
			add("fleet group %d: start %d or end %d is not 0 or an extra location 1 to %d", g, v.Start, v.End, len(o.ExtraLocations))
		}
		if v.OpenEnd && v.End != 0 {
			add("fleet group %d: an open route has no end location", g)
		}
	}
	if len(o.Fleet) == 0 || total > maxFleet {
		add("fleet of %d vehicles, want 1 to %d", total, maxFleet)
	}
	for i, ws := range o.Orders.Windows {
		for k, w := range ws {
			if w[0] < 0 || w[1] < w[0] || w[1] > vrp.NoWindowEnd || k > 0 && w[0] <= ws[k-1][1] {
				add("order %d: window %d %v, want 0 <= start <= end <= %d, after the window before", i+1, k, w, vrp.NoWindowEnd)
			}
		}
	}
	for i, s := range o.Orders.Skills {
		if err := skillsValid(s); err != nil {
			add("order %d: %v", i+1, err)
		}
	}
	for i, ls := range o.Orders.Loads {
		if len(ls) != len(o.Dimensions) {
			add("order %d: %d loads for %d dimensions", i+1, len(ls), len(o.Dimensions))
		}
		for _, x := range ls {
			if !(x >= 0) || math.IsInf(x, 0) {
				add("order %d: load %v, want a finite number >= 0", i+1, x)
			}
		}
	}
	for i, p := range o.Orders.Priority {
		if p < 0 || p > vrp.MaxPriority {
			add("order %d: priority %d, want 0 to %d", i+1, p, vrp.MaxPriority)
		}
	}
	return errors.Join(errs...)
}

func skillsValid(ss []string) error {
	for _, s := range ss {
		if strings.TrimSpace(s) == "" {
			return errors.New("a skill without a name")
		}
	}
	return nil
}

func abs(x int) int { return max(x, -x) }

// Vehicles is the size of the overlay's fleet.
func (o *Overlay) Vehicles() int {
	n := 0
	for _, g := range o.Fleet {
		n += g.Count
	}
	return n
}

// Relaxed is the same instance without the feature: the base instance as
// Instance.Problem makes it, with the overlay's fleet size (identical
// vehicles at the depot, closed routes) and nothing else. For the windows
// set, whose windows lie inside the file's, it is a relaxation in the
// strict sense (no plan costs less with the feature); for start and end
// locations and for priorities it is the feature left out.
func (o *Overlay) Relaxed() *Overlay {
	return &Overlay{Format: o.Format, Base: o.Base, Feature: o.Feature, Seed: o.Seed, Fleet: []VehicleGroup{{Count: o.Vehicles()}}}
}

// Problem applies the overlay to its base instance under the DIMACS
// convention of Instance.Problem, and validates the result.
func (o *Overlay) Problem(in *Instance) (*vrp.Problem, error) {
	n := in.Customers()
	for name, l := range map[string]int{"windows": len(o.Orders.Windows), "skills": len(o.Orders.Skills), "loads": len(o.Orders.Loads), "priority": len(o.Orders.Priority)} {
		if l != 0 && l != n {
			return nil, fmt.Errorf("overlay of %s: %d entries of orders.%s for %d customers", o.Base, l, name, n)
		}
	}
	nodes := append(append([]Node(nil), in.Nodes...), make([]Node, len(o.ExtraLocations))...)
	for i, xy := range o.ExtraLocations {
		nodes[n+1+i] = Node{ID: n + 1 + i, X: xy[0], Y: xy[1]}
	}
	base := (&Instance{Name: in.Name, Capacity: in.Capacity, Nodes: nodes}).Problem()
	p := &vrp.Problem{
		Orders: base.Orders[:n], Distance: base.Distance, Duration: base.Duration,
		Objective: vrp.ObjectiveDistance, Dimensions: o.Dimensions, ExtraLocations: len(o.ExtraLocations),
	}
	for i := range p.Orders {
		ord := &p.Orders[i]
		if i < len(o.Orders.Windows) && len(o.Orders.Windows[i]) > 0 {
			ws := o.Orders.Windows[i]
			ord.WindowStart, ord.WindowEnd = ws[0][0], ws[len(ws)-1][1]
			if len(ws) > 1 {
				for _, w := range ws {
					ord.Windows = append(ord.Windows, vrp.Window{Start: w[0], End: w[1]})
				}
			}
		}
		if i < len(o.Orders.Skills) {
			ord.Skills = o.Orders.Skills[i]
		}
		if i < len(o.Orders.Loads) {
			ord.Loads = o.Orders.Loads[i]
		}
		if i < len(o.Orders.Priority) {
			ord.Priority = o.Orders.Priority[i]
		}
	}
	extra := func(k int) int {
		if k == 0 {
			return 0
		}
		return n + k
	}
	depot := in.Nodes[0]
	for _, g := range o.Fleet {
		v := vrp.Vehicle{
			Capacity: float64(in.Capacity), ShiftStart: 10 * depot.Ready, ShiftEnd: 10 * depot.Due,
			Skills: g.Skills, Capacities: g.Capacities,
			MaxDuration: g.MaxDuration, MaxDistance: g.MaxDistance, MaxStops: g.MaxStops,
			Start: extra(g.Start), End: extra(g.End), OpenEnd: g.OpenEnd,
		}
		for _, b := range g.Breaks {
			v.Breaks = append(v.Breaks, vrp.Break{Start: b[0], End: b[1], Duration: b[2]})
		}
		for range g.Count {
			p.Vehicles = append(p.Vehicles, v)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("overlay of %s: %w", o.Base, err)
	}
	return p, nil
}

// Encode writes the overlay as JSON with one fleet group and one order
// per line, so that the committed files read and diff line by line.
func (o *Overlay) Encode(w io.Writer) error {
	var b bytes.Buffer
	field := func(name string, v any, last bool) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, " %q: %s", name, data)
		if !last {
			b.WriteString(",")
		}
		b.WriteString("\n")
		return nil
	}
	list := func(indent, name string, n int, item func(i int) any, last bool) error {
		fmt.Fprintf(&b, "%s%q: [", indent, name)
		for i := range n {
			data, err := json.Marshal(item(i))
			if err != nil {
				return err
			}
			sep := ","
			if i == n-1 {
				sep = ""
			}
			fmt.Fprintf(&b, "\n%s %s%s", indent, data, sep)
		}
		if n > 0 {
			b.WriteString("\n" + indent)
		}
		b.WriteString("]")
		if !last {
			b.WriteString(",")
		}
		b.WriteString("\n")
		return nil
	}
	b.WriteString("{\n")
	var errs []error
	errs = append(errs, field("format", o.Format, false), field("base", o.Base, false),
		field("feature", o.Feature, false), field("seed", o.Seed, false))
	if len(o.Dimensions) > 0 {
		errs = append(errs, field("dimensions", o.Dimensions, false))
	}
	if len(o.ExtraLocations) > 0 {
		errs = append(errs, field("extra_locations", o.ExtraLocations, false))
	}
	errs = append(errs, list(" ", "fleet", len(o.Fleet), func(i int) any { return o.Fleet[i] }, false))
	b.WriteString(" \"orders\": {\n")
	var arrays []func(last bool) error
	op := o.Orders
	if len(op.Windows) > 0 {
		arrays = append(arrays, func(last bool) error {
			return list("  ", "windows", len(op.Windows), func(i int) any { return op.Windows[i] }, last)
		})
	}
	if len(op.Skills) > 0 {
		arrays = append(arrays, func(last bool) error {
			return list("  ", "skills", len(op.Skills), func(i int) any { return op.Skills[i] }, last)
		})
	}
	if len(op.Loads) > 0 {
		arrays = append(arrays, func(last bool) error {
			return list("  ", "loads", len(op.Loads), func(i int) any { return op.Loads[i] }, last)
		})
	}
	if len(op.Priority) > 0 {
		arrays = append(arrays, func(last bool) error {
			return list("  ", "priority", len(op.Priority), func(i int) any { return op.Priority[i] }, last)
		})
	}
	for i, a := range arrays {
		errs = append(errs, a(i == len(arrays)-1))
	}
	b.WriteString(" }\n}\n")
	if err := errors.Join(errs...); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}
