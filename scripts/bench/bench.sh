#!/usr/bin/env bash
# `npm run bench [-- --quick | --runs N | --duration S | --only a,b | --load autocannon,wrk | --profile DIR | --keep-db]`
# Makes sure Redis and MariaDB answer (as scripts/test.sh does), installs wrk (Debian's package) when
# it is missing and can be installed (else the bench runs with autocannon alone), gives the bench a
# MariaDB user of its own (allowed on the shardleaf_bench database only) unless BENCH_MYSQL_URL is
# set, then runs scripts/bench/index.ts, which builds dist/ if stale and prints the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/services.sh

if [ ! -d node_modules ]; then log "installing npm packages"; npm ci --no-audit --no-fund; fi
ensure_redis
ensure_mariadb
# wrk: the second load generator (C, one thread); BENCH_NO_WRK=1 skips installing it.
if ! command -v wrk >/dev/null 2>&1 && [ -z "${BENCH_NO_WRK:-}" ]; then
  log "installing wrk (Debian package) as the second load generator"
  apt_install wrk || log "could not install wrk: measuring with autocannon only"
fi
if [ -z "${BENCH_MYSQL_URL:-}" ]; then
  if ! mariadb -h127.0.0.1 -P3306 -ushardleaf_bench -pshardleaf_bench -e 'SELECT 1' >/dev/null 2>&1; then
    ensure_db_user 'shardleaf\_bench' shardleaf_bench shardleaf_bench
  fi
  export BENCH_MYSQL_URL=mysql://shardleaf_bench:shardleaf_bench@127.0.0.1:3306
fi
exec node -r ts-node/register/transpile-only scripts/bench/index.ts "$@"
