#!/usr/bin/env bash
# Makes sure a ZooKeeper answers on 127.0.0.1:${ZK_PORT:-2181}. Idempotent: does nothing when one
# already answers; otherwise installs the Debian package `zookeeper` when it is missing and starts
# a standalone server with its own config and data dir (not the package's service).
#   ZK_PORT      client port (default 2181)
#   ZK_HOME_DIR  config, data and log dir of the server started here (default /var/tmp/shardleaf-zookeeper)
set -euo pipefail

PORT="${ZK_PORT:-2181}"
HOME_DIR="${ZK_HOME_DIR:-/var/tmp/shardleaf-zookeeper}"
ZK_BIN=/usr/share/zookeeper/bin/zkServer.sh

answers() {
  # Four-letter word over bash's /dev/tcp: `ruok` → imok, or `srvr` (always whitelisted).
  local reply
  for word in ruok srvr; do
    reply="$(timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/${PORT}; printf '%s' ${word} >&3; cat <&3" 2>/dev/null || true)"
    if [[ "${reply}" == *imok* || "${reply}" == *"Zookeeper version"* ]]; then
      return 0
    fi
  done
  return 1
}

if answers; then
  echo "ZooKeeper answers on 127.0.0.1:${PORT}"
  exit 0
fi

if [[ ! -x "${ZK_BIN}" ]]; then
  echo "installing the Debian package zookeeper"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq zookeeper >/dev/null
fi
if ! command -v java >/dev/null 2>&1; then
  echo "java is missing: install a JRE (e.g. apt-get install -y default-jre-headless)" >&2
  exit 1
fi

mkdir -p "${HOME_DIR}/conf" "${HOME_DIR}/data" "${HOME_DIR}/logs"
cat >"${HOME_DIR}/conf/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=${HOME_DIR}/data
clientPort=${PORT}
clientPortAddress=127.0.0.1
maxClientCnxns=200
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
CFG
if [[ -f /etc/zookeeper/conf/log4j.properties ]]; then
  cp /etc/zookeeper/conf/log4j.properties "${HOME_DIR}/conf/"
fi
for f in /etc/zookeeper/conf/logback.xml /etc/zookeeper/conf/environment; do
  if [[ -f "${f}" ]]; then
    cp "${f}" "${HOME_DIR}/conf/"
  fi
done

echo "starting ZooKeeper on 127.0.0.1:${PORT} (dir ${HOME_DIR})"
ZOOCFGDIR="${HOME_DIR}/conf" ZOO_LOG_DIR="${HOME_DIR}/logs" ZOOPIDFILE="${HOME_DIR}/zookeeper.pid" \
  "${ZK_BIN}" start "${HOME_DIR}/conf/zoo.cfg" >"${HOME_DIR}/logs/start.out" 2>&1 || true

for _ in $(seq 1 60); do
  if answers; then
    echo "ZooKeeper answers on 127.0.0.1:${PORT}"
    exit 0
  fi
  sleep 1
done
echo "ZooKeeper did not answer on 127.0.0.1:${PORT} within 60 s; see ${HOME_DIR}/logs" >&2
tail -n 30 "${HOME_DIR}/logs/start.out" "${HOME_DIR}"/logs/*.log 2>/dev/null >&2 || true
exit 1
