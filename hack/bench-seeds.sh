#!/usr/bin/env bash
# How often the solver misses a gap target over many seeds (figures in
# docs/PERFORMANCE.md, such as rc102's runs above 1 % at 1.5 s): runs
# `routeopt bench` once per seed, the seeds split over PROCS processes (one
# core each), and prints per instance the runs above ABOVE % and per seed the
# worst instance. A time-limited run is not reproducible, so every figure is
# a count over seeds. Within a process the random stream runs on from one
# file to the next, so a seed's plan for a file depends on the files before it.
#
# SET names the embedded set (routeopt bench --set, solomon by default);
# BENCH_DIR runs a folder of instance files instead.
#
#   INSTANCES=rc102 SEEDS=1-128 hack/bench-seeds.sh         # one file's tail
#   SEEDS=17-32 hack/bench-seeds.sh                         # all of Solomon
#   SET=gh200-sample LIMIT=5 SEEDS=1-8 hack/bench-seeds.sh  # 200 customers
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/.."
SET=${SET:-solomon}
BENCH_DIR=${BENCH_DIR:-}
if [ -n "$BENCH_DIR" ]; then
  SOURCE=(--dir "$BENCH_DIR") NAME=$BENCH_DIR
else
  SOURCE=(--set "$SET") NAME=$SET
fi
INSTANCES=${INSTANCES:-}
SEEDS=${SEEDS:-1-16}
LIMIT=${LIMIT:-1.5}   # seconds per instance
THREADS=${THREADS:-1}
ABOVE=${ABOVE:-1}     # gap target, percent
PROCS=${PROCS:-2}
BIN=${BIN:-bin/routeopt}
[ -n "${NO_BUILD:-}" ] || go build -o "$BIN" ./cmd/routeopt

if [[ ! $SEEDS =~ ^([0-9]+)-([0-9]+)$ ]] || ((BASH_REMATCH[1] > BASH_REMATCH[2])); then
  echo "SEEDS must be FROM-TO, FROM <= TO, not '$SEEDS'" >&2
  exit 2
fi
FROM=${BASH_REMATCH[1]} TO=${BASH_REMATCH[2]}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# Each process takes every PROCS-th seed. A plan that fails the checker makes
# bench exit non-zero; the process records that and goes on.
for ((p = 0; p < PROCS; p++)); do
  (
    for ((s = FROM + p; s <= TO; s += PROCS)); do
      "$BIN" bench "${SOURCE[@]}" --instances "$INSTANCES" --seconds "$LIMIT" \
        --threads "$THREADS" --seed "$s" --out "$OUT/seed-$s.csv" >/dev/null 2>"$OUT/seed-$s.err" ||
        echo "seed $s: $(tail -n 1 "$OUT/seed-$s.err")" >>"$OUT/failed"
    done
  ) &
done
wait
if [ -s "$OUT/failed" ]; then
  cat "$OUT/failed" >&2
  exit 1
fi

echo "$NAME ${INSTANCES:-(all)} at ${LIMIT} s, ${THREADS} thread(s), seeds $SEEDS, target ${ABOVE} %"
for ((s = FROM; s <= TO; s++)); do
  tail -n +2 "$OUT/seed-$s.csv" | sed "s/^/$s,/"
done | awk -F, -v above="$ABOVE" '
  # seed,instance,customers,routes,distance,bks,gap_pct,seconds,feasible
  {
    if (!($2 in n)) order[++k] = $2 # the files in bench order
    n[$2]++; sum[$2] += $7
    if ($7 > above) { miss[$2]++; at[$2] = at[$2] " " $1 }
    if (!($2 in worst) || $7 > worst[$2]) worst[$2] = $7
    if (!($1 in sworst) || $7 > sworst[$1]) { sworst[$1] = $7; sname[$1] = $2 }
  }
  END {
    printf "%-12s %6s %8s %9s %9s  %s\n", "instance", "runs", "above", "mean_gap", "worst", "seeds above"
    for (a = 1; a <= k; a++) {
      i = order[a]
      printf "%-12s %6d %8d %9.3f %9.3f %s\n", i, n[i], miss[i], sum[i] / n[i], worst[i], at[i]
    }
    if (k > 1) {
      met = 0; seeds = 0; total = 0
      for (s in sworst) { seeds++; total += sworst[s]; if (sworst[s] <= above) met++ }
      printf "seeds with the worst instance at or under %s %%: %d of %d; mean of the worst %.3f %%\n", above, met, seeds, total / seeds
    }
  }'
