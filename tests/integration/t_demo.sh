# The seed's experiment end to end: `demo` with its own private
# redis-server (4x10) and against the shared server (8x50) prints globals
# 1..N*I each once, local = N*k on each worker's k-th line, and its check
# line; the private server is gone afterwards. Then the parameter commands:
# float steps, bad numbers (exit 2, nothing written), sync of a never-set
# parameter, train --json.
. "$RB_TESTS_DIR/lib.sh"

# 1. No --url and no $RBARRIER_URL: the demo runs its own redis-server.
#    TMPDIR puts its directory in our scratch space, so a leak is found
#    (and cleaned up) here rather than left in /tmp.
out=$RB_TEST_TMP/demo-private.out
env -u RBARRIER_URL TMPDIR="$RB_TEST_TMP" $RBARRIER demo --workers 4 --iters 10 \
    > "$out" 2> "$RB_TEST_TMP/demo-private.err"
expect_eq "demo with a private server exits 0" 0 $?
first=$(head -1 "$out")
expect_match "first line names the private server" \
    '^# private redis-server \(pid [0-9]+\) on /.*/redis\.sock$' "$first"
expect_eq "40 worker lines, globals 1..40 once each, local = 4*k" ok \
    "$(demo_lines_check "$out" 4 10)"
expect_eq "the check line" "40 updates, global_param 40, no update lost" \
    "$(tail -1 "$out")"
expect_eq "nothing else on stdout" 42 "$(wc -l < "$out")"
expect_eq "nothing on stderr" "" "$(cat "$RB_TEST_TMP/demo-private.err")"
pid=$(printf '%s\n' "$first" | sed -n 's/^# private redis-server (pid \([0-9]*\)) on .*/\1/p')
sock=$(printf '%s\n' "$first" | sed -n 's/^# private redis-server (pid [0-9]*) on //p')
if [ -n "$pid" ] && [ -n "$sock" ]; then
    # The demo waits for its server before exiting: it must be gone now.
    check "the private redis-server (pid $pid) is gone" pid_gone "$pid"
    check "no redis-server serves $sock any more" \
        test -z "$(pgrep -x redis-server -a | grep -F -- "$sock")"
    check "its directory $(dirname "$sock") is removed" test ! -e "$(dirname "$sock")"
else
    not_ok "cannot read the private server's pid and socket from: $first"
fi

# 2. 8 workers x 50 iterations against the shared server.
out=$RB_TEST_TMP/demo-shared.out
rb demo --workers 8 --iters 50 --url "$RB_URL" > "$out" 2> "$RB_TEST_TMP/demo-shared.err"
expect_eq "demo 8x50 on the shared server exits 0" 0 $?
expect_eq "no private server when a URL is given" 0 "$(grep -c '^# private' "$out")"
expect_eq "400 worker lines, globals 1..400 once each, local = 8*k" ok \
    "$(demo_lines_check "$out" 8 50)"
expect_eq "the check line" "400 updates, global_param 400, no update lost" \
    "$(tail -1 "$out")"
expect_eq "nothing on stderr" "" "$(cat "$RB_TEST_TMP/demo-shared.err")"

# $RBARRIER_URL alone (no --url) also selects the shared server.
out=$RB_TEST_TMP/demo-env.out
RBARRIER_URL=$RB_URL rb demo --workers 2 --iters 3 > "$out" 2>&1
expect_eq "demo with \$RBARRIER_URL exits 0" 0 $?
expect_eq "demo with \$RBARRIER_URL: no private server, 6 good lines" "0 ok" \
    "$(grep -c '^# private' "$out") $(demo_lines_check "$out" 2 3)"

# 3. Parameters. Two steps of 0.5 on a fresh parameter make 1.
p=$(fresh half)
expect_eq "train --by 0.5 on a fresh param" "local 0 global 0.5" \
    "$(rb train --param "$p" --worker w0 --by 0.5)"
expect_eq "a second train --by 0.5" "local 0 global 1" \
    "$(rb train --param "$p" --worker w0 --by 0.5)"
expect_eq "get prints 1" 1 "$(rb get --param "$p")"
expect_eq "sync copies 1" 1 "$(rb sync --param "$p" --worker w0)"
expect_eq "an integer step on it goes on" "local 1 global 2" \
    "$(rb train --param "$p" --worker w0)"

# Bad numbers: exit 2, one line on stderr, nothing written.
p=$(fresh badnum)
before=$(rcli DBSIZE)
err=$(rb train --param "$p" --worker w0 --by abc 2>&1 >/dev/null)
code=$?
after=$(rcli DBSIZE)
expect_eq "train --by abc exits 2" 2 "$code"
expect_eq "train --by abc: one line on stderr" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_match "train --by abc: says why" "^rbarrier: .*--by 'abc'" "$err"
expect_eq "train --by abc: nothing written (DBSIZE)" "$before" "$after"
expect_eq "train --by abc: no key of the param" 0 \
    "$(rcli EXISTS "rb:{param:$p}" "rb:{param:$p}:local:w0")"
before=$(rcli DBSIZE)
err=$(rb set --param "$p" --value abc 2>&1 >/dev/null)
code=$?
after=$(rcli DBSIZE)
expect_eq "set --value abc exits 2" 2 "$code"
expect_eq "set --value abc: one line on stderr" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_eq "set --value abc: nothing written (DBSIZE)" "$before" "$after"
expect_eq "get of it still prints 0" 0 "$(rb get --param "$p")"

# sync of a parameter never set prints 0.
expect_eq "sync of a never-set param prints 0" 0 \
    "$(rb sync --param "$(fresh never)" --worker w0)"

# train --json: one object with both values.
p=$(fresh json)
rb set --param "$p" --value 41
expect_eq "set exits 0" 0 $?
rb sync --param "$p" --worker w1 > /dev/null
expect_eq "train --json" "{\"param\":\"$p\",\"id\":\"w1\",\"local\":41,\"value\":42,\"outcome\":\"ok\",\"exit\":0}" \
    "$(rb train --param "$p" --worker w1 --json)"
expect_eq "train --json --by 0.5" "{\"param\":\"$p\",\"id\":\"w1\",\"local\":41,\"value\":42.5,\"outcome\":\"ok\",\"exit\":0}" \
    "$(rb train --param "$p" --worker w1 --by 0.5 --json)"
