#!/usr/bin/env bash
# npm run test:full (docs/testing.md): everything CI leaves out. Every test file on PGlite (this
# machine's Node), every test file on PostgreSQL (DATABASE_URL, default the local server CI uses),
# every test file on Node 24 (scripts/node24.sh), the MCP conformance suite on that Node 24 (`npm run
# conformance`), then the bench (`npm run bench -- --quick`, as CI ran
# it before it kept only the compiler's line). Each pass runs even when an earlier one failed; the
# exit code says whether all passed. Each pass's slowest files and each step's time close the log.
set -euo pipefail
cd "$(dirname "$0")/.."
PG_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
unset DATABASE_URL
LOGS=${SVC_TEST_FULL_LOGS:-$(mktemp -d)}
mkdir -p "$LOGS"
source scripts/ci-steps.sh
trap summary EXIT
echo "logs and timings: $LOGS"

failed=0
step "tsc --noEmit" npx tsc --noEmit || failed=1
step "tsc of the stock API fixture (npm run typecheck:stock)" npm run typecheck:stock || failed=1
test_pass "full: every file on PGlite" npx vitest run || failed=1
test_pass "full: every file on PostgreSQL" env DATABASE_URL="$PG_URL" npx vitest run || failed=1
node24() { NODE24_BIN=$(bash scripts/node24.sh); }
if step "Node 24 from the npm registry (scripts/node24.sh)" node24; then
  test_pass "full: every file on Node 24" env PATH="$NODE24_BIN:$PATH" npx vitest run || failed=1
  step "MCP conformance (npm run conformance, on Node 24)" env PATH="$NODE24_BIN:$PATH" npm run conformance || failed=1
else
  failed=1
fi
step "bench (npm run bench -- --quick, PostgreSQL sections included)" env DATABASE_URL="$PG_URL" npm run bench -- --quick || failed=1
exit "$failed"
