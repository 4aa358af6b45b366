#!/usr/bin/env bash
# npm test (the README's test command) on another Node.js major, by default the active LTS (26).
# The machine's own Node is older; this Node comes from the npm registry's node-linux-<arch>
# package, unpacked into a temporary folder and put first on PATH for this run only.
# Usage: bash .ci/other-node.sh [major]
set -euo pipefail
cd "$(dirname "$0")/.."

major="${1:-26}"
if [ "$(uname -s)" != Linux ]; then
  echo "other-node.sh unpacks a node-linux package: Linux only, not $(uname -s)" >&2
  exit 1
fi
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *)
    echo "no node-linux package for $(uname -m)" >&2
    exit 1
    ;;
esac
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && npm pack --silent "node-linux-$arch@$major" >/dev/null && tar xzf node-linux-*.tgz)
export PATH="$dir/package/bin:$PATH"
echo "node $(node --version)"
npm test
