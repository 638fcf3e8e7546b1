package ablation

import (
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	t.Cleanup(func() { _ = Set(nil) })
	if err := Set([]string{"genetic", "skip-tested"}); err != nil {
		t.Fatal(err)
	}
	if got := Get(); !got.NoGenetic || !got.RetestAll || got.NoRuinMutation {
		t.Fatalf("Get() = %+v", got)
	}
	err := Set([]string{"nope"})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "granular-growth") {
		t.Fatalf("unknown piece: %v", err)
	}
	if got := Get(); !got.NoGenetic {
		t.Fatalf("a failed Set changed the switches: %+v", got)
	}
	if err := Set(nil); err != nil || Get() != (Switches{}) {
		t.Fatalf("Set(nil): %v, %+v", err, Get())
	}
	if len(Names()) != strings.Count(Help(), "\n") {
		t.Fatalf("Names %v and Help %q disagree", Names(), Help())
	}
}
