# Helpers for integration tests (sourced). Each check prints "ok - ..." or
# "not ok - ..."; the runner counts them.
#
# $RBARRIER      the binary under test (may carry a valgrind prefix)
# $RB_TEST_SOCK  unix socket of the shared test server; RB_URL is its URL
# $RB_TEST_TMP   scratch directory, removed after the run

RB_URL=${RB_TEST_SOCK:+unix://$RB_TEST_SOCK}
export RBARRIER_URL=${RB_URL:-}

ok()      { echo "ok - $*"; }
not_ok()  { echo "not ok - $*"; }
check()   { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1 (expected '$2', got '$3')"; fi
}
# expect_match WHAT REGEX TEXT
expect_match() {
    if printf '%s' "$3" | grep -Eq -- "$2"; then ok "$1"
    else not_ok "$1 (no match for /$2/ in: $(printf '%s' "$3" | head -c 400))"; fi
}

rb() { $RBARRIER "$@"; }

# redis-cli against the shared server (or $1=-s SOCK given explicitly)
rcli() { redis-cli -s "$RB_TEST_SOCK" "$@"; }

# A name no other test or run uses.
fresh() { echo "${1:-t}-$$-$RANDOM$RANDOM"; }

# wait_until SECONDS CMD...: poll a condition (not a stand-in for sync: used
# only to await an observable state, like N parties having arrived).
wait_until() {
    local limit=$1; shift
    local end=$(( $(date +%s%N) / 1000000 + limit * 1000 ))
    while ! "$@"; do
        [ $(( $(date +%s%N) / 1000000 )) -ge $end ] && return 1
        sleep 0.02
    done
    return 0
}

# arrived NAME: parties in the open round of barrier NAME (shared server).
arrived() {
    local gen
    gen=$(rcli HGET "rb:{$1}" gen)
    [ -n "$gen" ] || { echo 0; return; }
    rcli ZCARD "rb:{$1}:$gen:in"
}
# wait_arrived NAME COUNT [SECONDS]
wait_arrived() { wait_until "${3:-20}" _arrived_is "$1" "$2"; }
_arrived_is() { [ "$(arrived "$1")" = "$2" ]; }

# demo_lines_check FILE WORKERS ITERS: "ok", or what is wrong with the
# demo worker lines in FILE: globals 1..N*I each once, local = N*k on each
# worker's k-th line (lines not starting with "worker" are ignored).
demo_lines_check() {
    awk -v n="$2" -v iters="$3" '
        function bad(m) { if (!err) err = m }
        /^worker/ {
            w = $2 + 0; l = $4 + 0; g = $6 + 0; lines++
            if ($0 != sprintf("worker %2d, local_param %2d global_param %2d", w, l, g) ||
                w < 0 || w >= n) { bad("malformed line: " $0); next }
            if (l != n * k[w]) bad("worker " w " line " k[w] + 0 ": local " l ", expected " n * k[w])
            k[w]++
            if (g < 1 || g > n * iters) bad("global " g " out of 1.." n * iters)
            else if (seen[g]++) bad("global " g " printed twice")
        }
        END {
            if (lines != n * iters) bad(lines + 0 " worker lines, expected " n * iters)
            for (w = 0; w < n; w++) if (k[w] != iters) bad("worker " w ": " k[w] + 0 " lines, expected " iters)
            print err ? err : "ok"
        }' "$1"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start_redis TAG [extra redis-server args...]: a private server in
# $RB_TEST_TMP/redis-TAG; sets REDIS_SOCK, REDIS_PORT, REDIS_PID, REDIS_DIR.
start_redis() {
    local try
    for try in 1 2 3; do
        start_redis_once "$@" && return 0
        [ -n "${REDIS_PORT_WANT:-}" ] && return 1
    done
    return 1
}
start_redis_once() {
    local tag=$1; shift
    REDIS_DIR=$RB_TEST_TMP/redis-$tag
    mkdir -p "$REDIS_DIR"
    REDIS_SOCK=$REDIS_DIR/redis.sock
    rm -f "$REDIS_DIR/redis.log" "$REDIS_DIR/redis.pid"
    REDIS_PORT=${REDIS_PORT_WANT:-$(free_port)}
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --unixsocket "$REDIS_SOCK" \
        --save '' --appendonly no --dir "$REDIS_DIR" --daemonize yes \
        --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" "$@" \
        >/dev/null || return 1
    wait_until 10 redis_up "$REDIS_DIR" "$REDIS_SOCK" || return 1
    redis_ready "$REDIS_SOCK" || return 1
    REDIS_PID=$(cat "$REDIS_DIR/redis.pid")
    echo "$REDIS_PID" >> "$RB_TEST_TMP/redis.pids"
}
# redis_up DIR SOCK: ready, or known dead (so a failed start is not waited on).
redis_up() {
    redis_ready "$2" && return 0
    [ -f "$1/redis.pid" ] && ! kill -0 "$(cat "$1/redis.pid")" 2>/dev/null && return 0
    grep -q 'Address already in use' "$1/redis.log" 2>/dev/null
}
redis_ready() { [ -S "$1" ] && [ "$(redis-cli -s "$1" PING 2>/dev/null)" = PONG ]; }

# stop_redis PID: kill and wait for the process to be gone.
stop_redis() {
    local pid=$1
    kill "$pid" 2>/dev/null || return 0
    wait_until 10 pid_gone "$pid"
}
# A zombie still answers kill -0 (a daemonized server is reaped late by
# init), so look at its state too.
pid_gone() {
    kill -0 "$1" 2>/dev/null || return 0
    [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

stop_all_redis() {
    local pid
    [ -f "$RB_TEST_TMP/redis.pids" ] || return 0
    while read -r pid; do stop_redis "$pid"; done < "$RB_TEST_TMP/redis.pids"
}

# free_port: a TCP port nothing listens on right now, picked below the
# kernel's ephemeral range so no outgoing connection can be holding it.
free_port() {
    local p low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    while :; do
        p=$(( 10000 + RANDOM % (low - 10000) ))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}
