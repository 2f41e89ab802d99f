#!/usr/bin/env bash
# Runs every test against real servers: makes sure Redis, MariaDB and ZooKeeper answer on
# loopback (installing/starting them when missing, never stopping running ones), installs Chromium
# for the dashboard's browser test, creates a test
# user that may create and drop the shardleaf_t_* databases, then type-check, lint and Jest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/services.sh

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages"; npm ci --no-audit --no-fund
fi
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
log "tests"; npx jest --runInBand --forceExit "$@"
