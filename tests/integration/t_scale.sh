# A break of a big round costs no more than a small one: its outcome, which
# every waiter reads, names counts and the first few ids, not every member.
# The round's many parties are script calls sent pipelined, as the library
# sends them (one host cannot hold thousands of blocking parties), with
# real rbarrier parties among them. On a private server.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
start_redis scale || { not_ok "start a private redis-server"; exit 1; }
sock=$REDIS_SOCK scale_pid=$REDIS_PID
pcli() { redis-cli -s "$sock" "$@"; }
sha_of() { sh "$root/tools/embed-lua.sh" --expand "$root/lua/$1" | pcli -x SCRIPT LOAD; }
ARRIVE=$(sha_of arrive-2.lua)
BEAT=$(sha_of heartbeat-4.lua)

# Tab-separated commands on stdin (empty fields allowed) to RESP, sent in
# one pipeline; prints redis-cli --pipe's summary.
pipe_calls() {
    awk -F'\t' '{ printf "*%d\r\n", NF
                  for (i = 1; i <= NF; i++) printf "$%d\r\n%s\r\n", length($i), $i }' |
        pcli --pipe
}

# 1. A round of 2,000: 1,997 parties arrive by script (10-minute leases:
#    nobody's lease runs out here), then two rbarrier parties (one short of
#    n); one times out. Every waiter learns one outcome, of bounded size.
N=2000 M=1997
name=$(fresh big); b=$(bkey "$name")
t=$(printf '\t')
seq 1 $M | awk -v sha="$ARRIVE" -v b="$b" -v n=$N -v t="$t" '
    { print "EVALSHA" t sha t 2 t b t b ":nonce" t "p" $1 t "x" $1 t n t 600000 t 600 t 300 t 0 t "" t "" t "" }' |
    pipe_calls >"$RB_TEST_TMP/scale.pipe" 2>&1
expect_match "1,997 arrivals sent in one pipeline" "errors: 0, replies: $M" "$(cat "$RB_TEST_TMP/scale.pipe")"
expect_eq "... all in round 1" $M "$(pcli ZCARD "$b:1:in")"
u=unix://$sock
rb wait --url "$u" --name "$name" --n $N --id waiter --timeout 60 \
    2>"$RB_TEST_TMP/scale.waiter" & wpid=$!
members_are() { [ "$(pcli ZCARD "$1")" = "$2" ]; }
check "the waiting rbarrier party arrives" wait_until 30 members_are "$b:1:in" $((M + 1))
rb wait --url "$u" --name "$name" --n $N --id quitter --timeout 1 2>"$RB_TEST_TMP/scale.quitter"
expect_eq "the party that times out exits 124" 124 $?
wait "$wpid"; expect_eq "the waiting party exits 3 (broken)" 3 $?
out=$(pcli LINDEX "$b:1:out" 0)
expect_match "the outcome counts everyone and names the first few" \
    "^broken quitter timed out after 1s \(1999/2000 arrived: ([^, ]+,){7}[^, ]+ and 1991 more\)$" "$out"
check "... in a bounded size (${#out} bytes)" [ "${#out}" -lt 300 ]
expect_match "the waiting party says it" "quitter timed out after 1s \(1999/2000 arrived: .* and 1991 more\)" \
    "$(cat "$RB_TEST_TMP/scale.waiter")"
# Each scripted party's next heartbeat answers the same outcome.
seq 1 $M | sed "s/.*/EVALSHA $BEAT 4 $b $b:1:in $b:1:out $b:nonce 1 p& 600000 300 600/" |
    pcli >"$RB_TEST_TMP/scale.beats" 2>&1
expect_eq "... every one of them: the round's one outcome" "$M $out" \
    "$(grep -v '^out$' "$RB_TEST_TMP/scale.beats" | sort | uniq -c | sed 's/^ *//')"

# 2. A job of 2,000 whose last runner never comes: 1,998 enter by script,
#    one rbarrier runner times out entering. The reason names counts and
#    the first few.
JOBENTER=$(sha_of job-enter-1.lua)
job=$(fresh bigjob); j="rb:j:{$job}"
seq 1 1998 | awk -v sha="$JOBENTER" -v j="$j" -v n=$N -v t="$t" '
    { print "EVALSHA" t sha t 1 t j t "m" $1 t n t 600000 t 600 t 300 t 0 t "new" t 0 t "" }' |
    pipe_calls >"$RB_TEST_TMP/scale.enter" 2>&1
expect_match "1,998 members enter in one pipeline" "errors: 0, replies: 1998" "$(cat "$RB_TEST_TMP/scale.enter")"
rb run --url "$u" --name "$job" --n $N --id late --timeout 1 -- true 2>"$RB_TEST_TMP/scale.late"
expect_eq "the runner that times out entering exits 124" 124 $?
r=$(pcli HGET "$j" reason)
expect_match "the job's reason counts everyone and names the first few" \
    "\(1999/2000 entered: ([^, ]+,){7}[^, ]+ and 1991 more\)$" "$r"
check "... in a bounded size (${#r} bytes)" [ "${#r}" -lt 300 ]

stop_redis "$scale_pid"
