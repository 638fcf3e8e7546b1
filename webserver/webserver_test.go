package webserver

import (
	"regexp"
	"testing"
)

func TestOptimizationIDIsDeterministicPerTenant(t *testing.T) {
	a := OptimizationID("tenant-a", "key-12345678")
	if a != OptimizationID("tenant-a", "key-12345678") {
		t.Fatal("same tenant and key gave different ids")
	}
	if a == OptimizationID("tenant-b", "key-12345678") || a == OptimizationID("tenant-a", "key-12345679") {
		t.Fatal("different tenant or key gave the same id")
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(a) {
		t.Fatalf("%q is not a UUIDv5", a)
	}
}
