#!/usr/bin/env bash
# Checks the Prometheus alerting rules (syntax, then a unit test per alert). Needs promtool
# (Debian's `prometheus` package; scripts/test.sh installs it). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../../deploy/prometheus"
promtool check rules shardleaf.rules.yml
promtool test rules shardleaf.rules.test.yml
