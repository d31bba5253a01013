# A lock whose state vanishes or is revoked while held: FLUSHALL (the state
# lost), reset --lock (revoked). The holder stops its command and says why
# (exit 1 for a loss, 3 for a revocation); tokens never repeat or go back.
# Overlap is measured as a user would: by the commands' own timestamps in
# a shared file. A private server.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

lkey() { echo "rb:l:{$1}${2:+:$2}"; }
holding() { rcli ZCARD "$(lkey "$1" holders)"; }
_holding_is() { [ "$(holding "$1")" = "$2" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
T=$RB_TEST_TMP

use_own_redis lockloss

# A command that logs "start <token> <ns>" and "end <token> <ns>" around
# its work, and its pid; it works until killed or its flag file appears.
worker() {
    echo "echo \$\$ > '$T/$1.cmd'; echo \"start \$RBARRIER_LOCK_TOKEN \$(date +%s%N)\" >> '$2'
          trap 'echo \"end \$RBARRIER_LOCK_TOKEN \$(date +%s%N)\" >> \"$2\"; exit 0' TERM
          while [ ! -e '$T/$1.go' ]; do sleep 0.05; done
          echo \"end \$RBARRIER_LOCK_TOKEN \$(date +%s%N)\" >> '$2'"
}

# ---- FLUSHALL while held: exit 1 (state lost), tokens go on growing ----------
name=$(fresh flush)
log=$T/$name.log
spawn "$name.a" $RBARRIER lock --name "$name" --id a --lease 1.5 --kill-after 1 -- \
    sh -c "$(worker "$name.a" "$log")"
wait_until 20 test -s "$T/$name.a.cmd" || not_ok "flush: a runs its command"
tok_a=$(cut -d' ' -f2 "$log" | head -1)
rcli FLUSHALL >/dev/null
t0=$(now_ms)
await "$name.a" 15
ms=$(took_ms "$name.a" "$t0")
expect_eq "FLUSHALL while held: the holder exits 1 (state lost)" 1 "$(code_of "$name.a")"
check "... at its next renewal (<= lease/3 + 1.5 s; $ms ms)" test "$ms" -le 2000
expect_match "... saying the state is gone" "state is gone" "$(err_of "$name.a")"
check "... and its command is gone" gone "$(cat "$T/$name.a.cmd")"
rb lock --name "$name" --id b -- sh -c "echo \$RBARRIER_LOCK_TOKEN > '$T/$name.btok'"
tok_b=$(cat "$T/$name.btok")
check "a grant after the loss has a larger token ($tok_a -> $tok_b)" test "$tok_b" -gt "$tok_a"
check "... below 2^53" test "$tok_b" -lt 9007199254740992

# ---- a waiter whose state vanished: exit 1, its command never runs -------------
name=$(fresh flushw)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 1.5 -- \
    sh -c "$(worker "$name.h" "$T/$name.log")"
wait_until 20 test -s "$T/$name.h.cmd" || not_ok "flush waiter: h holds"
spawn "$name.w" $RBARRIER lock --name "$name" --id w --lease 1.5 -- touch "$T/$name.w-ran"
wait_until 20 test "$(rcli ZCARD "$(lkey "$name" queue)")" = 1 || not_ok "flush waiter: w waits"
rcli FLUSHALL >/dev/null
await "$name.w" 15; await "$name.h" 15
expect_eq "FLUSHALL while waiting: the waiter exits 1" 1 "$(code_of "$name.w")"
check "... without running its command" test ! -e "$T/$name.w-ran"
expect_eq "... and the holder exits 1" 1 "$(code_of "$name.h")"
