package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseClock turns "HH:MM" into seconds since midnight.
func ParseClock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("time %q is not HH:MM", s)
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("time %q is not HH:MM", s)
	}
	return hh*3600 + mm*60, nil
}
