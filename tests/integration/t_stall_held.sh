# --stall-after on lock and wait --once: a command that holds a lock or a
# round and makes no progress would hold it for ever; it is stopped, the
# lock given back (the round broken), and every party exits 3.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
gone() { ! kill -0 "$1" 2>/dev/null; }
pid_in() { cat "$1" 2>/dev/null || echo 999999999; }

# 1. lock: a command that stops touching $RBARRIER_PROGRESS is stopped, and
#    the lock is free again at once.
name=$(fresh lk)
t0=$(now_ms)
rb lock --name "$name" --stall-after 1 -- \
    sh -c "echo \$\$ > '$T/$name.pid'; touch \"\$RBARRIER_PROGRESS\"; sleep 0.3; touch \"\$RBARRIER_PROGRESS\"; sleep 60" \
    2> "$T/$name.err"
code=$?
t1=$(now_ms)
expect_eq "lock --stall-after: a stuck command makes lock exit 3" 3 "$code"
expect_match "... saying it made no progress" "lock $name: the command made no progress for 1\.[0-9]s; it was stopped" \
    "$(cat "$T/$name.err")"
check "... after its last progress and the stall time, not at once ($((t1 - t0)) ms >= 1300)" \
    test $((t1 - t0)) -ge 1300
check "... well before the command would have ended (< 30 s)" test $((t1 - t0)) -lt 30000
check "... the command is gone" gone "$(pid_in "$T/$name.pid")"
rb lock --name "$name" -n -- true
expect_eq "... and the lock is free: a non-blocking attempt gets it" 0 $?

# 2. lock: a command that writes its log keeps the lock while it writes.
name=$(fresh lp)
rb lock --name "$name" --stall-after 1 --progress-file "$T/$name.log" -- \
    sh -c "for i in 1 2 3 4 5 6; do echo step \$i >> '$T/$name.log'; sleep 0.4; done"
expect_eq "lock --progress-file: a command whose log grows runs to its end (2.4 s > 1 s)" 0 $?

# 3. wait --once: the command that would hold the round for ever is
#    stopped; both parties exit 3.
name=$(fresh once)
( rb wait --name "$name" --n 2 --id p1 --timeout 60 2> "$T/$name.p1.err"; echo $? > "$T/$name.p1" ) &
wait_arrived "$name" 1 || not_ok "once: the first party waits"
rb wait --name "$name" --n 2 --id p2 --timeout 60 --stall-after 1 \
    --once "echo \$\$ > '$T/$name.pid'; touch \"\$RBARRIER_PROGRESS\"; sleep 60" 2> "$T/$name.p2.err"
expect_eq "wait --once --stall-after: the party that ran the stuck command exits 3" 3 $?
expect_match "... saying it made no progress" "the once-command made no progress for 1\.[0-9]s" \
    "$(cat "$T/$name.p2.err")"
wait_until 20 test -s "$T/$name.p1"
expect_eq "... the other party exits 3 too" 3 "$(cat "$T/$name.p1" 2>/dev/null)"
check "... the command is gone" gone "$(pid_in "$T/$name.pid")"

# 4. Bad usage: exit 2, one line, nothing sent.
before=$(cmdstats)
out=$(rb wait --name "$(fresh b)" --n 1 --stall-after 1 2>&1)
expect_eq "--stall-after without --once: exit 2" 2 $?
expect_match "... saying it needs --once" "need --once" "$out"
out=$(rb lock --name "$(fresh b)" --progress-file /tmp/x -- true 2>&1)
expect_eq "lock --progress-file without --stall-after: exit 2" 2 $?
out=$(rb lock --name "$(fresh b)" --stall-after 0.01 -- true 2>&1)
expect_eq "lock --stall-after below 0.1 s: exit 2" 2 $?
expect_eq "... nothing reached Redis" "$before" "$(cmdstats)"
