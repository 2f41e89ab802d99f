#!/usr/bin/env bash
# Runs the fault suite N times in a row (default 10) and stops at the first failure: a flaky test
# is a defect to find, so one red run is enough to stop and look. Each run's output is kept in
# $CHAOS_LOOP_DIR (default /tmp/shardleaf-chaos-loop), with the durations in summary.txt.
#   bash scripts/chaos-loop.sh [N] [extra jest args, e.g. -t 5b]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
shift || true
out="${CHAOS_LOOP_DIR:-/tmp/shardleaf-chaos-loop}"
mkdir -p "$out"
: > "$out/summary.txt"
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  if npx jest --runInBand --selectProjects chaos "$@" > "$out/run-$i.log" 2>&1; then
    status=passed
  else
    status=FAILED
  fi
  line="run $i/$runs: $status in $(( $(date +%s) - start )) s"
  echo "$line" | tee -a "$out/summary.txt"
  if [ "$status" = FAILED ]; then
    tail -60 "$out/run-$i.log"
    exit 1
  fi
done
echo "all $runs runs passed" | tee -a "$out/summary.txt"
