#!/usr/bin/env bash
# ensure-node.sh MAJOR: prints the path of a Node MAJOR.x binary, fetching it once when missing.
# The machine's own node is used when it is that major. Otherwise the binary comes from the npm
# registry package node-linux-<arch>@MAJOR (the official build, unpacked with `npm pack`, no
# install scripts) into .ci/node<MAJOR>/ (git-ignored). Nothing is added to package.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
major=${1:?usage: ensure-node.sh MAJOR}

if [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  command -v node; exit 0
fi
dir=.ci/node$major
bin=$dir/bin/node
if [ -x "$bin" ] && [ "$("$bin" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = "$major" ]; then
  echo "$PWD/$bin"; exit 0
fi
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "ensure-node: no npm package of Node for $(uname -m)" >&2; exit 1 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "ensure-node: fetching node-linux-$arch@$major from the npm registry" >&2
npm pack --silent --pack-destination "$tmp" "node-linux-$arch@$major" >/dev/null
rm -rf "$dir"
mkdir -p "$dir/bin"
tar -xzf "$tmp"/node-linux-"$arch"-*.tgz -C "$dir" --strip-components=1 package/bin/node
"$bin" -e 'process.exit(0)'
echo "$PWD/$bin"
