#!/usr/bin/env bash
# Makes sure /usr/bin/chromium exists (the dashboard's browser test drives it with playwright-core).
# Idempotent: does nothing when Chromium is already installed. Debian/Ubuntu (apt-get), as root or with sudo.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
echo "ensure-chromium: installing the Debian chromium package" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
test -x /usr/bin/chromium
