#!/bin/bash
# Initialises the data directory on first start, then runs mariadbd in the foreground (PID 1 via
# exec, so `podman stop` reaches it) with an init file creating the database and user.
set -euo pipefail
: "${MARIADB_DATABASE:=shardleaf}" "${MARIADB_USER:=shardleaf}" "${MARIADB_PASSWORD:=shardleaf}"
sql_quote() { printf "'%s'" "${1//\'/\'\'}"; }
if [ ! -d /var/lib/mysql/mysql ]; then
  mariadb-install-db --user=mysql --datadir=/var/lib/mysql --skip-test-db --auth-root-authentication-method=socket >/dev/null
fi
chown -R mysql:mysql /var/lib/mysql /run/mysqld
init=/run/mysqld/init.sql
cat >"$init" <<SQL
CREATE DATABASE IF NOT EXISTS \`${MARIADB_DATABASE//\`/}\` CHARACTER SET utf8mb4;
CREATE USER IF NOT EXISTS $(sql_quote "$MARIADB_USER")@'%' IDENTIFIED BY $(sql_quote "$MARIADB_PASSWORD");
GRANT ALL PRIVILEGES ON \`${MARIADB_DATABASE//\`/}\`.* TO $(sql_quote "$MARIADB_USER")@'%';
SQL
chown mysql:mysql "$init"; chmod 600 "$init"
exec mariadbd --user=mysql --datadir=/var/lib/mysql --bind-address=0.0.0.0 --skip-name-resolve \
  --character-set-server=utf8mb4 --init-file="$init" "$@"
