#!/usr/bin/env bash
# Integration test runner: starts one real redis-server (unix socket and a
# free TCP port, no persistence) in a temporary directory, runs each
# tests/integration/t_*.sh against it, stops the server by PID, and ends
# with "N passed, N failed, N skipped" (a skip is a check the environment
# could not run: it is neither a pass nor a failure). Tests that need their
# own server (restarts, persistence) start it with start_redis from
# tests/lib.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export RB_TESTS_DIR=$here
: "${RBARRIER:?set RBARRIER to the rbarrier binary (make test does)}"
export RBARRIER RBARRIER_FAULT_BIN=${RBARRIER_FAULT_BIN:-$RBARRIER}

RB_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rbarrier-test.XXXXXX")
export RB_TEST_TMP
. "$here/lib.sh"

cleanup() {
    stop_all_redis
    rm -rf "$RB_TEST_TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_redis shared || { echo "cannot start redis-server"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
export RB_TEST_SOCK=$REDIS_SOCK RB_TEST_PORT=$REDIS_PORT

tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    tests=("$here"/integration/t_*.sh "$here"/fault/t_*.sh "$here"/tls/t_*.sh)
fi

passed=0 failed=0 skipped=0 failed_names=()
for t in "${tests[@]}"; do
    [ -f "$t" ] || continue
    t=$(cd "$(dirname "$t")" && pwd)/$(basename "$t")
    name=$(basename "$t" .sh)
    echo "== $name"
    out="$RB_TEST_TMP/$name.out"
    start=$(date +%s)
    ( cd "$RB_TEST_TMP" && bash "$t" ) >"$out" 2>&1
    rc=$?
    cat "$out"
    p=$(grep -c '^ok ' "$out")
    f=$(grep -c '^not ok ' "$out")
    s=$(grep -c '^skip ' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "not ok - $name exited $rc"
        f=1
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then
        echo "not ok - $name ran no checks"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))
    [ "$f" -gt 0 ] && failed_names+=("$name")
    echo "   ($name: $p passed, $f failed, $s skipped, $(( $(date +%s) - start ))s)"
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
