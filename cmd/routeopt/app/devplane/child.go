package devplane

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// ChildCommand is the routeopt subcommand the launchers run.
const ChildCommand = "dev-child"

// ChildUsage describes ChildCommand's arguments.
const ChildUsage = ChildCommand + " --parent PID --record FILE -- BINARY [ARG...]"

// RunChild is `routeopt dev-child`: it arms the parent-death signal, makes
// sure routeopt dev (--parent) is still its parent, records its process in
// --record and executes BINARY with ARGs in its own place. It returns only
// on failure.
func RunChild(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet(ChildCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	parent := fs.Int("parent", 0, "pid of the routeopt dev this process must die with")
	record := fs.String("record", "", "file that records this process for the next start of the same data dir")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := fs.Args()
	if *parent <= 0 || *record == "" || len(argv) == 0 || !strings.HasPrefix(argv[0], "/") {
		return errors.New("usage: routeopt " + ChildUsage + " (BINARY absolute)")
	}
	if err := execChild(*parent, *record, argv); err != nil {
		return fmt.Errorf("unable to run %s: %w", argv[0], err)
	}
	return nil
}
