# rbarrier lock: mutual exclusion, semaphores, FIFO order, timeouts, dead
# holders and waiters, a frozen server, fencing tokens, status, reset, bad
# input, exit statuses. Each case uses its own name; the cases that freeze
# or kill things use a private server.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

# lkey NAME PART: a key of lock NAME (lib/rb_keys.c's layout; PART "" for
# the base hash).
lkey() { echo "rb:l:{$1}${2:+:$2}"; }
queued() { rcli ZCARD "$(lkey "$1" queue)"; }
holding() { rcli ZCARD "$(lkey "$1" holders)"; }
_queued_is() { [ "$(queued "$1")" = "$2" ]; }
_holding_is() { [ "$(holding "$1")" = "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
T=$RB_TEST_TMP

# A command that holds until its flag file exists: the test decides when
# a holder lets go, without a sleep standing in for it.
hold_until() { echo "while [ ! -e '$1' ]; do sleep 0.05; done"; }

# ---- mutual exclusion under 8 contenders -----------------------------------
name=$(fresh mx)
log=$T/$name.log
for i in 1 2 3 4 5 6 7 8; do
    spawn "$name.$i" $RBARRIER lock --name "$name" --id "c$i" --timeout 120 -- \
        sh -c "echo \"\$(date +%s%N) start \$RBARRIER_LOCK_TOKEN\" >> '$log'; sleep 0.1; echo \"\$(date +%s%N) end\" >> '$log'"
done
for i in 1 2 3 4 5 6 7 8; do await "$name.$i" 120; done
codes=$(for i in 1 2 3 4 5 6 7 8; do code_of "$name.$i"; done | tr '\n' ' ')
expect_eq "8 contenders: each ran its command once" "0 0 0 0 0 0 0 0 " "$codes"
expect_eq "8 contenders: 8 intervals recorded" 16 "$(wc -l < "$log")"
# The log is appended in time order by whoever holds: alternate start/end
# lines mean no interval overlapped another.
expect_eq "8 contenders: intervals never overlap (start/end alternate)" \
    "$(printf 'start\nend\n%.0s' 1 2 3 4 5 6 7 8)" "$(cut -d' ' -f2 "$log")"
# The first grant of a name takes the server's time in microseconds; each
# later one the next number.
t1=$(grep start "$log" | head -1 | cut -d' ' -f3)
tokens=$(grep start "$log" | cut -d' ' -f3 | tr '\n' ' ')
expect_eq "8 contenders: tokens consecutive in grant order" \
    "$(for i in 0 1 2 3 4 5 6 7; do printf '%s ' $((t1 + i)); done)" "$tokens"
us=$(( $(date +%s%N) / 1000 ))
check "... the first from the server's clock in microseconds, below 2^53 ($t1)" \
    test "$t1" -gt $((us - 600000000)) -a "$t1" -le "$us" -a "$t1" -lt 9007199254740992
expect_eq "8 contenders: nothing left held or queued" "0 0" "$(holding "$name") $(queued "$name")"

# ---- a semaphore never exceeds K and reaches K -----------------------------
name=$(fresh sem)
cnt=$name.count
for i in 1 2 3 4 5 6 7; do
    spawn "$name.$i" $RBARRIER lock --name "$name" --max 3 --id "s$i" --timeout 120 -- \
        sh -c "redis-cli -s '$RB_TEST_SOCK' INCR '$cnt' >> '$T/$name.peaks'; sleep 0.6; redis-cli -s '$RB_TEST_SOCK' DECR '$cnt' >/dev/null"
done
for i in 1 2 3 4 5 6 7; do await "$name.$i" 120; done
peak=$(sort -n "$T/$name.peaks" | tail -1)
expect_eq "semaphore --max 3, 7 contenders: all ran" 7 "$(wc -l < "$T/$name.peaks")"
expect_eq "semaphore: at most and at least 3 at once (peak)" 3 "$peak"
rcli DEL "$cnt" >/dev/null

# ---- FIFO, status during contention, timeout ---------------------------------
name=$(fresh fifo)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --timeout 60 -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "fifo: the first holder holds"
for i in 1 2 3 4 5; do
    spawn "$name.w$i" $RBARRIER lock --name "$name" --id "w$i" --timeout 60 -- \
        sh -c "echo w$i \$RBARRIER_LOCK_TOKEN >> '$T/$name.order'"
    wait_until 20 _queued_is "$name" "$i" || not_ok "fifo: w$i queued"
done
st=$(rb status --name "$name" --json)
expect_eq "status --json during contention: holder and waiters in line" \
    "1 h w1,w2,w3,w4,w5" \
    "$(python3 -c 'import json,sys; l=json.loads(sys.argv[1])["lock"]; print(l["max"], ",".join(h["id"] for h in l["holders"]), ",".join(w["id"] for w in l["waiters"]))' "$st")"
txt=$(rb status --name "$name")
expect_match "status (text) shows the holder with its token and mode" "holder h +token [0-9]+, exclusive," "$txt"
expect_match "status (text) shows the first waiter" "waiter w1 +#1 in line" "$txt"

# Timeout: gives up without running its command (exit 124) and leaves the
# queue.
t0=$(now_ms)
rb lock --name "$name" --id late --timeout 1.5 -- touch "$T/$name.late-ran" 2>"$T/$name.late.err"
code=$?
ms=$(since "$t0")
expect_eq "--timeout 1.5 behind a holder: exit 124" 124 "$code"
check "... after about its timeout (1.4..4 s; $ms ms)" test "$ms" -ge 1400 -a "$ms" -le 4000
check "... without running its command" test ! -e "$T/$name.late-ran"
expect_match "... saying so" "timed out after 1.5s" "$(cat "$T/$name.late.err")"
expect_eq "... and it left the queue (5 waiters remain)" 5 "$(queued "$name")"

# A differing --max while the lock is in use: exit 2 naming both.
rb lock --name "$name" --max 2 --id other --timeout 5 -- true 2>"$T/$name.max.err"
expect_eq "a differing --max is refused: exit 2" 2 $?
expect_match "... naming both values" "max 1.*max 2" "$(cat "$T/$name.max.err")"
expect_eq "... and it is not queued" 5 "$(queued "$name")"

touch "$T/$name.go"
for i in h w1 w2 w3 w4 w5; do await "$name.$i" 60; done
t1=$(head -1 "$T/$name.order" | cut -d' ' -f2)
expect_eq "fifo: waiters ran first come, first served, tokens increasing" \
    "w1 $t1,w2 $((t1 + 1)),w3 $((t1 + 2)),w4 $((t1 + 3)),w5 $((t1 + 4))" \
    "$(tr '\n' ',' < "$T/$name.order" | sed 's/,$//' | tr -s ' ' ' ')"

# ---- exit statuses -----------------------------------------------------------
name=$(fresh ex)
rb lock --name "$name" -- sh -c 'exit 7'
expect_eq "the command's status passes through (7)" 7 $?
rb lock --name "$name" -- sh -c 'kill -TERM $$'
expect_eq "a command killed by SIGTERM: 143" 143 $?
rb lock --name "$name" -- "$T/no-such-command" 2>/dev/null
expect_eq "a command not found: 127, as the shell" 127 $?
printf 'echo hi\n' > "$T/$name.noexec"; chmod 644 "$T/$name.noexec"
rb lock --name "$name" -- "$T/$name.noexec" 2>/dev/null
expect_eq "a command not executable: 126, as the shell" 126 $?
expect_eq "each run released its slot" "0 0" "$(holding "$name") $(queued "$name")"

# ---- bad input: exit 2, one line, nothing sent -------------------------------
before=$(cmdstats)
for args in "--max 0 -- true" "--max x -- true" "--max 100001 -- true" "" "--" \
            "--lease 0 -- true" "--timeout -1 -- true" "--kill-after 1x -- true"; do
    # shellcheck disable=SC2086
    err=$(rb lock --name bad $args 2>&1 >/dev/null)
    code=$?
    expect_eq "lock --name bad $args: exit 2" 2 "$code"
    expect_eq "... one line on stderr" 1 "$(printf '%s\n' "$err" | wc -l)"
done
err=$(rb lock --name 'a{b}' -- true 2>&1)
expect_eq "a name with braces: exit 2" 2 $?
expect_eq "bad input sent nothing to Redis" "$before" "$(cmdstats)"

# ---- one name: a barrier and a lock stay apart ---------------------------------
name=$(fresh both)
rb wait --name "$name" --n 1 --id a
rb lock --name "$name" -- true
rb reset --name "$name" --lock >/dev/null
expect_eq "reset --lock leaves the barrier of the same name alone" 2 "$(rcli HGET "$(bkey "$name")" gen)"
check "the lock's token lives in its own family" test "$(rcli GET "$(lkey "$name" token)")" -gt 1

# ---- reset --lock revokes holders and sends waiters away ----------------------
name=$(fresh rst)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 3 --kill-after 2 -- \
    sh -c "echo \$\$ > '$T/$name.cmdpid'; exec sleep 60"
wait_until 20 _holding_is "$name" 1 || not_ok "reset: the holder holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w -- touch "$T/$name.w-ran"
wait_until 20 _queued_is "$name" 1 || not_ok "reset: the waiter waits"
tok=$(rcli GET "$(lkey "$name" token)")
t0=$(now_ms)
expect_match "reset --lock says what it did" "1 holder revoked, 1 waiter sent away" \
    "$(rb reset --name "$name" --lock)"
await "$name.w" 10
expect_eq "reset: the waiter exits 3 at once" 3 "$(code_of "$name.w")"
check "... without running its command" test ! -e "$T/$name.w-ran"
await "$name.h" 15
expect_eq "reset: the holder exits 3" 3 "$(code_of "$name.h")"
ms=$(took_ms "$name.h" "$t0")
check "... at its next renewal (<= lease/3 + 1.5 s; $ms ms)" test "$ms" -le 2500
expect_match "... saying it lost the lock" "lost" "$(err_of "$name.h")"
check "... and its command is gone" gone "$(cat "$T/$name.cmdpid")"
rb lock --name "$name" -- sh -c "echo \$RBARRIER_LOCK_TOKEN > '$T/$name.tok'"
check "tokens go on growing after a reset ($tok -> $(cat "$T/$name.tok"))" \
    test "$(cat "$T/$name.tok")" -gt "$tok"

# ---- a signal to the holder: passed to the command, the slot released ---------
name=$(fresh sig)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "$(hold_until "$T/$name.never")"
wait_until 20 _holding_is "$name" 1 || not_ok "signal: the holder holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --timeout 30 -- true
wait_until 20 _queued_is "$name" 1 || not_ok "signal: the waiter waits"
t0=$(now_ms)
kill -TERM "$(pid_of "$name.h")"
await "$name.h" 15; await "$name.w" 15
expect_eq "SIGTERM to a holder: exit 143" 143 "$(code_of "$name.h")"
expect_eq "... and the waiter gets the slot" 0 "$(code_of "$name.w")"
ms=$(took_ms "$name.w" "$t0")
check "... at once, not after a lease ($ms ms)" test "$ms" -le 3000

# ---- a signal to a waiter: 128+N, without running its command, out of line ---
name=$(fresh sigw)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "signal to a waiter: the holder holds"
# A script's '&' leaves SIGINT ignored, and rbarrier keeps a signal ignored
# at start: the waiter gets it back with env --default-signal.
spawn "$name.w" env --default-signal=INT $RBARRIER lock --name "$name" --id w -- touch "$T/$name.w-ran"
wait_until 20 _queued_is "$name" 1 || not_ok "signal to a waiter: it waits"
kill -INT "$(pid_of "$name.w")"
await "$name.w" 15
expect_eq "SIGINT to a waiter: exit 130" 130 "$(code_of "$name.w")"
check "... without running its command" test ! -e "$T/$name.w-ran"
expect_eq "... and it left the line" 0 "$(queued "$name")"
touch "$T/$name.go"
await "$name.h" 15

# ---- a hand-off costs the release and one confirmation -------------------------
# The release grants and pushes the token onto the next waiter's wake
# list; the grant counts only 2 s on the server until the woken waiter
# confirms it with one renewal. Scripts run in the window: the holder's
# release, w's confirmation and w's release (leases of 30 s: no slice ends
# and no renewal falls due in it). w's command runs until the confirmation
# is in: a command that ended first would need none.
name=$(fresh ho)
script_calls() { rcli INFO commandstats | tr -d '\r' |
    awk -F'[:=,]' '/^cmdstat_eval(sha)?:/ { n += $3 } END { print n + 0 }'; }
_calls_reach() { [ "$(script_calls)" -ge "$1" ]; }
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 30 -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "hand-off: the holder holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 30 --timeout 60 -- \
    sh -c "echo \$RBARRIER_LOCK_TOKEN > '$T/$name.wtok'; $(hold_until "$T/$name.wgo")"
wait_until 20 _queued_is "$name" 1 || not_ok "hand-off: w waits"
htok=$(rcli GET "$(lkey "$name" token)")
before=$(script_calls)
touch "$T/$name.go"
await "$name.h" 15
wait_until 20 _calls_reach $((before + 2)) || not_ok "hand-off: w confirms its grant"
touch "$T/$name.wgo"
await "$name.w" 15
after=$(script_calls)
expect_eq "hand-off: both ran their commands" "0 0" "$(code_of "$name.h") $(code_of "$name.w")"
expect_eq "... the waiter's token is the next one" $((htok + 1)) "$(cat "$T/$name.wtok")"
expect_eq "... three script calls: the releases and the confirmation" 3 "$((after - before))"

# ---- every key of a lock in use expires ----------------------------------------
# Expiries are refreshed only every quarter of the ttl; a key a script
# creates in between (the holders set a hand-off empties and fills again,
# the entries of a lock free again, a queue that was empty) gets its own
# at once, or an abandoned lock would leave it forever.
name=$(fresh ttl)
# Used once before: its base hash (with the time of the last refresh)
# stays, the rest goes when the lock is free.
rb lock --name "$name" -- true
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "$(hold_until "$T/$name.go1")"
wait_until 20 _holding_is "$name" 1 || not_ok "expiry: h holds"
spawn "$name.w1" $RBARRIER lock --name "$name" --id w1 --timeout 60 -- sh -c "$(hold_until "$T/$name.go2")"
wait_until 20 _queued_is "$name" 1 || not_ok "expiry: w1 waits"
spawn "$name.w2" $RBARRIER lock --name "$name" --id w2 --timeout 60 -- true
wait_until 20 _queued_is "$name" 2 || not_ok "expiry: w2 waits"
touch "$T/$name.go1"
await "$name.h" 15
_w1_holds() { [ "$(rcli ZRANGE "$(lkey "$name" holders)" 0 -1)" = w1 ]; }
wait_until 20 _w1_holds || not_ok "expiry: the slot went to w1"
no_ttl=$(rcli --scan --pattern "rb:l:{$name}*" | while read -r k; do
    [ "$(rcli TTL "$k")" -gt 0 ] || echo "$k"; done)
expect_eq "after a hand-off, every key of the lock has an expiry" "" "$no_ttl"
check "... the token's thirty times the ttl ($(rcli TTL "$(lkey "$name" token)") s)" \
    test "$(rcli TTL "$(lkey "$name" token)")" -gt 86400
touch "$T/$name.go2"
await "$name.w1" 15; await "$name.w2" 15
expect_eq "... and both waiters ran" "0 0" "$(code_of "$name.w1") $(code_of "$name.w2")"
