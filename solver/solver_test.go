package solver

import (
	"testing"
)

func TestParseClock(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    int
		wantErr bool
	}{
		"midnight":       {"00:00", 0, false},
		"eight":          {"08:00", 28800, false},
		"last minute":    {"23:59", 86340, false},
		"hour 24":        {"24:00", 0, true},
		"minute 60":      {"10:60", 0, true},
		"one digit hour": {"8:00", 0, true},
		"no colon":       {"0800", 0, true},
		"empty":          {"", 0, true},
		"seconds":        {"08:00:00", 0, true},
		"sign":           {"-1:00", 0, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseClock(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("ParseClock(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestFormatDistance(t *testing.T) {
	for in, want := range map[int64]string{0: "0m", 999: "999m", 1000: "1.0km", 25405: "25.4km", 123456789: "123456.8km"} {
		if got := FormatDistance(in); got != want {
			t.Errorf("FormatDistance(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultSolverSeconds(t *testing.T) {
	for orders, want := range map[int]int{1: 2, 49: 2, 50: 3, 250: 7, 500: 12, 1000: 15} {
		if got := DefaultSolverSeconds(orders); got != want {
			t.Errorf("DefaultSolverSeconds(%d) = %d, want %d", orders, got, want)
		}
	}
}
