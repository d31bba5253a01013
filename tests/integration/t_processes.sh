# Every process accounted for (--once and run): a command's whole process
# group goes when the round breaks, the party times out or gets SIGTERM;
# --kill-after ends a command that ignores SIGTERM; exec failures exit
# 126/127; '--once -x' is a command; as PID 1 commands run and orphans are
# reaped; under nohup a HUP changes nothing.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

# A command that leaves a grandchild in the background and records both
# pids, then blocks: "$1" is the directory for the pid files.
leaver() {
    echo "sleep 1000 & echo \$! > '$1/grandchild'; echo \$\$ > '$1/child'; wait"
}

# 1. The round breaks while the --once command runs (the other party's
#    --timeout): the runner exits 3 with the round's reason, and neither the
#    command nor its grandchild outlives it.
name=$(fresh brk); d=$T/$name; mkdir -p "$d"
( rb wait --name "$name" --n 2 --id w0 --timeout 3 2> "$d/w0.err"; echo $? > "$d/w0.code" ) &
wait_arrived "$name" 1
rb wait --name "$name" --n 2 --id w1 --lease 1.5 --timeout 60 \
    --once "$(leaver "$d")" 2> "$d/w1.err"
expect_eq "--once stopped by a broken round: exit 3" 3 $?
expect_match "... with the round's reason" "broken.*w0 timed out" "$(cat "$d/w1.err")"
wait
expect_eq "... the party that timed out exits 124" 124 "$(cat "$d/w0.code")"
check "... the command is gone" pid_gone "$(cat "$d/child")"
check "... its background grandchild is gone" pid_gone "$(cat "$d/grandchild")"

# 2. The --once party's own --timeout: 124, the group gone.
name=$(fresh own); d=$T/$name; mkdir -p "$d"
rb wait --name "$name" --n 1 --timeout 2 --once "$(leaver "$d")" 2>/dev/null
expect_eq "--once past its party's --timeout: exit 124" 124 $?
check "... its grandchild is gone" pid_gone "$(cat "$d/grandchild")"

# 3. SIGTERM to the party while --once runs: 143, the group gone.
name=$(fresh term); d=$T/$name; mkdir -p "$d"
$RBARRIER wait --name "$name" --n 1 --once "$(leaver "$d")" 2>/dev/null &
p=$!
check "--once command started" wait_until 20 test -s "$d/grandchild"
kill -TERM "$p"; wait "$p"
expect_eq "--once party got SIGTERM: exit 143" 143 $?
check "... its command is gone" pid_gone "$(cat "$d/child")"
check "... and its grandchild" pid_gone "$(cat "$d/grandchild")"

# 4. --kill-after: a command that ignores SIGTERM (so does everything it
#    starts) is SIGKILLed that long after; rbarrier is alive until then.
for cmd in once run; do
    name=$(fresh ka$cmd); d=$T/$name; mkdir -p "$d"
    body="trap '' TERM; $(leaver "$d")"
    if [ $cmd = once ]; then
        $RBARRIER wait --name "$name" --n 1 --kill-after 2 --once "$body" 2>/dev/null &
    else
        $RBARRIER run --name "$name" --n 1 --kill-after 2 -- sh -c "$body" 2>/dev/null &
    fi
    p=$!
    check "$cmd: the command started" wait_until 20 test -s "$d/grandchild"
    t0=$(ms)
    kill -TERM "$p"
    wait "$p"; code=$?; t1=$(ms)
    expect_eq "$cmd --kill-after 2: exit 143" 143 "$code"
    # Not before 2 s (the party outlived neither its command nor the
    # kill-after), and not much later (no wait for anything else).
    el=$((t1 - t0))
    if [ $el -ge 1900 ] && [ $el -lt 9000 ]; then ok "$cmd: the party ended with its command, 2 s after SIGTERM (${el} ms)"
    else not_ok "$cmd: the party ended with its command, 2 s after SIGTERM (${el} ms)"; fi
    check "$cmd: the command is gone when the party is" pid_gone "$(cat "$d/child")"
    check "$cmd: the grandchild too" pid_gone "$(cat "$d/grandchild")"
done

# 4b. While it waits out --kill-after, rbarrier sleeps: the CPU time of the
#     party and its reaped command stays far below the 2 s it waited.
name=$(fresh kacpu); d=$T/$name; mkdir -p "$d"
body="trap '' TERM; $(leaver "$d")"
cpu=$( (
    $RBARRIER wait --name "$name" --n 1 --kill-after 2 --once "$body" 2>/dev/null &
    p=$!
    wait_until 20 test -s "$d/grandchild"
    kill -TERM "$p"; wait "$p"
    times
) | tail -1 | awk '{ n = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); n += a[1] * 60 + a[2] } printf "%d", n * 1000 }')
case $RBARRIER in
*valgrind*) skip "kill-after CPU time: valgrind's own CPU time would be measured" ;;
*) check "kill-after: no busy wait (${cpu} ms CPU in a 2 s wait)" test "${cpu:-99999}" -lt 500 ;;
esac

# 5. run: SIGTERM while the command runs ends its whole group (default
#    kill-after; the command does not ignore TERM).
name=$(fresh runterm); d=$T/$name; mkdir -p "$d"
$RBARRIER run --name "$name" --n 1 -- sh -c "$(leaver "$d")" 2>/dev/null &
p=$!
check "run: the command started" wait_until 20 test -s "$d/grandchild"
kill -TERM "$p"; wait "$p"
expect_eq "run got SIGTERM: exit 143" 143 $?
check "run: the grandchild is gone" pid_gone "$(cat "$d/grandchild")"

# 6. A command that ends leaves nothing behind either.
name=$(fresh done); d=$T/$name; mkdir -p "$d"
rb wait --name "$name" --n 1 --once "sleep 1000 & echo \$! > '$d/grandchild'"
expect_eq "--once that exits 0 with a background job: exit 0" 0 $?
check "... the background job is gone" pid_gone "$(cat "$d/grandchild")"

# 7. Commands that cannot run exit as the shell does.
printf 'echo no\n' > "$T/notexec"; chmod 644 "$T/notexec"
out=$(rb run --name "$(fresh nf)" --n 1 --timeout 20 -- /nonexistent/cmd 2>&1)
expect_eq "run: command not found exits 127" 127 $?
expect_match "... and says why" "cannot run '/nonexistent/cmd'" "$out"
rb run --name "$(fresh nx)" --n 1 --timeout 20 -- "$T/notexec" 2>/dev/null
expect_eq "run: command not executable exits 126" 126 $?
rb wait --name "$(fresh onf)" --n 1 --once "/nonexistent/cmd" 2>/dev/null
expect_eq "--once: command not found exits 127" 127 $?
rb wait --name "$(fresh onx)" --n 1 --once "$T/notexec" 2>/dev/null
expect_eq "--once: command not executable exits 126" 126 $?
out=$(rb wait --name "$(fresh dash)" --n 1 --once '-x' 2>&1)
expect_eq "--once '-x' is a command (not found: 127), not a shell option" 127 $?
expect_match "... the shell looked for a command named -x" "-x: not found" "$out"

# 8. As PID 1 (a container's entrypoint): commands run, orphans are reaped.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    out=$(unshare --pid --fork --mount-proc $RBARRIER wait --name "$(fresh pid1)" --n 1 \
          --once 'echo once-ran' 2>&1)
    expect_eq "PID 1: wait --once runs its command (exit 0)" "0 once-ran" "$? $out"
    out=$(unshare --pid --fork --mount-proc $RBARRIER run --name "$(fresh pid1r)" --n 1 \
          -- sh -c 'echo run-ran; exit 5' 2>&1)
    expect_eq "PID 1: run runs its command (its status 5)" "5 run-ran" "$? $out"
    # An orphan in another session dies while the command runs: PID 1 must
    # collect it, or it stays a zombie.
    d=$T/$(fresh reap); mkdir -p "$d"
    unshare --pid --fork --mount-proc $RBARRIER wait --name "$(fresh pid1z)" --n 1 --once "
        sh -c 'setsid sh -c \"echo \\\$\\\$ > $d/orphan; exec sleep 0.3\" & exit 0'
        i=0; while [ ! -s $d/orphan ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
        o=\$(cat $d/orphan)
        i=0; while [ -e /proc/\$o ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
        if [ -e /proc/\$o ]; then echo zombie > $d/result; else echo reaped > $d/result; fi" 2>/dev/null
    expect_eq "PID 1: an orphan that ends is reaped" reaped "$(cat "$d/result" 2>/dev/null)"
else
    skip "PID 1 checks: unshare --pid --fork --mount-proc is not permitted here"
fi

# 9. Under nohup SIGHUP stays ignored: a HUP neither ends the party nor
#    breaks its round.
name=$(fresh hup)
nohup $RBARRIER wait --name "$name" --n 2 --id w0 --timeout 60 > "$T/$name.out" 2> "$T/$name.err" &
p=$!
wait_arrived "$name" 1
sigign=$(awk '/^SigIgn:/ { print $2 }' "/proc/$p/status")
expect_eq "nohup: SIGHUP is still ignored by the waiting party" 1 $(( 0x$sigign & 1 ))
kill -HUP "$p"
rb wait --name "$name" --n 2 --id w1 --timeout 20
expect_eq "nohup: after a HUP the round still passes for the other party" 0 $?
wait "$p"
expect_eq "... and for the party that got the HUP" 0 $?
