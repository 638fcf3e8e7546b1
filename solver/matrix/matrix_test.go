package matrix

import (
	"context"
	"math"
	"testing"
)

func TestGreatCircleMetres(t *testing.T) {
	tests := map[string]struct {
		a, b Point
		want float64 // metres
		tol  float64
	}{
		"same point":          {Point{52.52, 13.405}, Point{52.52, 13.405}, 0, 0.001},
		"one degree latitude": {Point{0, 0}, Point{1, 0}, 111195, 5},
		"paris to london":     {Point{48.8566, 2.3522}, Point{51.5074, -0.1278}, 343500, 1500},
		"antipodes":           {Point{0, 0}, Point{0, 180}, math.Pi * earthRadiusM, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := GreatCircleMetres(tc.a, tc.b)
			if math.Abs(got-tc.want) > tc.tol {
				t.Fatalf("GreatCircleMetres = %.1f, want %.1f ± %.1f", got, tc.want, tc.tol)
			}
		})
	}
}

func TestHaversineMatrix(t *testing.T) {
	pts := []Point{{0, 0}, {0.1, 0}, {0.1, 0.1}}
	m, err := Haversine{}.Matrix(context.Background(), pts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pts {
		if m.Distance[i][i] != 0 || m.Duration[i][i] != 0 {
			t.Fatalf("diagonal %d not zero", i)
		}
		for j := range pts {
			if m.Distance[i][j] != m.Distance[j][i] {
				t.Fatalf("distance not symmetric at %d,%d", i, j)
			}
		}
	}
	// 0.1° of latitude is about 11.12 km; times the circuity 1.3 is about 14.46 km,
	// and at 30 km/h about 1735 s.
	if d := m.Distance[0][1]; d < 14400 || d > 14500 {
		t.Fatalf("distance 0->1 = %d m, want about 14455", d)
	}
	if s := m.Duration[0][1]; s < 1725 || s > 1745 {
		t.Fatalf("duration 0->1 = %d s, want about 1735", s)
	}
	if _, err := (Haversine{Circuity: 0.5}).Matrix(context.Background(), pts); err == nil {
		t.Fatal("circuity below 1 accepted")
	}
}
