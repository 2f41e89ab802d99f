#!/usr/bin/env bash
# Runs every test against real servers: makes sure Redis, MariaDB and ZooKeeper answer on
# loopback (installing/starting them when missing, never stopping running ones), installs Chromium
# for the dashboard's browser test, creates a test
# user that may create and drop the shardleaf_t_* databases, then type-check, lint and Jest.
#
#   bash scripts/test.sh          everything: every Jest project (unit, integration, chaos, container) on this
#                                 machine's node, then unit + integration again on each other Node
#                                 major in TEST_NODES (default "20 24"; binaries from the npm
#                                 registry via scripts/ci/ensure-node.sh); a summary per version
#   bash scripts/test.sh ARGS...  targeted: Jest with ARGS on this machine's node only
#   TEST_NODES=""                 this machine's node only
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/services.sh

ensure_npm_packages
ensure_redis
ensure_mariadb
bash scripts/ci/ensure-zookeeper.sh
bash scripts/ci/ensure-chromium.sh
# promtool (Debian's prometheus package) checks the /metrics output and the alerting rules: required.
command -v promtool >/dev/null 2>&1 || apt_install prometheus || true
command -v promtool >/dev/null 2>&1 || { log "promtool is required (Debian package prometheus)"; exit 1; }
ensure_db_user 'shardleaf\_t\_%' shardleaf_test shardleaf_test
export TEST_MYSQL_URL=${TEST_MYSQL_URL:-mysql://shardleaf_test:shardleaf_test@127.0.0.1:3306}
export TEST_REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/0}

log "type-check"; npm run --silent typecheck
log "lint"; npm run --silent lint
log "alerting rules (promtool check + test)"; bash scripts/ci/check-prometheus-rules.sh

# No --forceExit: Jest exits once every test closed what it opened; a leak shows as a run that does
# not end (find it with --detectOpenHandles) instead of being cut off.
if [ "$#" -gt 0 ]; then
  log "tests ($(node -v))"; exec node node_modules/jest/bin/jest.js --runInBand "$@"
fi

# Other Node majors: fetched before any test runs, so a missing binary fails fast.
own_major=$(node -p 'process.versions.node.split(".")[0]')
declare -a other_bins=()
for major in ${TEST_NODES-20 24}; do
  [ "$major" = "$own_major" ] && continue
  other_bins+=("$(bash scripts/ci/ensure-node.sh "$major")")
done

mkdir -p test-output
declare -a summary=()
total_passed=0 total_failed=0 status=0
# run_jest NODE_BINARY LABEL JEST_ARGS...: runs Jest under that binary (first on PATH too, so
# children started as `node` or process.execPath use it), records a summary line.
run_jest() {
  local bin=$1 label=$2; shift 2
  local version; version=$("$bin" -v)
  local out="test-output/jest-node${version#v}.json"
  rm -f "$out"
  log "tests on Node $version: $label"
  local rc=0
  PATH="$(dirname "$bin"):$PATH" "$bin" node_modules/jest/bin/jest.js --runInBand \
    --json --outputFile="$out" "$@" || rc=$?
  local counts="0 0 0"
  [ -f "$out" ] && counts=$(node -p "const r=require('./$out'); [r.numPassedTests, r.numFailedTests, r.numTotalTests].join(' ')")
  local passed failed total; read -r passed failed total <<<"$counts"
  total_passed=$((total_passed + passed)); total_failed=$((total_failed + failed))
  local verdict=PASS
  if [ "$rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$total" -eq 0 ]; then verdict=FAIL; status=1; fi
  summary+=("Node $version: $label $verdict ($passed passed, $failed failed of $total tests)")
}

run_jest "$(command -v node)" "every project (unit, integration, chaos, container)"
for bin in "${other_bins[@]}"; do
  run_jest "$bin" "unit+integration" --selectProjects unit integration
done

printf '\n==== test summary ====\n'
printf '%s\n' "${summary[@]}"
printf 'all: %d passed, %d failed\n' "$total_passed" "$total_failed"
exit "$status"
