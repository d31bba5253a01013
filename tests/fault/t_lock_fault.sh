# Locks when things die: a holder killed with -9, a dead waiter in the
# queue, Redis frozen past a holder's lease. A private server each time.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap 'kill -CONT "$REDIS_PID" 2>/dev/null; kill_spawned' EXIT

lkey() { echo "rb:l:{$1}${2:+:$2}"; }
queued() { rcli ZCARD "$(lkey "$1" queue)"; }
holding() { rcli ZCARD "$(lkey "$1" holders)"; }
_queued_is() { [ "$(queued "$1")" = "$2" ]; }
_holding_is() { [ "$(holding "$1")" = "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
T=$RB_TEST_TMP

use_own_redis lockfault

# ---- holder kill -9'd: its slot is freed within lease + 1 s ------------------
# The waiter's own lease is long (20 s): the holder's deadline, not the
# waiter's renewal period, decides when it is served.
name=$(fresh k9)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 3 -- \
    sh -c "echo \$RBARRIER_LOCK_TOKEN > '$T/$name.htok'; echo \$\$ > '$T/$name.hcmd'; exec sleep 60"
wait_until 20 test -s "$T/$name.hcmd" || not_ok "k9: the holder runs its command"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 20 --timeout 60 -- \
    sh -c "echo \$RBARRIER_LOCK_TOKEN > '$T/$name.wtok'"
wait_until 20 _queued_is "$name" 1 || not_ok "k9: the waiter waits"
t0=$(now_ms)
kill -9 "$(pid_of "$name.h")"
await "$name.w" 30
ms=$(took_ms "$name.w" "$t0")
expect_eq "holder kill -9'd: the waiter gets the slot" 0 "$(code_of "$name.w")"
# At most lease (3 s) + 1 s after its last renewal, which was at most
# lease/3 before the kill; 1.5 s more for a loaded machine.
check "... within lease + 1 s of the last renewal, with margin (<= 5.5 s; $ms ms)" test "$ms" -le 5500
check "... the token grew across the holder's death ($(cat "$T/$name.htok") -> $(cat "$T/$name.wtok"))" \
    test "$(cat "$T/$name.wtok")" -gt "$(cat "$T/$name.htok")"
wait_until 5 gone "$(cat "$T/$name.hcmd")"
check "... and the dead holder's command did not outlive it" gone "$(cat "$T/$name.hcmd")"

# ---- a dead waiter does not block the queue ---------------------------------
name=$(fresh dw)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "while [ ! -e '$T/$name.go' ]; do sleep 0.05; done"
wait_until 20 _holding_is "$name" 1 || not_ok "dead waiter: the holder holds"
spawn "$name.d" $RBARRIER lock --name "$name" --id d --lease 2 -- touch "$T/$name.d-ran"
wait_until 20 _queued_is "$name" 1 || not_ok "dead waiter: d waits"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --timeout 60 -- true
wait_until 20 _queued_is "$name" 2 || not_ok "dead waiter: w waits behind d"
kill -9 "$(pid_of "$name.d")"
t0=$(now_ms)
touch "$T/$name.go"
await "$name.h" 20; await "$name.w" 20
expect_eq "dead waiter ahead in line: the next waiter still gets the slot" 0 "$(code_of "$name.w")"
ms=$(took_ms "$name.w" "$t0")
check "... within the dead waiter's lease and a second, with margin (<= 5 s; $ms ms)" test "$ms" -le 5000
check "... and the dead waiter never ran its command" test ! -e "$T/$name.d-ran"

# ---- a waiter killed in line delays a free lock by its short lease only ----
# A grant pushed to a waiter holds on the server only 2 s until the woken
# waiter confirms it, and the next in line is nudged to watch that
# deadline: d, killed with -9 behind the holder, is granted the slot when
# h lets go, and w behind it is served about 2 s later, never d. Default
# flags everywhere (a 10 s lease), so the old rule (a grant holds the
# grantee's whole lease) shows as a 10 s delay.
name=$(fresh kw)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "while [ ! -e '$T/$name.go' ]; do sleep 0.02; done"
wait_until 20 _holding_is "$name" 1 || not_ok "killed waiter: the holder holds"
spawn "$name.d" $RBARRIER lock --name "$name" --id d -- touch "$T/$name.d-ran"
wait_until 20 _queued_is "$name" 1 || not_ok "killed waiter: d waits"
spawn "$name.w" $RBARRIER lock --name "$name" --id w -- \
    sh -c "echo \$RBARRIER_ID > '$T/$name.wran'"
wait_until 20 _queued_is "$name" 2 || not_ok "killed waiter: w waits behind d"
kill -9 "$(pid_of "$name.d")"
t0=$(now_ms)
touch "$T/$name.go"
await "$name.h" 20; await "$name.w" 30
ms=$(took_ms "$name.w" "$t0")
expect_eq "waiter killed with -9 in line: the next one gets the lock" 0 "$(code_of "$name.w")"
check "... within the dead waiter's 2 s, with margin for a loaded machine (<= 3.5 s; $ms ms)" test "$ms" -le 3500
check "... and the dead waiter never ran its command" test ! -e "$T/$name.d-ran"
expect_eq "... the slot free again" "0 0" "$(holding "$name") $(queued "$name")"

# ---- Redis frozen past the holder's lease ------------------------------------
# SIGSTOP keeps the connections open with nobody answering. The holder
# cannot renew: it stops its command and exits 4 before its lease is over
# by its own clock; the waiter is served only after the server is back,
# so only after the first command is gone.
name=$(fresh frz)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 3 --kill-after 1 -- \
    sh -c "echo \$\$ > '$T/$name.hcmd'; exec sleep 60"
wait_until 20 test -s "$T/$name.hcmd" || not_ok "frozen: the holder runs its command"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 20 --timeout 60 -- \
    sh -c "date +%s%N > '$T/$name.wstart'"
wait_until 20 _queued_is "$name" 1 || not_ok "frozen: the waiter waits"
t0=$(now_ms)
kill -STOP "$REDIS_PID"
await "$name.h" 15
hms=$(took_ms "$name.h" "$t0")
cmd_gone=no; gone "$(cat "$T/$name.hcmd")" && cmd_gone=yes
kill -CONT "$REDIS_PID"
expect_eq "Redis frozen past the lease: the holder exits 4 (unreachable)" 4 "$(code_of "$name.h")"
check "... within its lease (<= 3 s + 1 s margin; $hms ms)" test "$hms" -le 4000
expect_match "... saying it lost the lock" "lost" "$(err_of "$name.h")"
expect_eq "... and its command was gone when it exited" yes "$cmd_gone"
await "$name.w" 30
expect_eq "the waiter is served once Redis is back" 0 "$(code_of "$name.w")"
hend=$(cut -d' ' -f2 "$T/$name.h.rc")
check "... only after the first holder had stopped" \
    test "$(( $(cat "$T/$name.wstart") / 1000000 ))" -ge "$hend"

# ---- a waiter presumed dead fails instead of acquiring ----------------------
# A waiter stopped (SIGSTOP) past its lease loses its place; when the slot
# frees meanwhile it is not granted to it, and once it runs again it exits
# 3 without running its command.
name=$(fresh wl)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "while [ ! -e '$T/$name.go' ]; do sleep 0.05; done"
wait_until 20 _holding_is "$name" 1 || not_ok "stopped waiter: the holder holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 2 --timeout 60 -- touch "$T/$name.w-ran"
wait_until 20 _queued_is "$name" 1 || not_ok "stopped waiter: w waits"
kill -STOP "$(pid_of "$name.w")"
_w_expired() { rb status --name "$name" --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["lock"]["waiters"]
sys.exit(0 if w and w[0]["lease_left_ms"] < 0 else 1)'; }
wait_until 20 _w_expired || not_ok "stopped waiter: its lease ran out"
touch "$T/$name.go"
await "$name.h" 20
expect_eq "the slot freed past the stopped waiter's lease is not granted to it" \
    "0 0" "$(holding "$name") $(queued "$name")"
kill -CONT "$(pid_of "$name.w")"
await "$name.w" 20
expect_eq "the stopped waiter, running again, exits 3" 3 "$(code_of "$name.w")"
check "... without running its command" test ! -e "$T/$name.w-ran"
expect_match "... saying its place is gone" "place is gone" "$(err_of "$name.w")"

# ---- a grant read after its lease is not taken ------------------------------
# The woken waiter holds on the pushed grant alone, its lease counted from
# the acquire call that came before the grant. Stopped while blocked on
# its wake list, granted meanwhile, and let run again once that lease has
# passed on the server: it exits 3 without running its command and gives
# the slot back at once. It is stopped early in a slice (under 2 s of its
# 4 s: lease/3, the holder's deadline being later), so that the grant
# lands inside that slice and is read from the wake list, not found by a
# later acquire call.
# _blocked_idle_in NAME ID MIN MAX: the waiter ID of lock NAME is blocked,
# idle MIN..MAX s, found by its client name. The server counts idle in
# whole seconds of its clock: idle 0 lasts only until the next second
# begins, which a poll on a loaded machine can miss slice after slice;
# idle 0 or 1 is a slice begun under 2 s ago.
_blocked_idle() { rcli CLIENT LIST | tr -d '\r' | grep -F " name=rbarrier:lock:$1:$2 " |
    grep ' flags=[A-Za-z]*b' | sed -n 's/.* idle=\([0-9]*\) .*/\1/p'; }
_blocked_idle_in() { local i; i=$(_blocked_idle "$1" "$2"); [ -n "$i" ] && [ "$i" -ge "$3" ] && [ "$i" -le "$4" ]; }
name=$(fresh lw)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 60 -- sh -c "while [ ! -e '$T/$name.go' ]; do sleep 0.02; done"
wait_until 20 _holding_is "$name" 1 || not_ok "late grant: the holder holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 12 --timeout 60 -- touch "$T/$name.w-ran"
wait_until 20 _queued_is "$name" 1 || not_ok "late grant: w waits"
wait_until 30 _blocked_idle_in "$name" w 0 1 || not_ok "late grant: w has just begun a slice on its wake list"
kill -STOP "$(pid_of "$name.w")"
touch "$T/$name.go"
await "$name.h" 20
_w_holds_left() { rb status --name "$name" --json | python3 -c '
import json, sys
h = json.load(sys.stdin)["lock"]["holders"]
sys.exit(0 if h and h[0]["id"] == "w" and '"$1"' < h[0]["lease_left_ms"] < '"$2"' else 1)'; }
wait_until 30 _w_holds_left -1e12 0 || not_ok "late grant: granted to w, and its lease ran out"
kill -CONT "$(pid_of "$name.w")"
await "$name.w" 20
expect_eq "a grant read after its lease: exit 3" 3 "$(code_of "$name.w")"
check "... without running its command" test ! -e "$T/$name.w-ran"
expect_match "... saying it was granted too late" "granted, but" "$(err_of "$name.w")"
expect_eq "... and the slot is free again" "0 0" "$(holding "$name") $(queued "$name")"

# ---- a grant read late, still honoured by the server, is taken --------------
# A grant pushed to a waiter holds on the server only 2 s; the woken
# waiter confirms it with one renewal before its command starts (read
# within a second of its last call it starts the command first:
# t_supervise.sh checks that path). Stopped early in its 10 s slice, for 1.2 s
# by its clock (so it reads the grant more than a second after that
# call), granted, and let run again while the grant still has its short
# lease left on the server: it asks the server, holds with the full lease
# renewed from that call, and only then runs its command.
name=$(fresh lh)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 60 -- sh -c "while [ ! -e '$T/$name.go' ]; do sleep 0.02; done"
wait_until 20 _holding_is "$name" 1 || not_ok "late grant honoured: the holder holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 30 --timeout 120 --verbose -- \
    sh -c "echo \$RBARRIER_LOCK_TOKEN > '$T/$name.wtok'; while [ ! -e '$T/$name.done' ]; do sleep 0.02; done"
wait_until 20 _queued_is "$name" 1 || not_ok "late grant honoured: w waits"
wait_until 30 _blocked_idle_in "$name" w 0 1 || not_ok "late grant honoured: w has just begun a slice"
kill -STOP "$(pid_of "$name.w")"
# The time itself is the condition: w's clock must pass a second.
sleep 1.2
touch "$T/$name.go"
await "$name.h" 20
wait_until 20 _w_holds_left 0 2001 || not_ok "late grant honoured: granted to w, its short lease left"
kill -CONT "$(pid_of "$name.w")"
wait_until 20 test -s "$T/$name.wtok"
check "a grant read late but still counted by the server: the command runs" test -s "$T/$name.wtok"
check "... confirmed before it started: the server counts a renewed lease (more than 15 s of 30 s left)" _w_holds_left 15000 1e12
expect_eq "... with the grant's token" "$(rcli GET "$(lkey "$name" token)")" "$(cat "$T/$name.wtok" 2>/dev/null)"
touch "$T/$name.done"
await "$name.w" 20
expect_eq "... and it exits 0" 0 "$(code_of "$name.w")"
_no_early_note() { ! err_of "$1" | grep -q "next renewal confirms"; }
check "... --verbose says nothing of a start before the confirmation" _no_early_note "$name.w"
expect_eq "... leaving the slot free" "0 0" "$(holding "$name") $(queued "$name")"

# ---- a grant found by the next acquire call renews the lease ----------------
# A waiter whose slice ended just before its grant learns of it from its
# next acquire call ('held'), and counts its lease from the sending of that
# call. Stopped until its slice has ended on the server, granted (on the
# server the grant holds only 2 s until confirmed), and let run again at
# once: unless that 'held' renewed the lease,
# the server expires it while its command runs, and z (queued once w
# holds, renewing every second) is granted the slot within w's 4 s command
# and runs alongside. (z's lease is not short: a pushed grant lasts at most
# its own lease until confirmed, and a 0.3 s one lapsed on a loaded CI run
# before z could confirm it.)
_blocked_is() { [ "$(rcli INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" = "$1" ]; }
name=$(fresh hr)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 30 -- sh -c "while [ ! -e '$T/$name.go' ]; do sleep 0.02; done"
wait_until 20 _holding_is "$name" 1 || not_ok "held renews: h holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 9 --timeout 60 -- \
    sh -c "echo \$\$ > '$T/$name.wpid'; exec sleep 4"
wait_until 20 _queued_is "$name" 1 || not_ok "held renews: w waits"
wait_until 20 _blocked_is 1 || not_ok "held renews: w blocks on its wake list"
kill -STOP "$(pid_of "$name.w")"
wait_until 20 _blocked_is 0 || not_ok "held renews: w's slice ended on the server"
touch "$T/$name.go"
await "$name.h" 20
kill -CONT "$(pid_of "$name.w")"
wait_until 20 test -s "$T/$name.wpid" || not_ok "held renews: w runs its command"
spawn "$name.z" $RBARRIER lock --name "$name" --id z --lease 3 --timeout 60 -- \
    sh -c "if kill -0 \$(cat '$T/$name.wpid') 2>/dev/null; then echo overlap; else echo alone; fi > '$T/$name.zres'"
await "$name.w" 30
await "$name.z" 30
expect_eq "a grant found by the next acquire call: the waiter runs its command" 0 "$(code_of "$name.w")"
expect_eq "... and z's command never runs while w's does" alone "$(cat "$T/$name.zres" 2>/dev/null)"
expect_eq "... z runs after it" 0 "$(code_of "$name.z")"
