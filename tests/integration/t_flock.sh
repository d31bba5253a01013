# rbarrier lock speaks flock(1): the cases of util-linux's flock tests that
# apply to a lock across machines (non-block with -E, a wait that expires,
# shared beside shared, exclusive beside shared refused with -n, -c, a
# command with arguments and its status, --verbose), written from flock's
# documented behaviour; then what flock lacks: fair read-write order (no
# writer starves), a run of readers granted together, a nested lock of the
# same name, and a semaphore and a read-write lock of one name.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT
T=$RB_TEST_TMP

lkey() { echo "rb:l:{$1}${2:+:$2}"; }
queued() { rcli ZCARD "$(lkey "$1" queue)"; }
holding() { rcli ZCARD "$(lkey "$1" holders)"; }
_queued_is() { [ "$(queued "$1")" = "$2" ]; }
_holding_is() { [ "$(holding "$1")" = "$2" ]; }
hold_until() { echo "while [ ! -e '$1' ]; do sleep 0.05; done"; }
# mode_of NAME ID: the mode status --json shows for a holder or waiter
mode_of() {
    rb status --name "$1" --json | python3 -c '
import json, sys
l = json.load(sys.stdin)["lock"]
for e in l["holders"] + l["waiters"]:
    if e["id"] == sys.argv[1]:
        print(e["mode"])' "$2"
}

# ---- non-block: exit 1, or -E's code, without running the command -----------
name=$(fresh nb)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "nonblock: the holder holds"
t0=$(now_ms)
rb lock --name "$name" -n -- touch "$T/$name.ran" 2>"$T/$name.err"
code=$?
expect_eq "-n on a held lock: exit 1 (flock's)" 1 "$code"
check "... at once ($(since "$t0") ms < 3000)" test "$(since "$t0")" -lt 3000
check "... without running the command" test ! -e "$T/$name.ran"
expect_match "... saying why" "not had" "$(cat "$T/$name.err")"
expect_eq "... and it is not left in the queue" 0 "$(queued "$name")"
rb lock --name "$name" --nonblock --conflict-exit-code 123 -- true 2>/dev/null
expect_eq "--nonblock --conflict-exit-code 123: exit 123" 123 $?
rb lock --name "$name" -n -E 0 -- true 2>/dev/null
expect_eq "-n -E 0: exit 0 (the command did not run)" 0 $?
rb lock --name "$name" -w 0 -E 9 -- true 2>/dev/null
expect_eq "-w 0 is -n: exit -E's 9" 9 $?
touch "$T/$name.go"; await "$name.h" 30
rb lock --name "$name" -n -E 123 -- sh -c 'exit 0'
expect_eq "-n on a free lock: had, the command runs (exit 0)" 0 $?
# On a free lock -n is had every time (no race with a timer).
fails=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    rb lock --name "$name" -n -- true 2>/dev/null || fails=$((fails + 1))
done
expect_eq "-n on a free lock: had 10 times of 10" 0 "$fails"

# ---- wait with expiry --------------------------------------------------------
name=$(fresh w)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "wait: the holder holds"
t0=$(now_ms)
rb lock --name "$name" -w 1.5 -- touch "$T/$name.ran" 2>/dev/null
code=$? ms=$(since "$t0")
expect_eq "-w 1.5 behind a holder: exit 1 (flock's)" 1 "$code"
check "... after about 1.5 s (1.4..6 s; $ms ms)" test "$ms" -ge 1400 -a "$ms" -le 6000
check "... without running the command" test ! -e "$T/$name.ran"
rb lock --name "$name" --wait 0.3 -E 42 -- true 2>/dev/null
expect_eq "--wait 0.3 -E 42: exit 42" 42 $?
rb lock --name "$name" --timeout 0.3 -E 42 -- true 2>/dev/null
expect_eq "--timeout with -E: -E's code on expiry" 42 $?
rb lock --name "$name" --timeout 0.3 -- true 2>/dev/null
expect_eq "--timeout alone keeps timeout(1)'s 124" 124 $?
spawn "$name.w" $RBARRIER lock --name "$name" --id w -w 60 -- true
wait_until 20 _queued_is "$name" 1 || not_ok "wait: a -w 60 waiter queued"
touch "$T/$name.go"; await "$name.h" 30; await "$name.w" 30
expect_eq "-w 60: had once the holder let go (exit 0)" 0 "$(code_of "$name.w")"

# ---- shared beside shared; exclusive beside shared refused ---------------------
name=$(fresh sh)
spawn "$name.s1" $RBARRIER lock --name "$name" --id s1 -s -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "shared: s1 holds"
rb lock --name "$name" --id s2 --shared -n -- touch "$T/$name.s2ran"
expect_eq "shared beside shared: had at once with -n (exit 0)" 0 $?
check "... and its command ran" test -e "$T/$name.s2ran"
rb lock --name "$name" --id x -x -n -- touch "$T/$name.xran" 2>/dev/null
expect_eq "exclusive beside shared, -n: exit 1" 1 $?
check "... without running" test ! -e "$T/$name.xran"
rb lock --name "$name" --id x2 -n -- true 2>/dev/null
expect_eq "the default (exclusive) beside shared, -n: exit 1" 1 $?
expect_eq "status shows the holder's mode" shared "$(mode_of "$name" s1)"
touch "$T/$name.go"; await "$name.s1" 30

name=$(fresh xs)
spawn "$name.x" $RBARRIER lock --name "$name" --id x -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "x then s: x holds"
rb lock --name "$name" --id s -s -n -- true 2>/dev/null
expect_eq "shared beside exclusive, -n: exit 1" 1 $?
expect_eq "status shows an exclusive holder's mode" exclusive "$(mode_of "$name" x)"
touch "$T/$name.go"; await "$name.x" 30

# ---- -c, a command with arguments, statuses -------------------------------------
name=$(fresh c)
out=$(rb lock --name "$name" -c 'echo "$RBARRIER_LOCK:$0"; exit 7')
expect_eq "-c STRING: run by /bin/sh -c, exit status passed (7)" 7 $?
expect_eq "... in sh with the lock's environment" "$name:sh" "$out"
out=$(rb lock --name "$name" --command 'printf %s "a b"')
expect_eq "--command STRING: quoting as the shell's" "a b" "$out"
out=$(rb lock --name "$name" -- printf '%s|%s' 'one two' three)
expect_eq "-- CMD ARGS: arguments kept as given" "one two|three" "$out"
rb lock --name "$name" -- sh -c 'exit 5'
expect_eq "-- CMD: its status passes through (5)" 5 $?
rb lock --name "$name" -c 'kill -TERM $$'
expect_eq "-c: a command killed by SIGTERM: 143" 143 $?

# ---- --verbose ---------------------------------------------------------------
name=$(fresh v)
spawn "$name.h" $RBARRIER lock --name "$name" --id vh -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "verbose: the holder holds"
spawn "$name.v" $RBARRIER lock --name "$name" --id vw --verbose -- true
wait_until 20 _queued_is "$name" 1 || not_ok "verbose: the waiter queued"
touch "$T/$name.go"; await "$name.h" 30; await "$name.v" 30
expect_eq "--verbose: exit 0" 0 "$(code_of "$name.v")"
expect_match "--verbose names what held it up" "held by vh \(exclusive" "$(err_of "$name.v")"
expect_match "--verbose says how long getting it took" "getting it took [0-9.]+s" "$(err_of "$name.v")"
expect_eq "without --verbose a lock says nothing" "" "$(rb lock --name "$name" -- true 2>&1)"

# ---- fair order: a shared request behind a waiting exclusive one waits ----------
name=$(fresh fair)
order=$T/$name.order
spawn "$name.s1" $RBARRIER lock --name "$name" --id s1 -s -- sh -c "echo s1 >> '$order'; $(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "fair: s1 holds"
spawn "$name.x" $RBARRIER lock --name "$name" --id x -- sh -c "echo x >> '$order'; $(hold_until "$T/$name.gox")"
wait_until 20 _queued_is "$name" 1 || not_ok "fair: x waits"
for i in 2 3 4; do
    spawn "$name.s$i" $RBARRIER lock --name "$name" --id "s$i" -s -- sh -c "echo s$i >> '$order'; $(hold_until "$T/$name.gos")"
    wait_until 20 _queued_is "$name" "$i" || not_ok "fair: s$i waits"
done
expect_eq "shared requests behind a waiting exclusive one wait (1 holder, 4 queued)" \
    "1 4" "$(holding "$name") $(queued "$name")"
expect_eq "status shows a waiter's mode" shared "$(mode_of "$name" s3)"
expect_eq "... and the exclusive waiter's" exclusive "$(mode_of "$name" x)"
touch "$T/$name.go"
wait_until 20 _holding_is "$name" 1 && wait_until 20 grep -q x "$order" ||
    not_ok "fair: x granted once s1 left"
expect_eq "the exclusive waiter goes first, alone" "1 3" "$(holding "$name") $(queued "$name")"
touch "$T/$name.gox"
wait_until 20 _holding_is "$name" 3 || not_ok "fair: s2..s4 granted together"
expect_eq "the run of shared requests at the head is granted together" \
    "3 0" "$(holding "$name") $(queued "$name")"
touch "$T/$name.gos"
for i in s1 x s2 s3 s4; do await "$name.$i" 30; done
expect_eq "order: s1, x, then the readers" "s1 x" "$(head -2 "$order" | tr '\n' ' ' | sed 's/ $//')"
tokens=$(rb status --name "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["lock"]["token"])')
check "tokens grow with every grant, shared ones too (last $tokens)" test "$tokens" -gt 0

# Tokens: one per grant, strictly growing, readers included.
name=$(fresh tok)
for i in 1 2 3; do rb lock --name "$name" -s -- sh -c 'echo $RBARRIER_LOCK_TOKEN' >> "$T/$name.t"; done
rb lock --name "$name" -- sh -c 'echo $RBARRIER_LOCK_TOKEN' >> "$T/$name.t"
check "four grants, four growing tokens ($(tr '\n' ' ' < "$T/$name.t"))" \
    sh -c "sort -n -u '$T/$name.t' | cmp -s - '$T/$name.t' && test \$(wc -l < '$T/$name.t') = 4"

# ---- nested: a lock of the same name inside its own command --------------------
name=$(fresh nest)
t0=$(now_ms)
out=$(rb lock --name "$name" --timeout 30 -c \
    "$RBARRIER lock --name \"\$RBARRIER_LOCK\" -- true 2>&1; echo \"inner \$?\"")
expect_match "a nested lock of the same name is refused at once (exit 2)" "inner 2" "$out"
expect_match "... saying it is held by this command's own holder" "already held by this command's own holder" "$out"
check "... without waiting ($(since "$t0") ms < 10000)" test "$(since "$t0")" -lt 10000
out=$(rb lock --name "$name" -c \
    "$RBARRIER lock --name \"\$RBARRIER_LOCK-other\" -- true; echo \"inner \$?\"")
expect_eq "a nested lock of another name runs" "inner 0" "$out"

# ---- a name is a semaphore or a read-write lock, never both ---------------------
name=$(fresh sem)
spawn "$name.h" $RBARRIER lock --name "$name" --id h --max 3 -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "sem: h holds"
before=$(cmdstats | grep -c .)
rb lock --name "$name" -s --timeout 5 -- true 2>"$T/$name.err"
expect_eq "-s on a semaphore in use (--max 3): exit 2" 2 $?
expect_match "... naming both" "semaphore of max 3.*shared" "$(cat "$T/$name.err")"
touch "$T/$name.go"; await "$name.h" 30
name=$(fresh rw)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -s -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "rw: h holds shared"
rb lock --name "$name" --max 2 --timeout 5 -- true 2>"$T/$name.err"
expect_eq "--max 2 on a read-write lock in use: exit 2" 2 $?
expect_match "... saying what it is" "read-write lock" "$(cat "$T/$name.err")"
expect_eq "... and it is not queued" 0 "$(queued "$name")"
touch "$T/$name.go"; await "$name.h" 30

# ---- bad usage: exit 2, one line, nothing sent ---------------------------------
before=$(cmdstats)
for args in "-s -x -- true" "-s --max 2 -- true" "-w 1 --timeout 1 -- true" \
            "-n -w 1 -- true" "-E 256 -- true" "-E x -n -- true" "-w -1 -- true" \
            "-w x -- true" "-c true -- true" "-c" "--na x -- true"; do
    # shellcheck disable=SC2086
    err=$(rb lock --name bad $args 2>&1 >/dev/null)
    code=$?
    expect_eq "lock --name bad $args: exit 2" 2 "$code"
    expect_eq "... one line on stderr" 1 "$(printf '%s\n' "$err" | wc -l)"
done
expect_match "-w with --timeout says they differ" "exclude each other" \
    "$(rb lock --name bad -w 1 --timeout 1 -- true 2>&1)"
expect_eq "bad usage sent nothing to Redis" "$before" "$(cmdstats)"

# ---- hints -----------------------------------------------------------------------
expect_match "--na suggests --name (the option it starts)" "did you mean --name\?" \
    "$(rb lock --na x -- true 2>&1)"
expect_match "wait --na suggests --name, not --n" "did you mean --name\?" \
    "$(rb wait --na x --n 2 2>&1)"
err=$(rb lock --name x sleep 1 2>&1)
expect_eq "a command without '--': exit 2" 2 $?
expect_match "... asking whether '--' was forgotten" "did you forget '--' before the command\?" "$err"
name=$(fresh hint)
spawn "$name.h" $RBARRIER lock --name "$name" --id h -- sh -c "$(hold_until "$T/$name.go")"
wait_until 20 _holding_is "$name" 1 || not_ok "hint: h holds"
expect_match "reset --name of a held lock names --lock" "lock of that name is in use: --lock resets it" \
    "$(rb reset --name "$name")"
touch "$T/$name.go"; await "$name.h" 30
expect_match "lock --help lists lock's own exit meanings" "the lock was not had" "$(rb lock --help)"
check "... and no barrier's round" sh -c "! $RBARRIER lock --help | grep -q 'round was broken'"

# ---- the progress line of a waiting lock on a terminal ---------------------------
if command -v script >/dev/null; then
    name=$(fresh tty)
    spawn "$name.h" $RBARRIER lock --name "$name" --id holder-h -- sh -c "$(hold_until "$T/$name.go")"
    wait_until 20 _holding_is "$name" 1 || not_ok "tty: the holder holds"
    script -qc "$RBARRIER lock --name $name --id tw -w 2.5 -- true" /dev/null > "$T/$name.tty" 2>&1
    expect_match "pty: the waiting line names the holder, its time and the line" \
        "$name: held by holder-h for [0-9]+s, 0 ahead" "$(cat "$T/$name.tty")"
    expect_match "pty: ... and is erased at the end" $'\r\033\\[K' "$(cat "$T/$name.tty")"
    $RBARRIER lock --name "$name" --id fw -w 1.2 -- true 2> "$T/$name.file"
    check "stderr to a file: no progress line" sh -c "! grep -q 'held by' '$T/$name.file'"
    touch "$T/$name.go"; await "$name.h" 30
else
    skip "script(1) not installed: no pty for the progress line"
fi
