//go:build !linux

package devplane

import (
	"context"
	"errors"
	"os"

	"github.com/go-logr/logr"
)

// Without Linux's parent-death signal and /proc, the binaries run directly
// and a killed routeopt dev's leftovers are for the user to end.

func lockDataDir(string) (*os.File, error) { return nil, nil }

func endLeftovers(context.Context, string, logr.Logger) error { return nil }

func writeLaunchers(*Plane, string) error { return nil }

func execChild(int, string, []string) error {
	return errors.New("dev-child needs Linux's parent-death signal")
}
