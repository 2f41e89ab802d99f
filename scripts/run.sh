#!/usr/bin/env bash
# Sets up and runs shardleaf on a fresh Debian machine with Node 20 + npm:
# npm ci, Redis and MariaDB on loopback (reused if running, else installed and started), the
# database and its user, build, migrations, a demo app (appId 1, 64 shards) and Leaf's example
# segment tag (leaf-segment-test), then the service. It is ready when /health/ready answers 200:
# the README's examples then answer as it shows (test/integration/operations/readme-examples.spec.ts).
# Every setting can be overridden by the environment (see README.md, "Configuration").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/services.sh

export PORT=${PORT:-8080}
export DATABASE_URL=${DATABASE_URL:-mysql://shardleaf:shardleaf@127.0.0.1:3306/shardleaf}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
export ADMIN_TOKEN=${ADMIN_TOKEN:-dev-admin-token}

ensure_npm_packages
ensure_redis
ensure_mariadb
db_name=$(node -e 'console.log(new URL(process.env.DATABASE_URL).pathname.slice(1))')
db_user=$(node -e 'console.log(decodeURIComponent(new URL(process.env.DATABASE_URL).username))')
db_pass=$(node -e 'console.log(decodeURIComponent(new URL(process.env.DATABASE_URL).password))')
log "database ${db_name}, user ${db_user}"
mysql_root -e "CREATE DATABASE IF NOT EXISTS \`${db_name}\` CHARACTER SET utf8mb4"
# In a GRANT, _ and % in a database name are wildcards: escaped, the grant is for this database only.
ensure_db_user "$(printf '%s' "$db_name" | sed 's/[_%]/\\&/g')" "$db_user" "$db_pass"

log "building"; npm run --silent build
log "applying migrations"
# TypeORM's CLI logs every SQL statement: show only which migrations ran, or everything on failure.
if ! migration_log=$(npm run --silent migration:run 2>&1); then
  printf '%s\n' "$migration_log" >&2
  exit 1
fi
printf '%s\n' "$migration_log" | grep -E 'executed successfully|No migrations are pending' || true
log "seeding the demo app (appId 1, 64 shards) and the segment tag leaf-segment-test if missing"
mysql_root "$db_name" -e "INSERT IGNORE INTO id_alloc (app_id, app_name, max_id, shard_id, step, description)
  SELECT 1, 'demo', 0, seq, 1000, 'demo app' FROM seq_0_to_63;
  INSERT IGNORE INTO leaf_alloc (biz_tag, max_id, step, description)
  VALUES ('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')"

node dist/src/main.js &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' INT TERM
# Ready when /health/ready answers 200 (asking for an ID here would take alice's first one).
wait_for 60 "shardleaf on port ${PORT}" curl -sf "http://127.0.0.1:${PORT}/health/ready" || { kill $pid; exit 1; }
cat >&2 <<MSG

  shardleaf is running on http://127.0.0.1:${PORT}  (Ctrl-C stops it)

  curl 'localhost:${PORT}/api/id/1?gatePass=alice'
  curl 'localhost:${PORT}/api/id/1?gatePass=alice&count=5'
  curl -H 'Authorization: Bearer ${ADMIN_TOKEN}' localhost:${PORT}/admin/apps/1

MSG
wait $pid
