// Package matrix builds travel matrices (metres and seconds between every pair
// of points) for the solver. Haversine is the embedded default; road-network
// providers implement the same interface.
package matrix

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Point is a WGS 84 coordinate in degrees.
type Point struct {
	Lat, Lon float64
}

// Matrix holds integer distances (metres) and durations (seconds) between
// points; Distance[i][j] is from point i to point j.
type Matrix struct {
	Distance [][]int
	Duration [][]int
	// Geometry, when a provider knows road shapes, returns the points of the
	// road path through the given points in order (for a route: depot, its
	// stops, depot); nil means straight legs. Callers may fall back to
	// straight legs when it fails.
	Geometry func(ctx context.Context, path []Point) ([]Point, error)
	// Estimated lists the pairs [i, j], sorted, that the provider could not
	// route (for OSRM: null table cells) and filled with a Haversine
	// estimate instead; nil when every pair was routed.
	Estimated [][2]int
}

// Provider computes a Matrix for a list of points.
type Provider interface {
	Matrix(ctx context.Context, points []Point) (*Matrix, error)
}

// ErrUnavailable wraps failures to reach a matrix service at all.
var ErrUnavailable = errors.New("matrix service unavailable")

// earthRadiusM is the mean Earth radius used by the great-circle formula.
const earthRadiusM = 6371008.8

// Haversine estimates road travel from great-circle distance. Roads are
// longer than the straight line, so distance is multiplied by Circuity;
// duration assumes a constant average SpeedKmh. The defaults (1.3, 30 km/h)
// are typical of urban delivery and keep plans plausible without a road
// network.
type Haversine struct {
	// Circuity multiplies the great-circle distance; 1.3 when zero.
	Circuity float64
	// SpeedKmh is the average driving speed; 30 when zero.
	SpeedKmh float64
}

// DefaultCircuity and DefaultSpeedKmh are the Haversine defaults.
const (
	DefaultCircuity = 1.3
	DefaultSpeedKmh = 30
)

// Matrix implements Provider. It never fails for valid coordinates; O(n²).
func (h Haversine) Matrix(ctx context.Context, points []Point) (*Matrix, error) {
	circuity, speed := h.Circuity, h.SpeedKmh
	if circuity == 0 {
		circuity = DefaultCircuity
	}
	if speed == 0 {
		speed = DefaultSpeedKmh
	}
	if circuity < 1 || speed <= 0 {
		return nil, fmt.Errorf("haversine: circuity %v must be >= 1 and speed %v > 0", circuity, speed)
	}
	n := len(points)
	dist := make([][]int, n)
	dur := make([][]int, n)
	metresPerSecond := speed * 1000 / 3600
	for i := range points {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		dist[i] = make([]int, n)
		dur[i] = make([]int, n)
		for j := range points {
			if i == j {
				continue
			}
			d := GreatCircleMetres(points[i], points[j]) * circuity
			dist[i][j] = int(math.Round(d))
			dur[i][j] = int(math.Round(d / metresPerSecond))
		}
	}
	return &Matrix{Distance: dist, Duration: dur}, nil
}

// GreatCircleMetres is the haversine distance between a and b.
func GreatCircleMetres(a, b Point) float64 {
	const rad = math.Pi / 180
	lat1, lat2 := a.Lat*rad, b.Lat*rad
	dLat := (b.Lat - a.Lat) * rad
	dLon := (b.Lon - a.Lon) * rad
	s := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1)*math.Cos(lat2)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadiusM * math.Asin(math.Min(1, math.Sqrt(s)))
}
