// Package bench runs solver/vrp on Solomon and Gehring–Homberger VRPTW
// instances under the DIMACS convention (the sets and the convention are
// described in instances/README.md), checks every solution with a checker
// that shares no code with the solver's evaluation, and compares the
// distance with the best-known solutions. It also runs the feature sets,
// overlays that add one feature of real fleets to those instances
// (overlay.go, derived by derive.go), and checks their plans against
// every rule of the fleet model (CheckSolution).
package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"routeopt.io/routeopt/solver/vrp"
)

// Node is one data row of an instance: node 0 is the depot.
type Node struct {
	ID, X, Y, Demand, Ready, Due, Service int
}

// Instance is a parsed Solomon-format file, in the file's own units.
type Instance struct {
	Name     string
	Vehicles int // K, informative only under the DIMACS convention
	Capacity int // Q
	Nodes    []Node
}

// Customers is the number of customers (nodes without the depot).
func (in *Instance) Customers() int { return len(in.Nodes) - 1 }

// maxCoord bounds coordinates and times so that the scaled values (x10 and
// squared) cannot overflow and fit vrp.NoWindowEnd.
const maxCoord = 1_000_000

// ParseFS reads the instance file name of fsys: an embedded set of package
// instances or os.DirFS of a folder.
func ParseFS(fsys fs.FS, name string) (*Instance, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return in, nil
}

// Parse reads the Solomon text format: a name line, a VEHICLE section with K
// and Q, and a CUSTOMER section of rows of 7 integers, the depot (id 0)
// first and customers numbered 1..n in order. Lines may end in CRLF; blank
// lines (also ones holding only spaces) are ignored.
func Parse(r io.Reader) (*Instance, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	in := &Instance{}
	const (
		wantName = iota
		wantVehicleHeader
		wantVehicleColumns
		wantVehicleData
		wantCustomerHeader
		wantCustomerColumns
		wantRows
	)
	state, lineNo := wantName, 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(strings.TrimRight(sc.Text(), "\r"))
		if line == "" {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d: %s", lineNo, fmt.Sprintf(format, args...))
		}
		switch state {
		case wantName:
			in.Name = line
			state = wantVehicleHeader
		case wantVehicleHeader:
			if !strings.EqualFold(line, "VEHICLE") {
				return nil, fail("want VEHICLE, got %q", line)
			}
			state = wantVehicleColumns
		case wantVehicleColumns:
			if !strings.HasPrefix(strings.ToUpper(line), "NUMBER") {
				return nil, fail("want the NUMBER CAPACITY header, got %q", line)
			}
			state = wantVehicleData
		case wantVehicleData:
			v, err := ints(line, 2)
			if err != nil {
				return nil, fail("vehicle line: %v", err)
			}
			if v[0] <= 0 || v[1] <= 0 {
				return nil, fail("vehicle number %d and capacity %d must be > 0", v[0], v[1])
			}
			in.Vehicles, in.Capacity = v[0], v[1]
			state = wantCustomerHeader
		case wantCustomerHeader:
			if !strings.EqualFold(line, "CUSTOMER") {
				return nil, fail("want CUSTOMER, got %q", line)
			}
			state = wantCustomerColumns
		case wantCustomerColumns:
			if !strings.HasPrefix(strings.ToUpper(line), "CUST") {
				return nil, fail("want the CUST NO. header, got %q", line)
			}
			state = wantRows
		case wantRows:
			v, err := ints(line, 7)
			if err != nil {
				return nil, fail("customer row: %v", err)
			}
			nd := Node{ID: v[0], X: v[1], Y: v[2], Demand: v[3], Ready: v[4], Due: v[5], Service: v[6]}
			if nd.ID != len(in.Nodes) {
				return nil, fail("node id %d, want %d (depot 0, then customers in order)", nd.ID, len(in.Nodes))
			}
			for _, x := range v[1:] {
				if x < -maxCoord || x > maxCoord {
					return nil, fail("value %d out of range ±%d", x, maxCoord)
				}
			}
			if nd.Demand < 0 || nd.Ready < 0 || nd.Service < 0 || nd.Due < nd.Ready {
				return nil, fail("node %d: demand %d, window [%d, %d], service %d: want demand, ready, service >= 0 and due >= ready",
					nd.ID, nd.Demand, nd.Ready, nd.Due, nd.Service)
			}
			in.Nodes = append(in.Nodes, nd)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if state != wantRows || len(in.Nodes) == 0 {
		return nil, errors.New("incomplete instance: want a name, a VEHICLE section and a CUSTOMER section with the depot")
	}
	return in, nil
}

// ints parses exactly n whitespace-separated integers.
func ints(line string, n int) ([]int, error) {
	f := strings.Fields(line)
	if len(f) != n {
		return nil, fmt.Errorf("want %d integers, got %d fields in %q", n, len(f), line)
	}
	out := make([]int, n)
	for i, s := range f {
		x, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("field %d: %q is not an integer", i+1, s)
		}
		out[i] = x
	}
	return out, nil
}

// dimacsDist is the DIMACS distance (= travel time) between two nodes:
// floor(10 x Euclidean).
func dimacsDist(a, b Node) int {
	dx, dy := float64(10*(a.X-b.X)), float64(10*(a.Y-b.Y))
	return int(math.Floor(math.Sqrt(dx*dx + dy*dy)))
}

// Problem converts the instance to a vrp.Problem under the DIMACS
// convention: distance = time = floor(10 x Euclidean), times x 10,
// distance-only objective, and one identical vehicle per customer with no
// fixed cost so that the fleet never binds.
func (in *Instance) Problem() *vrp.Problem {
	n := len(in.Nodes)
	p := &vrp.Problem{Objective: vrp.ObjectiveDistance}
	p.Distance = make([][]int, n)
	for i := range n {
		p.Distance[i] = make([]int, n)
		for j := range n {
			p.Distance[i][j] = dimacsDist(in.Nodes[i], in.Nodes[j])
		}
	}
	p.Duration = p.Distance
	for _, nd := range in.Nodes[1:] {
		p.Orders = append(p.Orders, vrp.Order{
			Demand: float64(nd.Demand), ServiceS: 10 * nd.Service,
			WindowStart: 10 * nd.Ready, WindowEnd: 10 * nd.Due,
		})
	}
	depot := in.Nodes[0]
	for range max(1, n-1) {
		p.Vehicles = append(p.Vehicles, vrp.Vehicle{
			Capacity: float64(in.Capacity), ShiftStart: 10 * depot.Ready, ShiftEnd: 10 * depot.Due,
		})
	}
	return p
}
