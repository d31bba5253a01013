# What the barrier protocol costs Redis (INFO commandstats, the commands
# scripts run included), and that the shortcut which makes it cheap, the
# earliest lease deadline kept in the barrier hash, never hides a lease
# that ran out. On a private server, so no other test's commands count.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
start_redis cost || { not_ok "start a private redis-server"; exit 1; }
sock=$REDIS_SOCK cost_pid=$REDIS_PID
pcli() { redis-cli -s "$sock" "$@"; }
sha_of() { sh "$root/tools/embed-lua.sh" --expand "$root/lua/$1" | pcli -x SCRIPT LOAD; }
ARRIVE=$(sha_of arrive-2.lua)
BEAT=$(sha_of heartbeat-4.lua)

# Every command the server ran since the last CONFIG RESETSTAT, but the
# INFO and CONFIG that ask.
calls() {
    pcli INFO commandstats | tr -d '\r' | grep '^cmdstat_' |
        grep -v '^cmdstat_\(info\|config\)[:|]' |
        sed 's/^[^:]*:calls=\([0-9]*\),.*/\1/' | awk '{ s += $1 } END { print s + 0 }'
}
# arrive NAME ID NONCE N LEASE_MS: the reply, one field a line
arrive() {
    local b; b=$(bkey "$1")
    pcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "$2" "$3" "$4" "$5" 600 300 0 '' '' ''
}
# beat NAME GEN ID LEASE_MS
beat() {
    local b; b=$(bkey "$1")
    pcli EVALSHA "$BEAT" 4 "$b" "$b:$2:in" "$b:$2:out" "$b:nonce" "$2" "$3" "$4" 300 600
}
server_ms() { pcli TIME | tr '\n' ' ' | awk '{ printf "%.0f\n", $1 * 1000 + int($2 / 1000) }'; }
server_past() { [ "$(server_ms)" -gt "$1" ]; }

# 1. A round of 4 (not the barrier's first: that one creates its hash):
#    4 EVALSHA and at most 29 commands inside them (each arrival reads and
#    writes its own record key, so the hash holds no per-party field), and
#    the history's 7: an XADD per arrival, two EXPIREs at the round's
#    first, the pass's HINCRBY (lua/includes/history.lua). With the
#    history off, 4 XADDs that meet the off switch and do nothing else.
name=$(fresh round)
for i in 0 1 2 3; do arrive "$name" "w$i" "a$i" 4 10000 >/dev/null; done
ttl=$(pcli TTL "$(bkey "$name")")
check "after a barrier's first round its hash expires, in the 600 s ttl ($ttl s)" \
    test "$ttl" -gt 0 -a "$ttl" -le 600
pcli CONFIG RESETSTAT >/dev/null
for i in 0 1 2 3; do arrive "$name" "w$i" "b$i" 4 10000 >/dev/null; done
got=$(calls)
check "a round of 4 arrivals runs at most 40 Redis commands, scripts and history included (ran $got)" \
    [ "$got" -le 40 ]
expect_eq "... and passed" ok "$(pcli LINDEX "$(rkey "$name" 2 out)" 0)"
pcli SET "rb:h:{$name}" off >/dev/null
pcli CONFIG RESETSTAT >/dev/null
for i in 0 1 2 3; do arrive "$name" "w$i" "c$i" 4 10000 >/dev/null; done
got=$(calls)
check "... at most 37 with the name's history off (ran $got)" [ "$got" -le 37 ]
expect_eq "... and passed" ok "$(pcli LINDEX "$(rkey "$name" 3 out)" 0)"

# 2. A heartbeat that finds the round well: one EVALSHA, four inside.
name=$(fresh beat)
arrive "$name" w0 n0 2 10000 >/dev/null
pcli CONFIG RESETSTAT >/dev/null
reply=$(beat "$name" 1 w0 10000 | head -1)
got=$(calls)
expect_eq "a heartbeat in an open round answers wait" wait "$reply"
check "... running at most 5 Redis commands, scripts included (ran $got)" [ "$got" -le 5 ]

# 3. An arrival with a shorter lease than the round's earliest deadline
#    lowers it: when that lease runs out, the next arrival sees it.
name=$(fresh lowered); b=$(bkey "$name")
arrive "$name" long n1 3 600000 >/dev/null
arrive "$name" short n2 3 1000 >/dev/null
check "... until its deadline has passed on the server clock" wait_until 5 server_past "$(pcli ZSCORE "$b:1:in" short)"
expect_eq "an arrival after a short lease ran out joins a fresh round" 2 \
    "$(arrive "$name" third n3 3 600000 | sed -n 2p)"
expect_eq "... having broken the old one" "broken lease of short expired" \
    "$(pcli LINDEX "$b:1:out" 0)"

# 4. A heartbeat renews its own lease without raising the earliest
#    deadline past an earlier member's.
name=$(fresh raised); b=$(bkey "$name")
arrive "$name" short n1 3 1000 >/dev/null
arrive "$name" long n2 3 600000 >/dev/null
expect_eq "a heartbeat before the short lease runs out answers wait" wait \
    "$(beat "$name" 1 long 600000 | head -1)"
check "... until its deadline has passed on the server clock" wait_until 5 server_past "$(pcli ZSCORE "$b:1:in" short)"
expect_eq "an arrival after it ran out joins a fresh round" 2 \
    "$(arrive "$name" third n3 3 600000 | sed -n 2p)"
expect_eq "... having broken the old one" "broken lease of short expired" \
    "$(pcli LINDEX "$b:1:out" 0)"

# 5. The heartbeat itself finds a lease that ran out.
name=$(fresh beatdead); b=$(bkey "$name")
arrive "$name" short n1 3 1000 >/dev/null
arrive "$name" long n2 3 600000 >/dev/null
beat "$name" 1 long 600000 >/dev/null
check "... until its deadline has passed on the server clock" wait_until 5 server_past "$(pcli ZSCORE "$b:1:in" short)"
expect_eq "a heartbeat after another member's lease ran out breaks the round" \
    "out broken lease of short expired" "$(beat "$name" 1 long 600000 | tr '\n' ' ' | sed 's/ $//')"

stop_redis "$cost_pid"
