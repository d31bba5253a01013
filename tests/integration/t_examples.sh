# The shell examples: examples/worker.sh as 3 processes x 5 iterations keeps
# the demo's property (globals 1..15 each once, local = 3*k on each worker's
# k-th line); examples/checkpoint.sh with 3 parties saves every round and
# nobody resumes before all have saved; with a party missing (no restarts)
# it exits 124 for the one that gives up and 3 for the one left waiting,
# saving nothing; a worker that crashes once between checkpoints restarts
# all three from the last checkpoint, and they all finish (exit 0) with the
# state a run without the crash has.
. "$RB_TESTS_DIR/lib.sh"

ex=$(cd "$RB_TESTS_DIR/../examples" && pwd)
export RBARRIER   # the examples run "$RBARRIER" unquoted (valgrind prefix)

check "examples are executable" test -x "$ex/worker.sh" -a -x "$ex/checkpoint.sh"
check "examples pass sh -n" sh -n "$ex/worker.sh" "$ex/checkpoint.sh"

# 1. worker.sh: 3 workers x 5 iterations against the shared server.
run=$(fresh shell)
out=$RB_TEST_TMP/$run.out
: > "$out"
pids=""
for i in 0 1 2; do
    TIMEOUT=40 "$ex/worker.sh" "$i" 3 5 "$run" >> "$out" 2> "$RB_TEST_TMP/$run.err.$i" &
    pids="$pids $!"
done
codes=""
for p in $pids; do wait "$p"; codes="$codes$?"; done
expect_eq "3 worker.sh processes exit 0" 000 "$codes"
expect_eq "worker.sh: 15 lines, globals 1..15 once each, local = 3*k" ok \
    "$(demo_lines_check "$out" 3 5)"
expect_eq "worker.sh: the parameter ends at 15" 15 "$(rb get --param "$run")"
expect_eq "worker.sh: nothing on stderr" "" "$(cat "$RB_TEST_TMP/$run".err.*)"

# The RUN environment variable names the run when no argument does, and
# `rbarrier worker` of the same run joins shell workers (same ids, names).
run=$(fresh mixed)
out=$RB_TEST_TMP/$run.out
: > "$out"
RUN=$run TIMEOUT=40 "$ex/worker.sh" 0 2 4 >> "$out" 2>&1 &
a=$!
rb worker --worker 1 --workers 2 --iters 4 --run "$run" --timeout 40 >> "$out" 2>&1
b=$?
wait "$a"; a=$?
expect_eq "a shell worker and an rbarrier worker in one run exit 0" 00 "$a$b"
expect_eq "mixed run: 8 lines, globals 1..8 once each, local = 2*k" ok \
    "$(demo_lines_check "$out" 2 4)"

# Bad arguments: exit 2 before touching Redis.
"$ex/worker.sh" 3 3 5 2>/dev/null
expect_eq "worker.sh INDEX >= COUNT exits 2" 2 $?
"$ex/worker.sh" x 3 2>/dev/null
expect_eq "worker.sh with a non-number exits 2" 2 $?

# A broken barrier stops the loop with rbarrier's exit status: one of two
# workers, alone, gives up after 1 s (124) and prints no line.
run=$(fresh lonely)
err=$(TIMEOUT=1 "$ex/worker.sh" 0 2 5 "$run" 2>&1 >"$RB_TEST_TMP/$run.out")
expect_eq "worker.sh alone: exits 124 (its own timeout)" 124 $?
expect_eq "worker.sh alone: no worker line" 0 "$(wc -l < "$RB_TEST_TMP/$run.out")"
expect_match "worker.sh alone: says which barrier" "barrier '$run' failed \(exit 124\)" "$err"

# ... and a worker waiting in a round that gets broken (here by `rbarrier
# reset`) exits 3 with the reason, having printed no line.
run=$(fresh broken)
TIMEOUT=40 "$ex/worker.sh" 0 2 5 "$run" > "$RB_TEST_TMP/$run.out" 2> "$RB_TEST_TMP/$run.err" &
a=$!
wait_arrived "$run" 1
rb reset --name "$run" > /dev/null
wait "$a"
expect_eq "worker.sh in a broken round exits 3" 3 $?
expect_match "worker.sh: rbarrier names the reason" "broken:? reset" "$(cat "$RB_TEST_TMP/$run.err")"
expect_eq "worker.sh in a broken round: no worker line" 0 "$(wc -l < "$RB_TEST_TMP/$run.out")"

# 2. checkpoint.sh: 3 parties, 2 rounds, one shared directory.
run=$(fresh ckpt)
dir=$RB_TEST_TMP/$run.d
out=$RB_TEST_TMP/$run.out
: > "$out"
pids=""
for i in 0 1 2; do
    RUN=$run TIMEOUT=40 "$ex/checkpoint.sh" "$i" 3 "$dir" 2 >> "$out" 2>&1 &
    pids="$pids $!"
done
codes=""
for p in $pids; do wait "$p"; codes="$codes$?"; done
expect_eq "3 checkpoint.sh processes exit 0" 000 "$codes"
files=$(cd "$dir" 2>/dev/null && ls | tr '\n' ' ')
expect_eq "6 saves, one per worker and round" \
    "$run.round-1.worker-0 $run.round-1.worker-1 $run.round-1.worker-2 $run.round-2.worker-0 $run.round-2.worker-1 $run.round-2.worker-2 " \
    "$files"
expect_eq "worker 2's round 2 save holds its state" "round 2 worker 2 state 6" \
    "$(cat "$dir/$run.round-2.worker-2" 2>/dev/null)"
# Lines were appended by all three in the order they happened: in each
# round the last "saved" line must come before the first "resumed" line.
order=ok
for r in 1 2; do
    last_saved=$(grep -n "round $r saved" "$out" | tail -1 | cut -d: -f1)
    first_resumed=$(grep -n "round $r resumed" "$out" | head -1 | cut -d: -f1)
    nsaved=$(grep -c "round $r saved" "$out")
    nresumed=$(grep -c "round $r resumed" "$out")
    if [ "$nsaved" != 3 ] || [ "$nresumed" != 3 ] ||
       [ "$last_saved" -gt "$first_resumed" ]; then
        order="round $r: $nsaved saved, $nresumed resumed, last save at line $last_saved, first resume at $first_resumed"
    fi
done
expect_eq "nobody resumed before all three had saved" ok "$order"
# Across workers too: round 2's first barrier needs all three, each of
# which has resumed round 1, so every round-2 save follows every round-1 save.
expect_eq "every round-2 save follows every round-1 save" ok \
    "$(awk '/round 1 saved/ { l1 = NR } /round 2 saved/ && !f2 { f2 = NR }
            END { print (l1 < f2 ? "ok" : "round 1 save at " l1 " after round 2 save at " f2) }' "$out")"

# A party missing, no restarts: worker 0 waits (TIMEOUT 40), worker 1 gives
# up entering the job after 2 s (exit 124) and breaks it; worker 0 then
# exits 3. Nobody saves.
run=$(fresh ckptfail)
dir=$RB_TEST_TMP/$run.d
RESTARTS=0 RUN=$run TIMEOUT=40 "$ex/checkpoint.sh" 0 3 "$dir" 1 > "$RB_TEST_TMP/$run.0" 2>&1 &
a=$!
entering() { rb status --name "$run" --json 2>/dev/null | grep -q '"state":"entering"'; }
check "worker 0 is entering the job" wait_until 20 entering
RESTARTS=0 RUN=$run TIMEOUT=2 "$ex/checkpoint.sh" 1 3 "$dir" 1 > "$RB_TEST_TMP/$run.1" 2>&1
b=$?
wait "$a"; a=$?
expect_eq "checkpoint.sh with a party missing: 3 for the waiter, 124 for the one that gave up" \
    "3 124" "$a $b"
expect_match "the waiter is told who gave up" "$run: job broken: 1 timed out after 2s entering" \
    "$(cat "$RB_TEST_TMP/$run.0")"
expect_match "the one that gave up says so" "1 timed out after 2s entering" \
    "$(cat "$RB_TEST_TMP/$run.1")"
expect_eq "nothing was saved" "" "$(ls "$dir" 2>/dev/null)"

# 3. checkpoint.sh with restarts: 3 workers, 3 rounds; worker 1 is killed
#    (SIGKILL, as the OOM killer does) in its second round's work, after
#    every worker saved round 1. Every worker must start again from round
#    1's checkpoint: nobody saves round 1 twice, every worker's round-3
#    state is the one of a run without the crash (3 * (index + 1): its
#    state of round 1, restored, plus two rounds), and all exit 0.
run=$(fresh ckptcrash)
dir=$RB_TEST_TMP/$run.d
steps=$RB_TEST_TMP/$run.steps
step=$RB_TEST_TMP/$run.step.sh
# STEP ROUND: log "ROUND ID RESTART"; worker 1's round 2 of the first
# attempt kills the worker that runs it (its parent shell).
cat > "$step" <<EOF
#!/bin/sh
echo "\$1 \$RBARRIER_ID \$RBARRIER_RESTART" >> '$steps'
if [ "\$1" = 2 ] && [ "\$RBARRIER_ID" = 1 ] && [ "\$RBARRIER_RESTART" = 0 ]; then
    kill -KILL "\$PPID"
    exit 1
fi
EOF
chmod +x "$step"
pids=""
for i in 0 1 2; do
    STEP=$step RESTARTS=2 RUN=$run TIMEOUT=40 "$ex/checkpoint.sh" "$i" 3 "$dir" 3 \
        > "$RB_TEST_TMP/$run.out.$i" 2> "$RB_TEST_TMP/$run.err.$i" &
    pids="$pids $!"
done
codes=""
for p in $pids; do wait "$p"; codes="$codes$?"; done
out=$(cat "$RB_TEST_TMP/$run".out.*)
expect_eq "a crash between checkpoints: all three exit 0 in the end" 000 "$codes"
expect_eq "... the first attempt: every worker worked round 1, worker 1 round 2 too" \
    "1 0 0|1 1 0|1 2 0|2 1 0|" "$(awk '$3 == 0' "$steps" | sort | grep -v '^2 [02] ' | tr '\n' '|')"
expect_eq "... each worker restarted once, from round 1's checkpoint" \
    "worker 0: restart 1 from the checkpoint of round 1|worker 1: restart 1 from the checkpoint of round 1|worker 2: restart 1 from the checkpoint of round 1|" \
    "$(grep 'restart' <<<"$out" | sort | tr '\n' '|')"
expect_eq "... the restarted attempt worked rounds 2 and 3, on each worker" \
    "2 0 1|2 1 1|2 2 1|3 0 1|3 1 1|3 2 1|" "$(awk '$3 != 0' "$steps" | sort | tr '\n' '|')"
expect_eq "... round 1 saved once by each worker, rounds 2 and 3 after the restart" \
    "3 3 3" "$(for r in 1 2 3; do grep -c "round $r saved" <<<"$out"; done | tr '\n' ' ' | sed 's/ $//')"
expect_eq "... the round-3 states are those of a run without the crash" \
    "round 3 worker 0 state 3|round 3 worker 1 state 6|round 3 worker 2 state 9|" \
    "$(cat "$dir/$run".round-3.worker-[012] 2>/dev/null | tr '\n' '|')"
expect_match "... the others were told why, and that all restart" \
    "1's command was killed by signal 9; restart 1 of 2" "$(cat "$RB_TEST_TMP/$run.err.0")"
