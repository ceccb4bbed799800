# Sourced by .ci/run and scripts/test-full.sh: timed steps and test passes, and the closing summary
# (scripts/ci-report.mjs: each pass's counts and ten slowest files, each step's wall time).
# Needs LOGS (a directory for the logs and timings) set by the caller.
STEPS="$LOGS/steps.tsv"
PASSES=()

summary() {
  node scripts/ci-report.mjs --steps "$STEPS" "${PASSES[@]}" || true
}

# step NAME COMMAND...: runs it, records its wall time and exit code, returns its exit code.
step() {
  local name=$1 start rc tenths
  shift
  echo "== $name"
  start=$(date +%s%N)
  set +e
  "$@"
  rc=$?
  set -e
  tenths=$((($(date +%s%N) - start) / 100000000))
  printf '%s\t%d.%d\t%s\n' "$name" $((tenths / 10)) $((tenths % 10)) "$rc" >>"$STEPS"
  echo "   ($name: $((tenths / 10)).$((tenths % 10)) s, exit $rc)"
  return "$rc"
}

# test_pass NAME COMMAND...: a step that runs vitest with SVC_TEST_TIMINGS set, its log kept, then
# the pass's counts and slowest files.
test_pass() {
  local name=$1 slug rc=0
  shift
  slug=$(echo "$name" | tr -c 'A-Za-z0-9\n' '-' | cut -c1-40)
  local timings="$LOGS/$slug.json"
  PASSES+=("$timings")
  SVC_TEST_TIMINGS="$timings" step "$name" "$@" 2>&1 | tee "$LOGS/$slug.log" || rc=$?
  node scripts/ci-report.mjs "$timings"
  return "$rc"
}
