# Never exit 0 after losing output: a failed write to stdout (/dev/full, a
# closed pipe, a closed fd 1) exits 1 with one line on stderr, for every
# subcommand that prints; with --json/--value/--print-index stdout holds
# only the result (a --once command's output goes to stderr).
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
p=$(fresh outp); n=$(fresh outn)
rb set --param "$p" --value 5 >/dev/null
rb wait --name "$n" --n 1 >/dev/null

# Each command line prints something on success.
lines=(
    "get --param $p"
    "get --param $p --json"
    "sync --param $p --worker w0"
    "train --param $p --worker w0"
    "status --name $n"
    "status --name $n --json"
    "reset --name $(fresh outr)"
    "wait --name $(fresh outw) --n 1 --print-index"
    "wait --name $(fresh outv) --n 1 --value 3 --reduce max"
    "wait --name $(fresh outj) --n 1 --json"
    "run --name $(fresh outrun) --n 1 --json -- true"
    "demo --check /dev/null --workers 1 --iters 1"
    "--version"
    "--help"
    "wait --help"
    "help status"
)

# The same commands fail like that when a write fails: $1 names the case,
# the rest runs one command line with stdout broken some way.
expect_lost() {
    local what=$1 err code; shift
    err=$("$@" 2>&1 >/dev/null)
    code=$?
    err=$(printf '%s\n' "$err" | grep -v '^{')
    if [ "$code" -ne 1 ]; then not_ok "$what: exit 1 (got $code: $err)"; return; fi
    if [ "$(printf '%s\n' "$err" | grep -c 'cannot write to stdout')" -ne 1 ]; then
        not_ok "$what: one line saying so (got: $err)"; return
    fi
    ok "$what: exit 1, says so once"
}

for l in "${lines[@]}"; do
    # shellcheck disable=SC2086
    out=$(rb $l 2>/dev/null)
    c=$?
    # demo --check of an empty file reports a problem (exit 1) on stdout.
    if [ -z "$out" ]; then not_ok "'$l' prints something (exit $c)"; continue; fi
    # shellcheck disable=SC2086
    expect_lost "'$l' >/dev/full" sh -c "exec \$0 \"\$@\" > /dev/full" $RBARRIER $l
done

# A pipe whose reader is gone (opened and closed before we write).
broken_pipe() {
    python3 - "$@" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.stderr.write(p.stderr.decode())
sys.exit(p.returncode)
PY
}
# shellcheck disable=SC2086
expect_lost "get into a closed pipe" broken_pipe $RBARRIER get --param "$p"
# shellcheck disable=SC2086
expect_lost "wait --json into a closed pipe" broken_pipe $RBARRIER wait --name "$(fresh outbp)" --n 1 --json
# shellcheck disable=SC2086
expect_lost "get with stdout closed" sh -c 'exec "$@" >&-' sh $RBARRIER get --param "$p"
# A closed stdout is not taken over by the connection (the value is not
# written into Redis's socket as a command).
expect_eq "... and Redis still answers after it" PONG "$(rcli PING)"

# Nothing to print, nothing lost: a plain wait with stdout on /dev/full.
rb wait --name "$(fresh quiet)" --n 1 > /dev/full
expect_eq "plain wait prints nothing: /dev/full does not matter (exit 0)" 0 $?

# stdout carries only the result: --once's own output goes to stderr.
out=$(rb wait --name "$(fresh sepv)" --n 1 --value 7 --reduce max --once 'echo from-cmd' 2> "$T/sepv.err")
expect_eq "--value with --once: stdout is the value alone" 7 "$out"
expect_match "... the command's output went to stderr" "from-cmd" "$(cat "$T/sepv.err")"
out=$(rb wait --name "$(fresh sepj)" --n 1 --json --once 'echo from-cmd' 2>/dev/null)
check "--json with --once: stdout is one JSON object" python3 -c "import json,sys; json.loads(sys.argv[1])" "$out"
out=$(rb run --name "$(fresh sepr)" --n 1 --json -- echo from-cmd 2>/dev/null)
check "run --json: stdout is one JSON object" python3 -c "import json,sys; json.loads(sys.argv[1])" "$out"
out=$(rb wait --name "$(fresh sepo)" --n 1 --once 'echo from-cmd' 2>/dev/null)
expect_eq "plain --once: the command's output stays on stdout" from-cmd "$out"
