# Shared shell functions: make sure Redis and MariaDB answer on loopback, installing and starting
# them from Debian's packages when they are missing. Never stops or reconfigures a running server.
# Sourced by scripts/run.sh and scripts/test.sh.

log() { printf '\033[1;34m[shardleaf]\033[0m %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

APT_UPDATED=0
apt_install() {
  if [ "$APT_UPDATED" -eq 0 ]; then as_root apt-get update -qq; APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq 1 "$((seconds * 4))"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.25
  done
  log "$what did not come up within ${seconds}s"; return 1
}

# npm ci when node_modules is missing or was installed from another package-lock.json. Compared by
# content (a stamp of the lock's hash written after each install), not by file times: a fresh
# checkout or git worktree has a newer lock file than any node_modules, and an `npm ci` through a
# node_modules shared by symlink empties the other checkout's copy. A tree without a stamp
# (installed by `.ci/run`, by hand, or before stamps) falls back to the file times once, then is
# stamped.
ensure_npm_packages() {
  local stamp=node_modules/.shardleaf-lock.sha256 want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -f node_modules/.package-lock.json ]; then
    if [ -f "$stamp" ]; then
      [ "$(cat "$stamp")" = "$want" ] && return
    elif [ ! package-lock.json -nt node_modules/.package-lock.json ]; then
      printf '%s\n' "$want" >"$stamp"; return
    fi
  fi
  # A node_modules that is a link into another checkout (a git worktree sharing one install) is
  # never reinstalled from here: npm ci would empty the other checkout's tree under its feet.
  if [ -L node_modules ]; then
    log "node_modules is a link ($(readlink node_modules)): not reinstalling it from here; run npm ci in the checkout it points to"
    return
  fi
  log "installing npm packages"; npm ci --no-audit --no-fund
  printf '%s\n' "$want" >"$stamp"
}

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

ensure_redis() {
  if command -v redis-cli >/dev/null 2>&1 && redis_up; then log "Redis answers on 127.0.0.1:6379"; return; fi
  if ! command -v redis-server >/dev/null 2>&1; then log "installing redis-server"; apt_install redis-server redis-tools; fi
  log "starting Redis on 127.0.0.1:6379"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/shardleaf.log
  wait_for 20 Redis redis_up
}

# Root access to MariaDB: Debian's root logs in over the unix socket; some machines allow TCP.
mysql_root() {
  if mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1; then mariadb -uroot "$@"; return; fi
  if mariadb -h127.0.0.1 -P3306 -uroot -e 'SELECT 1' >/dev/null 2>&1; then mariadb -h127.0.0.1 -P3306 -uroot "$@"; return; fi
  as_root mariadb -uroot "$@"
}

mariadb_up() { mysql_root -e 'SELECT 1'; }

ensure_mariadb() {
  if command -v mariadb >/dev/null 2>&1 && mariadb_up >/dev/null 2>&1; then log "MariaDB answers"; return; fi
  if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
    log "installing mariadb-server"; apt_install mariadb-server mariadb-client
  fi
  log "starting MariaDB"
  as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld 2>/dev/null || true
  as_root service mariadb start >/dev/null 2>&1 ||
    as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
  wait_for 60 MariaDB mariadb_up
}

# ensure_db_user DATABASE_PATTERN USER PASSWORD: a user that logs in over TCP from loopback
# (Debian's root cannot), with every privilege on the matching databases.
ensure_db_user() {
  local pattern=$1 user=$2 password=$3
  mysql_root <<SQL
CREATE USER IF NOT EXISTS '${user}'@'127.0.0.1' IDENTIFIED BY '${password}';
CREATE USER IF NOT EXISTS '${user}'@'localhost' IDENTIFIED BY '${password}';
GRANT ALL PRIVILEGES ON \`${pattern}\`.* TO '${user}'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`${pattern}\`.* TO '${user}'@'localhost';
FLUSH PRIVILEGES;
SQL
}
