#!/usr/bin/env bash
# Runs every Go fuzz target of the module (each `func FuzzXxx(f *testing.F)`
# in a *_test.go file) for FUZZTIME, one after another: `go test -fuzz`
# takes one target per package and run. Prints per target its executions
# and whether it found a crash; go test leaves a crash's input in the
# package's testdata/fuzz/FuzzXxx/, where plain `go test` replays it from
# then on. Exits non-zero when any target crashed or did not run.
#
#   FUZZTIME=30s hack/fuzz.sh                     # every target
#   FUZZ='Export|Signature' hack/fuzz.sh          # targets whose name matches
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
FUZZ=${FUZZ:-.}
FUZZFLAGS=${FUZZFLAGS:-}
LOGDIR=${LOGDIR:-$(mktemp -d)}
mkdir -p "$LOGDIR"

# package directory and target name, one pair a line, by package.
targets=$(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -oE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' |
  sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#; s#^[^/ ]*_test\.go:func (Fuzz[A-Za-z0-9_]+).*#. \1#' |
  awk -v re="$FUZZ" '$2 ~ re' | sort -s -k1,1)
if [ -z "$targets" ]; then
  echo "no fuzz target matches '$FUZZ'" >&2
  exit 2
fi

failed=0
results=()
while read -r dir name; do
  log="$LOGDIR/$(echo "$dir" | tr / _)-$name.log"
  echo "== $dir $name ($FUZZTIME)"
  status=0
  # shellcheck disable=SC2086 # FUZZFLAGS holds several flags
  go test "./$dir" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" $FUZZFLAGS >"$log" 2>&1 || status=$?
  # Go 1.26's fuzzing coordinator can fail a target at the end of
  # -fuzztime with a bare "context deadline exceeded" and no input
  # (go.dev/issue/75804, fixed in Go 1.27): nothing was found, so the
  # target runs once more; a second such end counts as no crash.
  deadline_race() { ! grep -q 'testdata/fuzz/' "$log" && grep -A1 -- '^--- FAIL' "$log" | grep -qx '    context deadline exceeded'; }
  raced=0
  if [ "$status" -ne 0 ] && deadline_race; then
    echo "   the fuzzer's own deadline error (go.dev/issue/75804), no input: once more"
    status=0
    # shellcheck disable=SC2086
    go test "./$dir" -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" $FUZZFLAGS >"$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ] && deadline_race; then
      status=0
      raced=1
    fi
  fi
  # The last progress line, "fuzz: elapsed: 30s, execs: 123456 (4115/sec), new interesting: ...".
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  reproducer=$(grep -oE 'testdata/fuzz/[^ ]+' "$log" | head -1 || true)
  if [ "$status" -eq 0 ] && [ "$raced" -eq 1 ]; then
    result="ok (ended by the fuzzer's deadline error twice, no input)"
  elif [ "$status" -eq 0 ]; then
    result="ok"
  elif [ -n "$reproducer" ]; then
    result="CRASH: reproducer $dir/$reproducer"
    failed=1
  else
    result="FAILED (exit $status, see $log)"
    failed=1
  fi
  [ "$status" -eq 0 ] || grep -E -- '--- FAIL|fuzz_test.go|_test.go:[0-9]+:' "$log" | head -8 || true
  results+=("$(printf '%-34s %-28s %12s  %s' "$dir" "$name" "${execs:-0}" "$result")")
done <<<"$targets"

echo
printf '%-34s %-28s %12s  %s\n' package target execs result
printf '%s\n' "${results[@]}"
echo "logs: $LOGDIR"
exit "$failed"
