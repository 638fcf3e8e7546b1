#!/usr/bin/env bash
# End-to-end time of a 500-order, 20-vehicle optimization in dev mode
# (figures in docs/PERFORMANCE.md): POST, then poll every 100 ms until
# completed; prints the wall time against solver_seconds.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/.."
SOLVER_SECONDS=${SOLVER_SECONDS:-5}
RUNS=${RUNS:-3}
make --no-print-directory build envtest >/dev/null
DATA=$(mktemp -d)
cleanup() { kill "${DEV_PID:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT
bin/routeopt dev --data-dir "$DATA" --listen 127.0.0.1:18090 >"$DATA/dev.log" 2>&1 &
DEV_PID=$!
until grep -q "is ready" "$DATA/dev.log"; do sleep 0.5; kill -0 $DEV_PID; done
KEY=$(cat "$DATA/api-key")
API=http://127.0.0.1:18090

# 500 orders over a 20 km city square, a third with 2-hour windows; 20 vans
# of three sizes.
orders=""
for i in $(seq 1 500); do
  lat=$(awk -v i="$i" 'BEGIN { srand(i); printf "%.5f", 52.42 + rand() * 0.18 }')
  lon=$(awk -v i="$i" 'BEGIN { srand(i * 7919); printf "%.5f", 13.25 + rand() * 0.30 }')
  window=""
  if [ $((i % 3)) -eq 0 ]; then
    start=$((8 + i % 8)); window=$(printf ',"time_window_start":"%02d:00","time_window_end":"%02d:00"' $start $((start + 2)))
  fi
  orders+=$(printf '{"id":"o%d","latitude":%s,"longitude":%s,"demand":%d%s},' "$i" "$lat" "$lon" $((1 + i % 4)) "$window")
done
vehicles=""
for v in $(seq 1 20); do
  vehicles+=$(printf '{"id":"van-%d","capacity":%d},' "$v" $((60 + (v % 3) * 20)))
done
body=$(printf '{"depot":{"latitude":52.52,"longitude":13.405},"orders":[%s],"vehicles":[%s],"options":{"solver_seconds":%d}}' "${orders%,}" "${vehicles%,}" "$SOLVER_SECONDS")

for run in $(seq 1 "$RUNS"); do
  start=$(date +%s.%N)
  id=$(curl -sf -X POST "$API/v1/optimizations" -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    -H "Idempotency-Key: bench-pipeline-$$-$run" -d "$body" | sed -E 's/.*"id":"([^"]+)".*/\1/')
  while :; do
    status=$(curl -sf "$API/v1/optimizations/$id" -H "Authorization: Bearer $KEY" | sed -E 's/.*"status":"([^"]+)".*/\1/')
    [ "$status" = completed ] || [ "$status" = failed ] && break
    sleep 0.1
  done
  end=$(date +%s.%N)
  kpis=$(curl -sf "$API/v1/optimizations/$id/result" -H "Authorization: Bearer $KEY" | grep -oE '"orders_assigned":[0-9]+|"distance_m":[0-9]+|"vehicles_used":[0-9]+' | head -3 | tr '\n' ' ')
  printf 'run %d: %s in %.2f s (solver_seconds %d, budget %d s): %s\n' "$run" "$status" "$(echo "$end - $start" | bc)" "$SOLVER_SECONDS" $((SOLVER_SECONDS + 2)) "$kpis"
done
