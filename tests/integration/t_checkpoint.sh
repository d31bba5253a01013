# Checkpoint rounds (issue: --once, run, --value/--reduce, --expect, the
# arrival index, progress on a terminal). Times are ms stamps taken by the
# processes themselves; conditions are awaited, never slept for.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

# 1. Four parties, --once 'echo $RBARRIER_ID >> F': one line, written
#    before anyone is released; then 20 rounds give exactly 20 lines.
name=$(fresh once); f=$T/$name.f
for i in 0 1 2 3; do
    ( rb wait --name "$name" --n 4 --id "w$i" --timeout 30 \
          --once "sleep 0.3; echo \"\$RBARRIER_ID \$(date +%s%3N)\" >> '$f'"
      echo "$? $(ms)" > "$T/$name.$i" ) &
done
wait
expect_eq "--once: exactly one line" 1 "$(wc -l < "$f")"
written=$(cut -d' ' -f2 "$f")
early=0 codes=""
for i in 0 1 2 3; do
    read -r code at < "$T/$name.$i"; codes="$codes$code"
    [ "$at" -lt "$written" ] && early=$((early + 1))
done
expect_eq "--once: all four exit 0" 0000 "$codes"
expect_eq "--once: nobody released before the line was written" 0 "$early"
expect_match "--once: the runner's id is in the line" "^w[0-3] " "$(cat "$f")"
f2=$T/$name.f2
for i in 0 1 2 3; do
    ( for r in $(seq 1 20); do
          rb wait --name "$name-20" --n 4 --id "w$i" --timeout 60 \
              --once "echo \$RBARRIER_GEN \$RBARRIER_ID >> '$f2'" || exit 1
      done ) &
done
fails=0
for job in $(jobs -p); do wait "$job" || fails=$((fails + 1)); done
expect_eq "20 --once rounds: every party exits 0" 0 "$fails"
expect_eq "20 --once rounds: exactly 20 lines" 20 "$(wc -l < "$f2")"
expect_eq "... one per round (gens 1..20)" "$(seq 1 20 | tr '\n' ' ')" \
    "$(cut -d' ' -f1 "$f2" | sort -n | tr '\n' ' ')"
# Exactly one run also when the completing arrival's reply is lost and
# the arrival is resent.
f3=$T/$name.f3
for i in 0 1 2; do
    rb wait --name "$name-lost" --n 4 --id "w$i" --timeout 30 --once "echo x >> '$f3'" &
done
wait_arrived "$name-lost" 3
RBARRIER_FAULT=arrive-reply:1 $RBARRIER_FAULT_BIN wait --name "$name-lost" --n 4 --id w3 \
    --timeout 30 --once "echo \$RBARRIER_ID >> '$f3'"
expect_eq "a lost arrival reply: the resent arrival exits 0" 0 $?
wait
expect_eq "... and the command ran once, on that party" "w3" "$(cat "$f3")"

# 2. --once 'exit 7': that party exits 7; the other three exit 3 with the
#    reason.
name=$(fresh once7)
for i in 0 1 2; do
    ( rb wait --name "$name" --n 4 --id "w$i" --timeout 30 --once 'exit 7' 2> "$T/$name.$i.err"
      echo $? > "$T/$name.$i" ) &
done
wait_arrived "$name" 3
rb wait --name "$name" --n 4 --id w3 --timeout 30 --once 'exit 7' 2> "$T/$name.3.err"
expect_eq "--once 'exit 7': the runner exits 7" 7 $?
expect_match "... and says why" "once-command failed on w3 \(exit 7\)" "$(cat "$T/$name.3.err")"
wait
for i in 0 1 2; do
    expect_eq "... w$i exits 3" 3 "$(cat "$T/$name.$i")"
    expect_match "... w$i names the runner and its status" \
        "broken: once-command failed on w3 \(exit 7\)" "$(cat "$T/$name.$i.err")"
done

# 3. The runner killed (SIGKILL) while its command runs: the others exit 3
#    within 4 s with --lease 2.
name=$(fresh oncekill); mark=$T/$name.started
for i in 0 1 2; do
    ( rb wait --name "$name" --n 4 --id "w$i" --lease 2 --timeout 60 --once 'exit 0' 2> "$T/$name.$i.err"
      echo "$? $(ms)" > "$T/$name.$i" ) &
done
wait_arrived "$name" 3
( exec $RBARRIER wait --name "$name" --n 4 --id runner --lease 2 --timeout 60 \
      --once "touch '$mark'; exec sleep 30" ) 2>/dev/null &
runner=$!
check "the runner started its command" wait_until 20 test -e "$mark"
t0=$(ms)
kill -9 "$runner"
wait "$runner" 2>/dev/null
late=0 codes=""
for i in 0 1 2; do
    while [ ! -s "$T/$name.$i" ]; do sleep 0.05; [ $(( $(ms) - t0 )) -gt 20000 ] && break; done
    read -r code at < "$T/$name.$i"; codes="$codes$code"
    [ $((at - t0)) -gt 4000 ] && late=$((late + 1))
done
expect_eq "runner killed: the others exit 3" 333 "$codes"
expect_eq "... within 4 s of the kill" 0 "$late"
expect_match "... naming the runner's lease" "lease of runner expired" "$(cat "$T/$name.0.err")"
wait

# 4. run -- CMD with 3 parties, arriving 0.3 s apart, commands of
#    different lengths: all exit 0; no command starts before all entered,
#    nobody leaves before every command ended. (A command that fails
#    breaks the job: t_job.)
name=$(fresh run); log=$T/$name.log
for i in 0 1 2; do
    ( sleep "0.$((i * 3))"
      echo "enter $(ms)" >> "$log"
      rb run --name "$name" --n 3 --id "r$i" --timeout 30 -- \
          sh -c "echo \"start \$(date +%s%3N)\" >> '$log'; sleep 0.$((i + 1)); echo \"end \$(date +%s%3N)\" >> '$log'"
      code=$?
      echo "leave $(ms) $code" >> "$log" ) &
done
wait
last_enter=$(grep '^enter' "$log" | cut -d' ' -f2 | sort -n | tail -1)
first_start=$(grep '^start' "$log" | cut -d' ' -f2 | sort -n | head -1)
last_end=$(grep '^end' "$log" | cut -d' ' -f2 | sort -n | tail -1)
first_leave=$(grep '^leave' "$log" | cut -d' ' -f2 | sort -n | head -1)
expect_eq "run: three commands ran" 3 "$(grep -c '^start' "$log")"
expect_eq "run: all three exit 0" "0 0 0" "$(grep '^leave' "$log" | cut -d' ' -f3 | tr '\n' ' ' | sed 's/ $//')"
check "run: no command started before all entered ($first_start >= $last_enter)" test "$first_start" -ge "$last_enter"
check "run: nobody left before every command ended ($first_leave >= $last_end)" test "$first_leave" -ge "$last_end"
rb run --name "$(fresh run1)" --n 1 -- true
expect_eq "run -- true with n=1 exits 0" 0 $?
rb run --name "$(fresh run1)" --n 1 2>/dev/null
expect_eq "run without a command exits 2" 2 $?

# 5. --value 3, 9, 4: max prints 9 everywhere; sum 16; all the three in
#    arrival order.
for reduce in max sum all; do
    name=$(fresh val)
    for v in 3 9; do
        rb wait --name "$name" --n 3 --id "v$v" --value "$v" --reduce "$reduce" --timeout 20 > "$T/$name.$v" &
        wait_arrived "$name" "$([ "$v" = 3 ] && echo 1 || echo 2)"
    done
    rb wait --name "$name" --n 3 --id v4 --value 4 --reduce "$reduce" --timeout 20 > "$T/$name.4"
    wait
    case $reduce in
        max) want=9 ;; sum) want=16 ;; all) want=$'3\n9\n4' ;;
    esac
    for v in 3 9 4; do
        expect_eq "--reduce $reduce: party $v prints the agreed result" "$want" "$(cat "$T/$name.$v")"
    done
done
err=$(rb wait --name "$(fresh val)" --n 1 --value abc --reduce max 2>&1)
expect_eq "--value abc --reduce max exits 2" 2 $?
rb wait --name "$(fresh val)" --n 1 --reduce max 2>/dev/null
expect_eq "--reduce without --value exits 2" 2 $?

# 6. --expect a,b,c --timeout 1 with only a and b: every message names c;
#    --id d exits 2, as does an --n that disagrees.
name=$(fresh expect)
rb wait --name "$name" --expect a,b,c --id a --timeout 1 2> "$T/$name.a" &
rb wait --name "$name" --expect a,b,c --id b --timeout 1 2> "$T/$name.b" &
wait
for p in a b; do
    expect_match "--expect: party $p's message names c" "missing: c" "$(cat "$T/$name.$p")"
done
err=$(rb wait --name "$name" --expect a,b,c --id d 2>&1)
expect_eq "--expect a,b,c --id d exits 2" 2 $?
expect_match "... naming the set" "not one of --expect a,b,c" "$err"
rb wait --name "$name" --expect a,b,c --id a --n 4 2>/dev/null
expect_eq "--expect of 3 with --n 4 exits 2" 2 $?

# 7. Five parties arriving one by one get indices 0..4 in arrival order.
name=$(fresh index)
for i in 0 1 2 3; do
    rb wait --name "$name" --n 5 --id "p$i" --print-index --timeout 20 > "$T/$name.$i" &
    wait_arrived "$name" $((i + 1))
done
rb wait --name "$name" --n 5 --id p4 --print-index --timeout 20 > "$T/$name.4"
wait
got=""
for i in 0 1 2 3 4; do got="$got$(cat "$T/$name.$i")"; done
expect_eq "--print-index: 0..4 in arrival order" 01234 "$got"
js=$(rb wait --name "$(fresh index)" --n 1 --json)
expect_match "--json has the index" '"index":0' "$js"
expect_eq "\$RBARRIER_INDEX in --once" 0 "$(rb wait --name "$(fresh index)" --n 1 --once 'echo $RBARRIER_INDEX')"

# 8. A party arriving with an id already waiting gets a warning; a party
#    timing out alone right after a broken round is told that round's
#    reason.
name=$(fresh dup)
rb wait --name "$name" --n 2 --id same --timeout 20 2>/dev/null &
first=$!
wait_arrived "$name" 1
err=$(rb wait --name "$name" --n 2 --id same --timeout 0.5 2>&1)
expect_match "a repeated id is warned about" "warning: .*id 'same' was already waiting" "$err"
wait $first
name=$(fresh alone)
rb wait --name "$name" --n 2 --id a --timeout 0.5 2>/dev/null           # round 1 breaks
err=$(rb wait --name "$name" --n 2 --id a --timeout 0.5 2>&1)            # alone in round 2
expect_match "alone after a broken round: told that round's reason" \
    "which began when round 1 broke: a timed out after 0.5s" "$err"

# 9. Progress: under a pseudo-terminal a line appears and is redrawn each
#    second; with stderr to a file, nothing of it.
if command -v script >/dev/null; then
    name=$(fresh progress)
    script -qc "$RBARRIER wait --name $name --expect w0,w1 --id w0 --timeout 3.5" /dev/null > "$T/$name.tty" 2>&1
    tty=$(tr '\r' '\n' < "$T/$name.tty")
    expect_match "pty: the progress line appears" "$name: 1/2 arrived, waiting 0s \(missing w1\)" "$tty"
    expect_match "... and is redrawn each second" "waiting 1s.*" "$(printf '%s' "$tty" | tr '\n' ' ')"
    expect_match "... up to 3 s" "waiting 3s" "$tty"
    check "... and is erased (the last redraw is followed by an erase)" grep -q $'\r\033\\[K' "$T/$name.tty"
    rb wait --name "$(fresh progress)" --n 2 --timeout 1.5 2> "$T/$name.file"
    check "stderr to a file: no progress line" sh -c "! grep -q 'arrived, waiting' '$T/$name.file'"
    script -qc "$RBARRIER wait --name $(fresh progress) --n 2 --timeout 1.5 --quiet" /dev/null > "$T/$name.quiet" 2>&1
    check "--quiet on a terminal: no progress line" sh -c "! grep -q 'arrived, waiting' '$T/$name.quiet'"
else
    skip "progress under a pseudo-terminal: no script(1)"
fi

# 10. The README's checkpoint script, as printed there, with 3 workers: it
#     trains 4 steps between barriers and saves twice, once per checkpoint,
#     at the agreed step.
root=$(cd "$RB_TESTS_DIR/.." && pwd)
d=$T/readme-ckpt; mkdir -p "$d/bin"
sed -n '/^<!-- checkpoint-script -->$/,/^<!-- \/checkpoint-script -->$/p' "$root/README.md" |
    sed '1,2d;$d' | sed '$d' > "$d/checkpoint.sh"
printf '#!/bin/sh\nexec %s "$@"\n' "$RBARRIER" > "$d/bin/rbarrier"
printf '#!/bin/sh\necho "$1" >> "%s/trained.$RBARRIER_ID"\n' "$d" > "$d/train.sh"
printf '#!/bin/sh\necho "$1 $RBARRIER_ID" >> "%s/saved"\n' "$d" > "$d/save.sh"
chmod +x "$d/bin/rbarrier" "$d/train.sh" "$d/save.sh"
run_id=$(fresh readme)
for id in w0 w1 w2; do
    ( cd "$d" && PATH="$d/bin:$PATH" PEERS=w0,w1,w2 STEPS=4 EVERY=2 \
          TRAIN="$d/train.sh" SAVE="$d/save.sh" \
          sh "$d/checkpoint.sh" "$id" > "$d/out.$id" 2>&1
      echo $? > "$d/code.$id" ) &
done
wait
expect_eq "README checkpoint script: 3 workers exit 0" "000" "$(cat "$d"/code.w0 "$d"/code.w1 "$d"/code.w2 | tr -d '\n')"
expect_eq "... each trained steps 0..3" "0 1 2 3" "$(tr '\n' ' ' < "$d/trained.w1" | sed 's/ $//')"
expect_eq "... two checkpoints, saved once each, at steps 2 and 4" "2 4" "$(cut -d' ' -f1 "$d/saved" | tr '\n' ' ' | sed 's/ $//')"
