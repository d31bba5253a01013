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
before=$(cmdstats)
err=$(rb train --param "$p" --worker w0 --by abc 2>&1 >/dev/null)
code=$?
after=$(cmdstats)
expect_eq "train --by abc exits 2" 2 "$code"
expect_eq "train --by abc: one line on stderr" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_match "train --by abc: says why" "^rbarrier: .*--by 'abc'" "$err"
expect_eq "train --by abc: nothing sent to Redis" "$before" "$after"
expect_eq "train --by abc: no key of the param" 0 \
    "$(rcli EXISTS "rb:p:{$p}" "rb:p:{$p}:local:w0")"
before=$(cmdstats)
err=$(rb set --param "$p" --value abc 2>&1 >/dev/null)
code=$?
after=$(cmdstats)
expect_eq "set --value abc exits 2" 2 "$code"
expect_eq "set --value abc: one line on stderr" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_eq "set --value abc: nothing sent to Redis" "$before" "$after"
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

# 4. A value of any length goes through whole (a 301-byte value stored by
#    another client used to print as 63 bytes, exit 0).
p=$(fresh long)
long=$(head -c 301 /dev/zero | tr '\0' 'v')
rcli SET "rb:p:{$p}" "$long" > /dev/null
expect_eq "get of a 301-byte value prints all of it" "$long" "$(rb get --param "$p")"
expect_eq "sync of it copies all of it" "$long" "$(rb sync --param "$p" --worker w0)"
expect_eq "get --json of it holds all of it" "{\"param\":\"$p\",\"value\":\"$long\",\"outcome\":\"ok\",\"exit\":0}" \
    "$(rb get --param "$p" --json)"

# 5. demo --check: the demo's own checker over lines printed elsewhere.
printf 'worker  0, local_param  0 global_param  1\nworker  1, local_param  0 global_param  2\n' \
    > "$RB_TEST_TMP/check.ok"
expect_eq "demo --check of a good run" ok "$(rb demo --check "$RB_TEST_TMP/check.ok" --workers 2 --iters 1)"
printf 'worker  0, local_param  0 global_param  1\nworker  1, local_param  0 global_param  1\n' \
    > "$RB_TEST_TMP/check.dup"
out=$(rb demo --check "$RB_TEST_TMP/check.dup" --workers 2 --iters 1)
expect_eq "demo --check finds a lost update (exit 1)" "1 global 1 printed twice" "$? $out"
out=$(printf 'worker 0, local_param 0 global_param 1\n' | rb demo --check - --workers 1 --iters 1)
expect_eq "demo --check: only the exact format is a line" "1 malformed line: worker 0, local_param 0 global_param 1" "$? $out"

# 6. A demo killed with SIGKILL takes its workers and its private
#    redis-server along, and its temporary directory goes. The workers get
#    the URL in their environment, never in argv (where ps shows it).
mkdir -p "$RB_TEST_TMP/k9"
out=$RB_TEST_TMP/demo-k9.out
env -u RBARRIER_URL TMPDIR="$RB_TEST_TMP/k9" $RBARRIER demo --workers 3 --iters 100000 \
    > "$out" 2> "$RB_TEST_TMP/demo-k9.err" &
demo=$!
has_lines() { [ "$(grep -c '^worker' "$out")" -ge 6 ]; }
if wait_until 20 has_lines; then
    server=$(sed -n 's/^# private redis-server (pid \([0-9]*\)) on .*/\1/p' "$out")
    # The demo runs under valgrind in some builds: its workers are the
    # processes whose argv holds "worker --worker".
    workers=$(pgrep -f -- "worker --worker [0-2] --workers 3 --iters 100000" | tr '\n' ' ')
    expect_eq "three workers run" 3 "$(wc -w <<<"$workers")"
    leaked=""
    for w in $workers; do
        tr '\0' '\n' < "/proc/$w/cmdline" | grep -q -e '^--url' -e '^unix:' -e '^redis' && leaked="$leaked $w"
        tr '\0' '\n' < "/proc/$w/environ" | grep -q '^RBARRIER_URL=unix://' || leaked="$leaked $w(env)"
    done
    expect_eq "no worker has the URL in argv; each has it in its environment" "" "$leaked"
    kill -9 "$demo"
    wait "$demo" 2>/dev/null
    all_gone() { local p; for p in $server $workers; do pid_gone "$p" || return 1; done; }
    check "after kill -9 of demo: its workers and redis-server (pid $server) exit" wait_until 10 all_gone
    dir_empty() { [ -z "$(ls -A "$RB_TEST_TMP/k9")" ]; }
    check "after kill -9 of demo: its temporary directory is removed" wait_until 10 dir_empty
else
    not_ok "the demo to be killed printed no lines: $(head -c 300 "$RB_TEST_TMP/demo-k9.err")"
    kill -9 "$demo" 2>/dev/null
fi
