# Helpers for the fault tests (sourced after tests/lib.sh; not a test itself:
# the runner only runs t_*.sh).
#
# spawn TAG CMD...   run CMD in the background with stdout/stderr in
#                    $RB_TEST_TMP/TAG.out / TAG.err; its own PID goes to
#                    TAG.pid (CMD must exec the binary: pass `$RBARRIER ...`
#                    or `env VAR=... $RBARRIER_FAULT_BIN ...`, not a shell
#                    function, so that a signal reaches the process itself),
#                    and "<exit status> <exit time ms>" to TAG.rc.
# pid_of TAG         that PID (waits for it to be written)
# await TAG SECONDS  wait for TAG to exit; false when it is still running
# code_of TAG        its exit status ("running" while it runs)
# took_ms TAG T0     milliseconds from T0 (now_ms) to its exit
# err_of TAG         its stderr
# use_own_redis TAG [redis-server args]
#                    start a private server and point RBARRIER_URL, rcli and
#                    arrived/wait_arrived at it (REDIS_* as start_redis sets)
# restart_own_redis [redis-server args]
#                    start a server again on the same socket, port and dir

spawn() {
    local tag=$1; shift
    rm -f "$RB_TEST_TMP/$tag.pid" "$RB_TEST_TMP/$tag.rc"
    (
        "$@" > "$RB_TEST_TMP/$tag.out" 2> "$RB_TEST_TMP/$tag.err" &
        echo $! > "$RB_TEST_TMP/$tag.pid.tmp"
        mv "$RB_TEST_TMP/$tag.pid.tmp" "$RB_TEST_TMP/$tag.pid"
        wait $! 2>/dev/null
        echo "$? $(now_ms)" > "$RB_TEST_TMP/$tag.rc.tmp"
        mv "$RB_TEST_TMP/$tag.rc.tmp" "$RB_TEST_TMP/$tag.rc"
    ) &
}
pid_of() {
    wait_until 10 test -s "$RB_TEST_TMP/$1.pid" || { echo 0; return 1; }
    cat "$RB_TEST_TMP/$1.pid"
}
await() { wait_until "${2:-30}" test -s "$RB_TEST_TMP/$1.rc"; }
code_of() {
    if [ -s "$RB_TEST_TMP/$1.rc" ]; then cut -d' ' -f1 "$RB_TEST_TMP/$1.rc"
    else echo running; fi
}
took_ms() {
    if [ -s "$RB_TEST_TMP/$1.rc" ]; then
        echo $(( $(cut -d' ' -f2 "$RB_TEST_TMP/$1.rc") - $2 ))
    else echo 999999; fi
}
err_of() { cat "$RB_TEST_TMP/$1.err" 2>/dev/null; }

# Kill whatever spawn started and is still running (on a failed test), so
# that a test never leaves a process behind.
kill_spawned() {
    local f pid
    for f in "$RB_TEST_TMP"/*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        [ -f "${f%.pid}.rc" ] || kill -9 "$pid" 2>/dev/null
    done
    return 0
}

use_own_redis() {
    start_redis "$@" || { not_ok "start a private redis-server ($1)"; exit 1; }
    OWN_TAG=$1 OWN_PORT=$REDIS_PORT
    RB_TEST_SOCK=$REDIS_SOCK
    export RBARRIER_URL=unix://$REDIS_SOCK
}
restart_own_redis() {
    REDIS_PORT_WANT=$OWN_PORT start_redis "$OWN_TAG" "$@"
}
# stop_own_redis [SIGNAL]: stop the private server and wait until it no
# longer runs (a zombie counts as gone: a test modelling "Redis is away for
# 2 s" must not wait for PID 1 to reap it).
stop_own_redis() { stop_redis "$REDIS_PID" "${1:-TERM}"; }

# ms between two now_ms readings, for messages
since() { echo $(( $(now_ms) - $1 )); }
