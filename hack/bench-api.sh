#!/usr/bin/env bash
# Load test of the REST API (figures in docs/PERFORMANCE.md).
#
# A separate `routeopt api` process (slim informer cache) serves in front of
# dev mode's control plane with the controllers off, so no solve competes for
# the CPU; wrk (Debian package `wrk`) drives it from another process over
# loopback. Steps: creates with 10-order bodies, creates with 500-order bodies
# until 2,000 are stored, then GET of one record and of the list, then the API
# process's RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-16}
STORED=${STORED:-2000}
command -v wrk >/dev/null || { echo "needs wrk: apt-get install -y wrk" >&2; exit 1; }
make --no-print-directory build envtest >/dev/null

DATA=$(mktemp -d)
cleanup() { kill "${API_PID:-}" "${DEV_PID:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"; }
trap cleanup EXIT
bin/routeopt dev --controllers=false --data-dir "$DATA" --listen 127.0.0.1:18080 >"$DATA/dev.log" 2>&1 &
DEV_PID=$!
until grep -q "is ready" "$DATA/dev.log"; do sleep 0.5; kill -0 $DEV_PID; done
export KEY; KEY=$(cat "$DATA/api-key")
export ORDERS NONCE
bin/routeopt api --kubeconfig "$DATA/kubeconfig" --listen 127.0.0.1:18081 --rate-limit 0 >"$DATA/api.log" 2>&1 &
API_PID=$!
until curl -sf http://127.0.0.1:18081/healthz >/dev/null; do sleep 0.2; kill -0 $API_PID; done
API=http://127.0.0.1:18081
rss() { awk '/VmRSS/ {printf "%.1f MB", $2/1024}' /proc/$API_PID/status; }
stored() { curl -s "$API/v1/optimizations?page_size=1" -H "Authorization: Bearer $KEY" | grep -oE '"total":[0-9]+' | cut -d: -f2 || echo 0; }

echo "== create, 10-order bodies ($DURATION, $CONNECTIONS connections)"
ORDERS=10 NONCE=c10-$$ wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s hack/bench/create.lua "$API" | grep -E "Requests/sec|50%|90%|99%|Non-2xx|requests in"
n10=$(stored)
for c in 4 $CONNECTIONS; do
  echo "== create, 500-order bodies ($DURATION, $c connections)"
  ORDERS=500 NONCE=c500-$$-$c wrk -t2 -c"$c" -d"$DURATION" --latency -s hack/bench/create.lua "$API" | grep -E "Requests/sec|50%|90%|99%|Non-2xx|requests in"
done
echo "== seeding until $STORED 500-order optimizations are stored (4 connections)"
round=0
while [ "$(stored)" -lt $((n10 + STORED)) ]; do
  round=$((round + 1))
  ORDERS=500 NONCE=seed-$$-$round wrk -t2 -c4 -d10s -s hack/bench/create.lua "$API" >/dev/null
done
echo "stored: $(stored) ($n10 with 10 orders); API RSS: $(rss)"
ID=$(curl -s "$API/v1/optimizations?page_size=1" -H "Authorization: Bearer $KEY" | grep -oE '"id":"[^"]+"' | head -1 | cut -d'"' -f4)
export PATH_TO_GET
for c in 2 4 $CONNECTIONS; do
  echo "== GET one record ($DURATION, $c connections)"
  PATH_TO_GET=/v1/optimizations/$ID
  wrk -t2 -c"$c" -d"$DURATION" --latency -s hack/bench/get.lua "$API" | grep -E "Requests/sec|50%|90%|99%|Non-2xx|requests in"
  echo "== GET the list, page_size=25 ($DURATION, $c connections)"
  PATH_TO_GET="/v1/optimizations?page=1&page_size=25"
  wrk -t2 -c"$c" -d"$DURATION" --latency -s hack/bench/get.lua "$API" | grep -E "Requests/sec|50%|90%|99%|Non-2xx|requests in"
done
echo "API RSS after the run: $(rss)"
