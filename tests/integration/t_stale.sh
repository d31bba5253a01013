# State a barrier no longer agrees with never passes a round: an open round
# whose keys outlive the barrier hash, a lease renewed shorter than the
# earliest deadline the hash keeps (dl), a party of the previous build on
# the same name. On a private server, as the scripts are called directly.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
start_redis stale || { not_ok "start a private redis-server"; exit 1; }
sock=$REDIS_SOCK stale_pid=$REDIS_PID
pcli() { redis-cli -s "$sock" "$@"; }
sha_of() { sh "$root/tools/embed-lua.sh" --expand "$root/lua/$1" | pcli -x SCRIPT LOAD; }
ARRIVE=$(sha_of arrive-2.lua)
BEAT=$(sha_of heartbeat-4.lua)
server_ms() { pcli TIME | tr '\n' ' ' | awk '{ printf "%.0f\n", $1 * 1000 + int($2 / 1000) }'; }
server_past() { [ "$(server_ms)" -gt "$1" ]; }
gone() { [ "$(pcli EXISTS "$1")" = 0 ]; }

# 1. A run killed in its round 2 leaves the round's in key, which expires
#    after the barrier hash (the hash's expiry is renewed only once it ran
#    down by a tenth). The next run of the name must not pass a round
#    with the dead parties' members in it.
name=$(fresh stale); b=$(bkey "$name")
# arrive ID NONCE: n=3, lease 1 s, ttl 20 s (keep 20 s, slack 2 s), linger 1 s
arrive() { pcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "$1" "$2" 3 1000 20 1 0 '' '' ''; }
t0=$(server_ms)
arrive w0 a1 >/dev/null; arrive w1 b1 >/dev/null
expect_eq "round 1 passes with 3" done "$(arrive w2 c1 | head -1)"
check "(1.5 s later on the server clock)" wait_until 5 server_past $((t0 + 1500))
g=$(pcli HGET "$b" gen)
arrive w0 a2 >/dev/null; arrive w1 b2 >/dev/null   # then all killed -9
check "the barrier hash expires" wait_until 30 gone "$b"
expect_eq "... before round $g's in key, which holds the dead w0, w1" 2 "$(pcli ZCARD "$b:$g:in")"
arrive w0 a3 >/dev/null; arrive w1 b3 >/dev/null
expect_eq "the next run's first round passes" done "$(arrive w2 c3 | head -1)"
g2=$(pcli HGET "$b" gen)
arrive w2 c4 >/dev/null
r=$(arrive w0 a4 | head -1)
check "its next round does not pass with w2 and w0 alone (got: $r)" [ "$r" != done ]
o=$(pcli LINDEX "$b:$g2:out" 0)
check "... and nobody is released on it (outcome: '$o')" [ "$o" != ok ]
r=$(arrive w1 b4 | head -1)
check "... not even once w1 arrives again (got: $r)" [ "$r" != done ]
expect_eq "... nor on a retry of w0's arrival" wait "$(arrive w0 a4 | head -1)"
# 2. A heartbeat whose renewal ends before the earliest deadline the hash
#    keeps (dl: two copies of one id with different --lease values, or the
#    server clock stepped back) lowers dl, or the next arrival would skip
#    the scan and count a party whose lease ran out.
name=$(fresh short); b=$(bkey "$name")
# arrive ID NONCE LEASE_MS: n=3; beat ID LEASE_MS on round g
arrive() { pcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "$1" "$2" 3 "$3" 600 300 0 '' '' ''; }
beat() { pcli EVALSHA "$BEAT" 4 "$b" "$b:$g:in" "$b:$g:out" "$b:nonce" "$g" "$1" "$2" 300 600; }
arrive A a1 60000 >/dev/null; arrive B b1 60000 >/dev/null
g=$(pcli HGET "$b" gen)
expect_eq "B renews with a 300 ms lease" wait "$(beat B 300 | head -1)"
s=$(pcli ZSCORE "$b:$g:in" B)
check "B's lease runs out on the server clock" wait_until 5 server_past "$s"
r=$(arrive C c1 60000 | head -1)
check "C's arrival does not complete the round with B dead (got: $r)" [ "$r" != done ]
expect_match "... it breaks it" "^broken lease of B expired" "$(pcli LINDEX "$b:$g:out" 0)"

# 3. A party of the previous build (its scripts keep each party's last
#    arrival in a hash at rb:b:{NAME}:nonce, and update neither c nor dl)
#    is refused on a name this build's parties use, naming the key; and a
#    name it used first is not passed with its dead member.
old=$RB_TEST_TMP/previous
if mkdir -p "$old" && git -C "$root" archive 3ecf01f lua tools 2>/dev/null | tar -x -C "$old" 2>/dev/null; then
    OLD_ARRIVE=$(sh "$old/tools/embed-lua.sh" --expand "$old/lua/arrive-2.lua" | pcli -x SCRIPT LOAD)
    OLD_BEAT=$(sh "$old/tools/embed-lua.sh" --expand "$old/lua/heartbeat-4.lua" | pcli -x SCRIPT LOAD)
    name=$(fresh mixed); b=$(bkey "$name")
    # arrive SHA ID NONCE LEASE_MS: n=3
    arrive() { pcli EVALSHA "$1" 2 "$b" "$b:nonce" "$2" "$3" 3 "$4" 600 300 0 '' '' '' 2>&1; }
    arrive "$ARRIVE" A a1 60000 >/dev/null
    r=$(arrive "$OLD_ARRIVE" B b1 200)
    expect_match "an arrival of the previous build is refused, naming the key" \
        "WRONGTYPE $(printf '%s' "$b:nonce" | sed 's/[{}]/\\&/g') holds a string" "$r"
    g=$(pcli HGET "$b" gen)
    expect_eq "... and is not in the round" "" "$(pcli ZSCORE "$b:$g:in" B)"
    arrive "$ARRIVE" C c1 60000 >/dev/null
    expect_eq "the round of 3 then passes only with a third party" done "$(arrive "$ARRIVE" D d1 60000 | head -1)"

    name=$(fresh oldfirst); b=$(bkey "$name")
    arrive "$OLD_ARRIVE" B b1 200 >/dev/null   # first, then killed
    g=$(pcli HGET "$b" gen)
    arrive "$ARRIVE" A a1 60000 >/dev/null
    r=$(pcli EVALSHA "$OLD_BEAT" 4 "$b" "$b:$g:in" "$b:$g:out" "$b:nonce" "$g" B 200 300 600 2>&1)
    expect_match "a name the previous build used first: its heartbeat is refused once this build arrived" \
        "WRONGTYPE .* holds a string" "$r"
    s=$(pcli ZSCORE "$b:$g:in" B)
    check "B's lease runs out on the server clock" wait_until 5 server_past "$s"
    arrive "$ARRIVE" C c1 60000 >/dev/null
    r=$(arrive "$ARRIVE" D d1 60000 | head -1)
    check "... and a round of 3 does not pass with B dead in it (got: $r)" [ "$r" != done ]
    o=$(pcli LINDEX "$b:$g:out" 0)
    check "... nobody is released on it (outcome: '$o')" [ "$o" != ok ]
else
    skip "the previous build's scripts (commit 3ecf01f) are not in this checkout"
fi

stop_redis "$stale_pid"
