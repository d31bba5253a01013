# Helpers for integration tests and the bench (sourced). Each check prints
# "ok - ...", "not ok - ..." or, when the environment cannot run it,
# "skip - ..."; the runner counts the three apart.
#
# $RBARRIER      the binary under test (may carry a valgrind prefix)
# $RB_TEST_SOCK  unix socket of the shared test server; RB_URL is its URL
# $RB_TEST_TMP   scratch directory, removed after the run

RB_URL=${RB_TEST_SOCK:+unix://$RB_TEST_SOCK}
export RBARRIER_URL=${RB_URL:-}

ok()      { echo "ok - $*"; }
not_ok()  { echo "not ok - $*"; }
skip()    { echo "skip - $*"; }
# diag TEXT: context for a reader of a failed run; not counted
diag()    { printf '#   %s\n' "$*"; }
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

# Every command the shared server has run so far, but the INFO that asks:
# "nothing was sent" is this unchanged. (DBSIZE is not: other tests' ended
# rounds expire while a test runs.)
cmdstats() { rcli INFO commandstats | tr -d '\r' | grep '^cmdstat_' | grep -v '^cmdstat_info:'; }

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

# The key layout, for tests that look inside Redis (as lib/rb_keys.c and
# lua/includes/keys.lua build it; default prefix): bkey NAME is a barrier's
# hash, rkey NAME GEN in|out|val|run a round's key, pkey PARAM a
# parameter's global value.
bkey() { echo "rb:b:{$1}"; }
rkey() { echo "rb:b:{$1}:$2:$3"; }
pkey() { echo "rb:p:{$1}"; }

# arrived NAME: parties in the open round of barrier NAME (shared server).
arrived() {
    local gen
    gen=$(rcli HGET "$(bkey "$1")" gen)
    [ -n "$gen" ] || { echo 0; return; }
    rcli ZCARD "$(rkey "$1" "$gen" in)"
}
# wait_arrived NAME COUNT [SECONDS]
wait_arrived() { wait_until "${3:-20}" _arrived_is "$1" "$2"; }
_arrived_is() { [ "$(arrived "$1")" = "$2" ]; }

# demo_lines_check FILE WORKERS ITERS: "ok", or what is wrong with the
# demo worker lines in FILE (globals 1..N*I each once, local = N*k on each
# worker's k-th line; lines not starting with "worker" are ignored). The
# check is the demo's own (`rbarrier demo --check`): one format, one home.
demo_lines_check() {
    $RBARRIER demo --check "$1" --workers "$2" --iters "$3" 2>&1
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---- job members (rbarrier run) ---------------------------------------------
# job_setup TAG: a fresh job name in $name and a directory for it in $d.
job_setup() { name=$(fresh "$1"); d=$RB_TEST_TMP/$name; mkdir -p "$d"; }
# keeper_key KEY: the keeper of KEY's cluster slot (lib/rb_keys.c's
# rb_key__keeper): "rb:k:{T}", T the smallest decimal number of that slot.
keeper_key() {
    python3 - "$1" <<'PY'
import sys
def crc16(b):
    crc = 0
    for c in b:
        crc ^= c << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xffff if crc & 0x8000 else (crc << 1) & 0xffff
    return crc
def slot(key):
    s = key.find('{')
    if s >= 0:
        e = key.find('}', s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return crc16(key.encode()) & 16383
want, i = slot(sys.argv[1]), 0
while crc16(str(i).encode()) & 16383 != want:
    i += 1
print('rb:k:{%d}' % i)
PY
}

# slow_worker FILE: writes a worker script, run as `sh FILE LOG TAG`, that
# puts its pid in LOG.pid and appends "TAG <ns>" to LOG every 50 ms while
# it works, and for a second more after SIGTERM (a command slow to stop):
# the lines say, by the worker's own clock, until when it worked.
slow_worker() {
    cat >"$1" <<'WORK'
echo $$ > "$1.pid"
work() { echo "$2 $(date +%s%N)" >> "$1"; sleep 0.05; }
trap 'i=0; while [ $i -lt 20 ]; do work "$1" "$2"; i=$((i + 1)); done; exit 0' TERM
while :; do work "$1" "$2"; done
WORK
}
# last_ns LOG TAG: the time of TAG's last line in LOG ("" if none).
last_ns() { sed -n "s/^$2 //p" "$1" | sort -n | tail -1; }

# start_runner TAG [run flags...] -- CMD: `rbarrier run --name $name` in the
# background; its pid in $d/TAG.pid, its exit code in $d/TAG.code, its
# stderr in $d/TAG.err.
start_runner() {
    local tag=$1; shift
    # A background job of a script starts with SIGINT ignored, which run
    # (as nohup asks) would keep: give it back.
    ( env --default-signal=INT $RBARRIER run --name "$name" "$@" 2> "$d/$tag.err" &
      echo $! > "$d/$tag.pid"
      # Quiet: a runner killed on purpose is no news for the log.
      exec 2>/dev/null; wait $!; echo $? > "$d/$tag.code" ) &
}
# start_member ID [run flags...] -- CMD: the runner of member ID.
start_member() { local id=$1; shift; start_runner "$id" --id "$id" "$@"; }
# runner_code TAG: the runner's exit code once it ended, else "".
runner_code() { cat "$d/$1.code" 2>/dev/null; }

# ---- redis-server processes ------------------------------------------------
# Every server a test or the bench starts goes through server_start: one
# port picker, one way to launch, one readiness rule, one PID list that
# stop_all_redis empties. Starters for other shapes (cluster nodes,
# sentinels, TLS) sit next to start_redis and call server_start with their
# own arguments and readiness check.

# free_port: a TCP port nothing listens on right now, picked below the
# kernel's ephemeral range so no outgoing connection can be holding it
# (a port in that range can be taken between our choosing it and a server
# binding it, or restarting on it).
free_port() {
    local p low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 12000 ] 2>/dev/null || low=32768
    while :; do
        p=$(( 10000 + RANDOM % (low - 10000) ))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

# server_start DIR READY... -- REDIS-SERVER-ARGS...: run redis-server
# daemonized with its pidfile and log in DIR (created), wait until the
# command READY succeeds, and record its PID; sets SERVER_PID. False when
# it dies first (e.g. its port was taken: the log then says "Address
# already in use") or is not ready within 10 s (it is then killed).
server_start() {
    local dir=$1 ready=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do ready+=("$1"); shift; done
    shift
    mkdir -p "$dir"
    rm -f "$dir/redis.log" "$dir/redis.pid"
    SERVER_PID=
    redis-server "$@" --dir "$dir" --daemonize yes \
        --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >/dev/null || return 1
    if ! wait_until 10 _server_settled "$dir" "${ready[@]}" || ! "${ready[@]}"; then
        # Not ready in time: stop it rather than leave it running unlisted.
        [ -f "$dir/redis.pid" ] && stop_redis "$(cat "$dir/redis.pid")" KILL
        return 1
    fi
    SERVER_PID=$(cat "$dir/redis.pid")
    echo "$SERVER_PID" >> "$RB_TEST_TMP/redis.pids"
}
# Ready, or known dead (so a failed start is not waited on).
_server_settled() {
    local dir=$1; shift
    "$@" && return 0
    [ -f "$dir/redis.pid" ] && pid_gone "$(cat "$dir/redis.pid")" && return 0
    grep -q 'Address already in use' "$dir/redis.log" 2>/dev/null
}
redis_ready() { [ -S "$1" ] && [ "$(redis-cli -s "$1" PING 2>/dev/null)" = PONG ]; }

# start_redis TAG [extra redis-server args...]: a private server in
# $RB_TEST_TMP/redis-TAG on a unix socket and a free TCP port, no
# persistence unless the args ask for it; sets REDIS_SOCK, REDIS_PORT,
# REDIS_PID, REDIS_DIR. With REDIS_PORT_WANT set, on that port (one try);
# otherwise a port taken meanwhile is replaced by another (three tries).
start_redis() { local tag=$1; shift; start_tagged "$tag" --port "$@"; }

# start_tagged TAG PORT-OPTION [args...]: what the start_* functions share:
# start_redis with REDIS_PORT given to PORT-OPTION (--port, --tls-port).
start_tagged() {
    local tag=$1 portopt=$2 try; shift 2
    REDIS_DIR=$RB_TEST_TMP/redis-$tag
    REDIS_SOCK=$REDIS_DIR/redis.sock
    for try in 1 2 3; do
        REDIS_PORT=${REDIS_PORT_WANT:-$(free_port)}
        if server_start "$REDIS_DIR" redis_ready "$REDIS_SOCK" -- \
            "$portopt" "$REDIS_PORT" --bind 127.0.0.1 --unixsocket "$REDIS_SOCK" \
            --save '' --appendonly no "$@"; then
            REDIS_PID=$SERVER_PID
            return 0
        fi
        [ -n "${REDIS_PORT_WANT:-}" ] && break
    done
    return 1
}

# tls_certs: the test certificates (tests/tls/make-certs.sh), made once per
# run in $RB_CERTS.
tls_certs() {
    RB_CERTS=$RB_TEST_TMP/certs
    [ -f "$RB_CERTS/server.crt" ] && return 0
    sh "$RB_TESTS_DIR/tls/make-certs.sh" "$RB_CERTS.tmp" >/dev/null 2>&1 &&
        mv "$RB_CERTS.tmp" "$RB_CERTS"
}

# start_redis_tls TAG [extra redis-server args...]: as start_redis, but
# clients reach it only by TLS, on REDIS_PORT (--port 0 --tls-port); the
# unix socket REDIS_SOCK stays plain for the test's own redis-cli. The
# certificate is $RB_CERTS/${TLS_CERT:-server}.crt; clients must present
# one when TLS_AUTH_CLIENTS=yes. REDIS_PORT_WANT as for start_redis.
start_redis_tls() {
    local tag=$1; shift
    tls_certs || return 1
    start_tagged "$tag" --tls-port --port 0 \
        --tls-cert-file "$RB_CERTS/${TLS_CERT:-server}.crt" \
        --tls-key-file "$RB_CERTS/${TLS_CERT:-server}.key" \
        --tls-ca-cert-file "$RB_CERTS/ca.crt" \
        --tls-auth-clients "${TLS_AUTH_CLIENTS:-no}" "$@"
}

# acl_readme_line: the README's minimal ACL line, as redis-cli arguments
# after "ACL SETUSER rbarrier" (PASSWORD left for the caller to replace).
acl_readme_line() {
    grep -m1 '^ACL SETUSER rbarrier ' "$RB_TESTS_DIR/../README.md" |
        sed 's/^ACL SETUSER rbarrier //'
}

# ---- Redis Cluster and Sentinel (tests/cluster) ---------------------------

tcp_ready() { [ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ]; }

# start_cluster TAG MASTERS [REPLICAS_PER_MASTER]: cluster nodes on free
# ports in $RB_TEST_TMP/cluster-TAG/<port>, joined with redis-cli --cluster
# create; waits until every node says cluster_state:ok. Sets CLUSTER_PORTS
# (masters first, as redis-cli assigns them) and CLUSTER_PIDS.
start_cluster() {
    local tag=$1 masters=$2 per=${3:-0} i try port addrs=()
    CLUSTER_PORTS=() CLUSTER_PIDS=()
    for ((i = 0; i < masters * (1 + per); i++)); do
        for try in 1 2 3; do
            port=$(free_port)
            server_start "$RB_TEST_TMP/cluster-$tag/$port" tcp_ready "$port" -- \
                --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
                --cluster-enabled yes --cluster-node-timeout 2000 \
                --cluster-config-file nodes.conf --repl-diskless-sync yes \
                --repl-diskless-sync-delay 0 && break
            [ "$try" = 3 ] && return 1
        done
        CLUSTER_PORTS+=("$port") CLUSTER_PIDS+=("$SERVER_PID")
        addrs+=("127.0.0.1:$port")
    done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$per" \
        --cluster-yes >/dev/null 2>&1 || return 1
    wait_until 30 cluster_settled || return 1
}
cluster_settled() {
    local p
    for p in "${CLUSTER_PORTS[@]}"; do
        redis-cli -p "$p" CLUSTER INFO 2>/dev/null | grep -q '^cluster_state:ok' || return 1
        [ "$(redis-cli -p "$p" CLUSTER INFO | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')" = "${#CLUSTER_PORTS[@]}" ] || return 1
    done
    redis-cli --cluster check "127.0.0.1:${CLUSTER_PORTS[0]}" 2>/dev/null | grep -q 'All 16384 slots covered' || return 1
    # A replica that has not finished its first sync cannot stand in for
    # its master yet: the failover tests need that it can.
    for p in "${CLUSTER_PORTS[@]}"; do
        redis-cli -p "$p" ROLE 2>/dev/null | head -1 | grep -q master && continue
        _replica_synced "$p" || return 1
    done
}
# cluster_owner KEY: the port of the master that serves KEY now, as the
# first node that answers sees it.
cluster_owner() {
    local p slot
    for p in "${CLUSTER_PORTS[@]}"; do
        slot=$(redis-cli -p "$p" CLUSTER KEYSLOT "$1" 2>/dev/null) || continue
        [ -n "$slot" ] || continue
        redis-cli -p "$p" CLUSTER NODES 2>/dev/null | awk -v s="$slot" '
            $3 ~ /master/ && $3 !~ /fail/ {
                for (i = 9; i <= NF; i++) {
                    if ($i ~ /^\[/) continue
                    n = split($i, r, "-"); if (n == 1) r[2] = r[1]
                    if (s + 0 >= r[1] + 0 && s + 0 <= r[2] + 0) {
                        split($2, a, "[:@]"); print a[2]; exit } } }'
        return 0
    done
    return 1
}

# start_sentinel_setup TAG MASTER: a master and a replica (diskless sync,
# no delay) and one sentinel watching them as MASTER, quorum 1, down after
# 1 s. Sets SENT_MASTER_PORT, SENT_REPLICA_PORT, SENT_PORT and their PIDs
# SENT_PIDS (master replica sentinel).
start_sentinel_setup() {
    local tag=$1 name=$2 dir=$RB_TEST_TMP/sentinel-$1 try
    SENT_PIDS=()
    for try in 1 2 3; do
        SENT_MASTER_PORT=$(free_port)
        server_start "$dir/master" tcp_ready "$SENT_MASTER_PORT" -- \
            --port "$SENT_MASTER_PORT" --bind 127.0.0.1 --save '' \
            --appendonly no --repl-diskless-sync yes \
            --repl-diskless-sync-delay 0 && break
        [ "$try" = 3 ] && return 1
    done
    SENT_PIDS+=("$SERVER_PID")
    for try in 1 2 3; do
        SENT_REPLICA_PORT=$(free_port)
        server_start "$dir/replica" tcp_ready "$SENT_REPLICA_PORT" -- \
            --port "$SENT_REPLICA_PORT" --bind 127.0.0.1 --save '' \
            --appendonly no --repl-diskless-sync yes \
            --repl-diskless-sync-delay 0 \
            --replicaof 127.0.0.1 "$SENT_MASTER_PORT" && break
        [ "$try" = 3 ] && return 1
    done
    SENT_PIDS+=("$SERVER_PID")
    wait_until 20 _replica_synced "$SENT_REPLICA_PORT" || return 1
    for try in 1 2 3; do
        SENT_PORT=$(free_port)
        mkdir -p "$dir/sentinel"
        printf '%s\n' "port $SENT_PORT" "bind 127.0.0.1" \
            "sentinel monitor $name 127.0.0.1 $SENT_MASTER_PORT 1" \
            "sentinel down-after-milliseconds $name 1000" \
            "sentinel failover-timeout $name 5000" \
            "sentinel parallel-syncs $name 1" > "$dir/sentinel/sentinel.conf"
        server_start "$dir/sentinel" tcp_ready "$SENT_PORT" -- \
            "$dir/sentinel/sentinel.conf" --sentinel && break
        [ "$try" = 3 ] && return 1
    done
    SENT_PIDS+=("$SERVER_PID")
    wait_until 20 _sentinel_knows "$name" || return 1
}
_replica_synced() {
    redis-cli -p "$1" INFO replication 2>/dev/null | grep -q '^master_link_status:up'
}
# The sentinel knows a replica of the master and has read its INFO lately:
# a sentinel that has only heard of it from the master's INFO (info-refresh
# never: a huge age) refuses SENTINEL FAILOVER with NOGOODSLAVE.
_sentinel_knows() {
    redis-cli -p "$SENT_PORT" SENTINEL replicas "$1" 2>/dev/null | awk '
        prev == "info-refresh" { refresh = $0 }
        prev == "master-link-status" && $0 == "ok" && refresh != "" &&
            refresh + 0 < 5000 { good = 1 }
        { prev = $0 }
        END { exit !good }'
}
# sentinel_master NAME: the port the sentinel names as NAME's master.
sentinel_master() {
    redis-cli -p "$SENT_PORT" SENTINEL get-master-addr-by-name "$1" 2>/dev/null | sed -n 2p
}

# stop_redis PID [SIGNAL]: signal a server (TERM by default) and wait until
# it no longer runs.
stop_redis() {
    kill -"${2:-TERM}" "$1" 2>/dev/null || return 0
    wait_until 10 pid_gone "$1"
}
# A zombie still answers kill -0 (a daemonized server is reaped late by
# PID 1, which may take seconds), so a zombie counts as gone.
pid_gone() {
    local st
    st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 0
    [ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}

stop_all_redis() {
    local pid
    [ -f "$RB_TEST_TMP/redis.pids" ] || return 0
    while read -r pid; do stop_redis "$pid"; done < "$RB_TEST_TMP/redis.pids"
}
