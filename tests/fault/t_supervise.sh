# The supervisor: whatever happens to a runner (kill -9, Ctrl-Z, cut off
# from Redis), its command's whole tree is gone before the right (a lock
# slot, a job's rank, a --once round) can pass to anyone else, and nothing
# the command started outlives its runner. The work runs in a grandchild
# (tests/fault/ticker.sh), overlap is measured by the work's own timestamps
# in a shared file, and every case runs three times: with a cgroup of the
# command's own (as root), the command born there; the same cgroup joined
# by the command before its exec, as on a kernel that cannot start a
# process in a cgroup (RBARRIER_SUPERVISE=join); and with the subreaper
# walk (RBARRIER_SUPERVISE=subreaper).
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap 'kill -CONT $(cat "$RB_TEST_TMP"/*.pid 2>/dev/null) 2>/dev/null; kill_spawned; [ -n "${PROXY:-}" ] && kill -9 "$PROXY" 2>/dev/null' EXIT

T=$RB_TEST_TMP
TICKER=$RB_TESTS_DIR/fault/ticker.sh
use_own_redis supervise

lkey() { echo "rb:l:{$1}${2:+:$2}"; }
_queued_is() { [ "$(rcli ZCARD "$(lkey "$1" queue)")" = "$2" ]; }
_holding_is() { [ "$(rcli ZCARD "$(lkey "$1" holders)")" = "$2" ]; }
# start_proxy WHAT: a tests/fault/proxy.py to this test's Redis: its pid
# in PROXY, its port in PROXY_PORT.
start_proxy() {
    rm -f "$T/proxy.port" "$T/proxy.port.state"
    python3 "$RB_TESTS_DIR/fault/proxy.py" "$T/proxy.port" "$REDIS_PORT" &
    PROXY=$!
    wait_until 10 test -s "$T/proxy.port" || not_ok "$1: the proxy listens"
    PROXY_PORT=$(cat "$T/proxy.port" 2>/dev/null)
}
stop_proxy() { kill -9 "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; PROXY=; }
# handed_on WHAT NAME FILE CUT NEXT SIG: NAME.NEXT, which waited behind
# NAME.CUT (cut off by the proxy), got the lock and exited 0, its work in
# FILE never beside CUT's; the proxy let go with SIG, CUT did not exit 0.
handed_on() {
    expect_eq "$1: the next waiter gets the lock" 0 "$(code_of "$2.$5")"
    no_overlap "$1: ... never two holders at once" "$3" "$4" "$5"
    kill -"$6" "$PROXY"
    await "$2.$4" 30
    check "$1: ... the cut-off holder exits 3 or 4, not 0 ($(code_of "$2.$4"))" \
        test "$(code_of "$2.$4")" = 3 -o "$(code_of "$2.$4")" = 4
}
_blocked_is() { [ "$(rcli INFO clients | tr -d '\r' | sed -n 's/^blocked_clients://p')" = "$1" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
stopped() { [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ]; }
started() { [ -s "$1" ] && grep -q "^$2 " "$1"; }
# first_of / last_of ID FILE: ms of ID's first / last tick in FILE.
# (Nanoseconds as text, cut to ms in the shell: awk prints doubles.)
ms_of() { local t; t=$(cat); [ -n "$t" ] && echo "${t%??????}"; }
first_of() { awk -v id="$1" '$1 == id { print $2; exit }' "$2" | ms_of; }
last_of() { awk -v id="$1" '$1 == id { t = $2 } END { print t }' "$2" | ms_of; }
# no_overlap WHAT FILE A B: every tick of A came before B's first.
no_overlap() {
    local a b
    a=$(last_of "$3" "$2"); b=$(first_of "$4" "$2")
    if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]; then
        ok "$1 (last of $3 $(( b - a )) ms before the first of $4)"
    else
        not_ok "$1 (last of $3: ${a:-none}, first of $4: ${b:-none})"
    fi
}
pid_in() { cat "$1" 2>/dev/null || echo 999999999; }
# held_and_queued NAME WHAT: a holds lock NAME until $T/NAME.go exists;
# b waits behind it to touch $T/NAME.b.ran.
held_and_queued() {
    spawn "$1.a" $RBARRIER lock --name "$1" --id a -- \
        sh -c "while [ ! -e '$T/$1.go' ]; do sleep 0.05; done"
    wait_until 20 _holding_is "$1" 1 || not_ok "$2: a holds"
    spawn "$1.b" $RBARRIER lock --name "$1" --id b -- touch "$T/$1.b.ran"
    wait_until 20 _queued_is "$1" 1 || not_ok "$2: b waits"
}

# The job NAME broke and its next attempt is entering.
reentering() {
    rb status --name "$1" --json | python3 -c '
import json, sys
j = json.load(sys.stdin).get("job") or {}
sys.exit(0 if j.get("state") == "enter" and j.get("restart") == 1 else 1)'
}

if [ "$(id -u)" -eq 0 ] && grep -q ' - cgroup2 ' /proc/self/mountinfo; then
    modes="cgroup join subreaper"
else
    skip "the cgroup v2 path needs root and a cgroup2 mount"
    modes="subreaper"
fi

for mode in $modes; do
    if [ "$mode" = cgroup ]; then unset RBARRIER_SUPERVISE
    else export RBARRIER_SUPERVISE=$mode; fi

    # ---- lock: the holder kill -9'd while its work runs in a grandchild ----
    name=$(fresh k9$mode); f=$T/$name.ticks
    spawn "$name.a" $RBARRIER lock --name "$name" --id a --lease 2 -- sh "$TICKER" a "$f"
    wait_until 20 started "$f" a || not_ok "$mode k9: the holder's work runs"
    spawn "$name.b" $RBARRIER lock --name "$name" --id b --lease 2 --timeout 60 -- sh "$TICKER" b "$f" 10
    wait_until 20 _queued_is "$name" 1 || not_ok "$mode k9: the waiter waits"
    t0=$(now_ms)
    kill -9 "$(pid_of "$name.a")"
    wait_until 5 gone "$(pid_in "$f.a.pid")"
    t1=$(now_ms)
    check "$mode: holder kill -9'd: its grandchild is gone within 1 s, with margin (<= 2 s; $((t1 - t0)) ms)" \
        test $((t1 - t0)) -le 2000
    progress=$(cat "$f.a.progress")
    wait_until 5 test ! -e "$progress"
    check "$mode: ... and its progress file ($progress) is removed" test -n "$progress" -a ! -e "$progress"
    await "$name.b" 30
    expect_eq "$mode: ... the next holder runs and exits 0" 0 "$(code_of "$name.b")"
    no_overlap "$mode: ... never two holders at once" "$f" a b

    # ---- lock: the holder stopped with Ctrl-Z (SIGTSTP) --------------------
    name=$(fresh tstp$mode); f=$T/$name.ticks
    spawn "$name.a" $RBARRIER lock --name "$name" --id a --lease 2 -- sh "$TICKER" a "$f"
    wait_until 20 started "$f" a || not_ok "$mode tstp: the holder's work runs"
    spawn "$name.b" $RBARRIER lock --name "$name" --id b --lease 2 --timeout 60 -- sh "$TICKER" b "$f" 10
    wait_until 20 _queued_is "$name" 1 || not_ok "$mode tstp: the waiter waits"
    kill -TSTP "$(pid_of "$name.a")"
    wait_until 10 stopped "$(pid_of "$name.a")" || not_ok "$mode tstp: the holder stops"
    await "$name.b" 30
    expect_eq "$mode: holder stopped with Ctrl-Z: the next holder runs past its lease" 0 "$(code_of "$name.b")"
    no_overlap "$mode: ... never two holders at once" "$f" a b
    kill -CONT "$(pid_of "$name.a")"
    await "$name.a" 20
    expect_eq "$mode: ... continued, the stopped holder exits 3" 3 "$(code_of "$name.a")"
    expect_match "$mode: ... saying its lease ran out" "lease ran out" "$(err_of "$name.a")"
    check "$mode: ... and its work is gone" gone "$(pid_in "$f.a.pid")"

    # ---- lock: a short Ctrl-Z keeps the lock; the work resumes -------------
    name=$(fresh fg$mode); f=$T/$name.ticks
    spawn "$name.a" $RBARRIER lock --name "$name" --id a --lease 5 -- sh "$TICKER" a "$f" 30
    wait_until 20 started "$f" a || not_ok "$mode fg: the holder's work runs"
    kill -TSTP "$(pid_of "$name.a")"
    wait_until 10 stopped "$(pid_of "$name.a")" || not_ok "$mode fg: the holder stops"
    n1=$(grep -c '^a ' "$f")
    kill -CONT "$(pid_of "$name.a")"
    await "$name.a" 30
    expect_eq "$mode: Ctrl-Z then fg within the lease: the holder finishes, exit 0" 0 "$(code_of "$name.a")"
    expect_eq "$mode: ... all its work done ($n1 ticks before the stop)" 30 "$(grep -c '^a ' "$f")"

    # ---- lock: the holder cut off from Redis, slow to stop -----------------
    # The holder reaches Redis through a proxy that is then frozen (its
    # connection open and silent); its work takes 1.5 s to stop after
    # SIGTERM. The waiter, connected directly, is granted the moment the
    # holder's lease passes: the work must be over by then.
    name=$(fresh cut$mode); f=$T/$name.ticks
    start_proxy "$mode cut"
    spawn "$name.a" env RBARRIER_URL="redis://127.0.0.1:$PROXY_PORT" \
        $RBARRIER lock --name "$name" --id a --lease 3 -- sh "$TICKER" a "$f" 0 1500
    wait_until 20 started "$f" a || not_ok "$mode cut: the holder's work runs"
    spawn "$name.b" $RBARRIER lock --name "$name" --id b --lease 3 --timeout 60 -- sh "$TICKER" b "$f" 10
    wait_until 20 _queued_is "$name" 1 || not_ok "$mode cut: the waiter waits"
    kill -STOP "$PROXY"
    await "$name.b" 30
    handed_on "$mode: holder cut off, its work slow to stop" "$name" "$f" a b CONT
    stop_proxy

    # ---- lock: a grant used before its confirmation, which never comes -----
    # A waiter woken by its grant starts its command at once, on the 2 s
    # the server holds the grant unconfirmed, and confirms it with its
    # first renewal. Here the waiter's proxy lets the grant in and holds
    # back everything the waiter sends: the server passes the slot on 2 s
    # after the grant, and the work, 1.5 s to stop after SIGTERM, must be
    # over by then. That it runs at all shows the grant was used before
    # its confirmation (which would never have come back).
    name=$(fresh early$mode); f=$T/$name.ticks
    mkfifo "$T/$name.go"
    start_proxy "$mode early"
    spawn "$name.h" $RBARRIER lock --name "$name" --id h --lease 30 -- sh -c "read x < '$T/$name.go'"
    wait_until 20 _holding_is "$name" 1 || not_ok "$mode early: h holds"
    spawn "$name.w" env RBARRIER_URL="redis://127.0.0.1:$PROXY_PORT" \
        $RBARRIER lock --name "$name" --id w --lease 30 --timeout 60 --verbose -- sh "$TICKER" w "$f" 0 1500
    wait_until 20 _queued_is "$name" 1 || not_ok "$mode early: w waits"
    wait_until 20 _blocked_is 1 || not_ok "$mode early: w blocks on its wake list"
    kill -USR1 "$PROXY"
    wait_until 10 grep -qx held "$T/proxy.port.state" || not_ok "$mode early: the proxy holds w's words"
    echo go > "$T/$name.go"
    await "$name.h" 20
    wait_until 20 started "$f" w || not_ok "$mode early: w's work starts on the grant"
    spawn "$name.z" $RBARRIER lock --name "$name" --id z --lease 3 --timeout 60 -- sh "$TICKER" z "$f" 10
    await "$name.z" 30
    handed_on "$mode: a grant used before its confirmation, which is held back" "$name" "$f" w z USR2
    check "$mode: ... and its work is gone" gone "$(pid_in "$f.w.pid")"
    expect_match "$mode: ... --verbose said it started on the grant's 2 s" \
        "next renewal confirms" "$(err_of "$name.w")"
    stop_proxy

    # ---- run: a member's runner stopped, a new runner for it, --restarts ----
    name=$(fresh rs$mode); f=$T/$name.ticks
    job_cmd='c=0; [ "$RBARRIER_RESTART" -gt 0 ] && c=10; exec sh '"$TICKER"' "$RBARRIER_ID.$RBARRIER_RESTART" '"$f"' $c'
    spawn "$name.w0" $RBARRIER run --name "$name" --id w0 --n 2 --lease 2 --restarts 1 --timeout 60 -- sh -c "$job_cmd"
    spawn "$name.w1" $RBARRIER run --name "$name" --id w1 --n 2 --lease 2 --restarts 1 --timeout 60 -- sh -c "$job_cmd"
    wait_until 20 started "$f" w1.0 || not_ok "$mode restarts: the job runs"
    kill -TSTP "$(pid_of "$name.w1")"
    wait_until 10 stopped "$(pid_of "$name.w1")" || not_ok "$mode restarts: the runner stops"
    # Started again once the job has taken the stopped member for lost (its
    # lease passed): the job waits in its next attempt for rank w1. (A
    # runner started while the old one's lease still holds is refused:
    # t_jobid.sh.)
    wait_until 20 reentering "$name" || not_ok "$mode restarts: the job breaks and waits for w1"
    spawn "$name.w1b" $RBARRIER run --name "$name" --id w1 --n 2 --lease 2 --restarts 1 --timeout 60 -- sh -c "$job_cmd"
    await "$name.w1b" 40
    await "$name.w0" 10
    expect_eq "$mode: a job runner stopped, another started for its rank: the job finishes" "0 0" \
        "$(code_of "$name.w0") $(code_of "$name.w1b")"
    diag "w0: $(err_of "$name.w0" | tr '\n' ' ')"
    diag "w1 (the new runner): $(err_of "$name.w1b" | tr '\n' ' ')"
    no_overlap "$mode: ... never two copies of rank w1" "$f" w1.0 w1.1
    kill -CONT "$(pid_of "$name.w1")"
    await "$name.w1" 20
    check "$mode: ... the stopped runner, continued, does not exit 0 ($(code_of "$name.w1"))" \
        test "$(code_of "$name.w1")" != 0
    check "$mode: ... and its old command is gone" gone "$(pid_in "$f.w1.0.pid")"

    # ---- --once: the party running the command kill -9'd -------------------
    name=$(fresh once$mode); f=$T/$name.ticks
    spawn "$name.p1" $RBARRIER wait --name "$name" --id p1 --n 2 --lease 2 --timeout 60
    wait_arrived "$name" 1 || not_ok "$mode once: the first party waits"
    spawn "$name.p2" $RBARRIER wait --name "$name" --id p2 --n 2 --lease 2 --timeout 60 --once "sh $TICKER save $f"
    wait_until 20 started "$f" save || not_ok "$mode once: the save runs"
    t0=$(now_ms)
    kill -9 "$(pid_of "$name.p2")"
    wait_until 5 gone "$(pid_in "$f.save.pid")"
    t1=$(now_ms)
    check "$mode: --once party kill -9'd: the save (a grandchild) is gone within 1 s, with margin (<= 2 s; $((t1 - t0)) ms)" \
        test $((t1 - t0)) -le 2000
    await "$name.p1" 30
    expect_eq "$mode: ... the other party exits 3" 3 "$(code_of "$name.p1")"

    # ---- a stop reaches a grandchild someone else stopped, and only it ------
    # gets SIGCONT: a SIGCONT to a running process would discard a SIGSTOP
    # on its way to it (a debugger's or a sanitizer's attach). Each
    # grandchild logs the TERM and CONT it catches (the shell runs both
# traps of one wake-up before it looks at the loop's condition).
    name=$(fresh sc$mode)
    cat > "$T/$name.sh" <<EOS
trap 'echo cont >> $T/$name.\$1' CONT
trap 'echo term >> $T/$name.\$1; ended=1' TERM
echo \$\$ > $T/$name.\$1.pid.tmp; mv $T/$name.\$1.pid.tmp $T/$name.\$1.pid
[ "\$1" = stopped ] && kill -STOP \$\$
while [ -z "\$ended" ]; do sleep 0.05; done
EOS
    spawn "$name" $RBARRIER lock --name "$name" --kill-after 30s -- \
        sh -c "sh '$T/$name.sh' running & sh '$T/$name.sh' stopped & wait"
    wait_until 20 test -s "$T/$name.running.pid" || not_ok "$mode sc: the running grandchild starts"
    wait_until 20 stopped "$(pid_in "$T/$name.stopped.pid")" || not_ok "$mode sc: the other stops itself"
    kill -TERM "$(pid_of "$name")"
    await "$name" 25
    check "$mode: SIGTERM to a holder: a stopped grandchild is continued and handles it well before --kill-after" \
        grep -qx term "$T/$name.stopped"
    # (SIGTERM may come twice: again when the stop ends what is left.)
    check "$mode: ... a running one handles it" grep -qx term "$T/$name.running"
    check "$mode: ... and gets no SIGCONT ($(paste -sd' ' "$T/$name.running"))" \
        test -z "$(grep -x cont "$T/$name.running")"

    # ---- with a cgroup: a stop reaches a process the command moved into a
    # cgroup of its own making (as systemd-run and container runtimes do)
    if [ "$mode" = cgroup ]; then
        name=$(fresh sg$mode)
        cat > "$T/$name.sh" <<EOS
cg=\$(awk '{ for (i = 7; i < NF; i++) if (\$i == "-") { if (\$(i + 1) == "cgroup2") { print \$5; exit } break } }' /proc/self/mountinfo)\$(sed -n 's/^0:://p' /proc/self/cgroup)
echo "\$cg" > $T/$name.cg
mkdir "\$cg/sub"
sh -c 'echo \$\$ > "\$0/cgroup.procs"; trap "echo term > $T/$name.sub; exit 0" TERM
       echo \$\$ > $T/$name.sub.pid; while :; do sleep 0.05; done' "\$cg/sub" &
wait
EOS
        spawn "$name" $RBARRIER lock --name "$name" --kill-after 30s -- sh "$T/$name.sh"
        wait_until 20 test -s "$T/$name.sub.pid" || not_ok "$mode sg: the process in a sub-cgroup starts"
        kill -TERM "$(pid_of "$name")"
        await "$name" 25
        check "$mode: SIGTERM to a holder reaches a process in a cgroup the command made" \
            grep -qx term "$T/$name.sub"
        # (this command's own: other rbarrier commands on the host may
        # have cgroups meanwhile)
        check "$mode: ... and both cgroups are removed ($(cat "$T/$name.cg"))" \
            test -s "$T/$name.cg" -a ! -d "$(cat "$T/$name.cg")/sub" -a ! -d "$(cat "$T/$name.cg")"

        # A cgroup left by a runner and watchdog both killed with -9 (its
        # owner is gone, nobody removed it) goes with the next one made
        # beside it; one still holding a process stays.
        home=$(dirname "$(cat "$T/$name.cg")")
        dead=$(sh -c 'echo $$')
        while kill -0 "$dead" 2>/dev/null; do dead=$(sh -c 'echo $$'); done
        mkdir "$home/rbarrier-$dead"
        # (older than a minute: one younger may be in the making)
        touch -d '2 minutes ago' "$home/rbarrier-$dead"
        rb lock --name "$(fresh stale)" -- true
        check "$mode: an empty cgroup of a gone owner is removed by the next command" \
            test ! -d "$home/rbarrier-$dead"
    fi

    # ---- a daemon (setsid) left by the command of each of the three --------
    daemon='setsid sh -c "echo \$\$ > '"$T"'/DAEMON.tmp; mv '"$T"'/DAEMON.tmp '"$T"'/DAEMON; exec sleep 60" & while [ ! -s '"$T"'/DAEMON ]; do sleep 0.01; done'
    name=$(fresh dl$mode)
    rb lock --name "$name" -- sh -c "${daemon//DAEMON/$name.lock}"
    expect_eq "$mode: lock: a command that leaves a setsid daemon exits 0" 0 $?
    check "$mode: ... the daemon did not outlive the runner" gone "$(pid_in "$T/$name.lock")"
    rb run --name "$name" --n 1 -- sh -c "${daemon//DAEMON/$name.run}"
    expect_eq "$mode: run: the same, exit 0" 0 $?
    check "$mode: ... the daemon did not outlive the runner" gone "$(pid_in "$T/$name.run")"
    rb wait --name "$name" --n 1 --once "${daemon//DAEMON/$name.once}"
    expect_eq "$mode: wait --once: the same, exit 0" 0 $?
    check "$mode: ... the daemon did not outlive the runner" gone "$(pid_in "$T/$name.once")"

    # ---- the watchdog kill -9'd while it ends a leftover that ignores ----
    # SIGTERM, after the command itself exited: the runner, told of the
    # exit but never that the tree is gone, ends the leftover itself before
    # the lock passes on; a waiter's first line comes after its last.
    name=$(fresh wdleft$mode)
    log=$T/$name.log
    cat > "$T/$name.sh" <<EOS
trap '' TERM
echo \$\$ > '$T/$name.left'
while :; do echo "left \$(date +%s%N)" >> '$log'; sleep 0.05; done
EOS
    spawn "$name.a" $RBARRIER lock --name "$name" --id a --lease 3 --kill-after 20 -- \
        sh -c "setsid sh '$T/$name.sh' & while [ ! -s '$T/$name.left' ]; do sleep 0.01; done"
    wait_until 20 test -s "$T/$name.left" || not_ok "$mode wdleft: the leftover runs"
    spawn "$name.b" $RBARRIER lock --name "$name" --id b -- \
        sh -c "echo \"b \$(date +%s%N)\" >> '$log'"
    wait_until 20 _queued_is "$name" 1 || not_ok "$mode wdleft: b waits"
    wd=$(pgrep -P "$(pid_of "$name.a")")
    kill -9 $wd
    await "$name.a" 20
    await "$name.b" 20
    check "$mode: watchdog kill -9'd while ending a leftover: the leftover is gone" \
        gone "$(pid_in "$T/$name.left")"
    expect_eq "$mode: ... the waiter ran (exit 0)" 0 "$(code_of "$name.b")"
    no_overlap "$mode: ... after the leftover's last line" "$log" left b

    # ---- a waiter's watchdog, forked while it waits, kill -9'd ----------
    # Granted, the waiter cannot start its command: it says so, exits 1,
    # and gives the slot back at once (the next waiter does not wait out
    # its 10 s lease).
    name=$(fresh wdarm$mode)
    held_and_queued "$name" "$mode wdarm"
    spawn "$name.c" $RBARRIER lock --name "$name" --id c -- true
    wait_until 20 _queued_is "$name" 2 || not_ok "$mode wdarm: c waits"
    kill -9 "$(pgrep -P "$(pid_of "$name.b")")"
    t0=$(now_ms)
    touch "$T/$name.go"
    await "$name.c" 20
    ms=$(since "$t0")
    await "$name.b" 20
    expect_eq "$mode: a waiter whose watchdog died: exits 1 when granted" 1 "$(code_of "$name.b")"
    expect_match "$mode: ... saying its command could not start" \
        "lock $name: cannot start the command: its watchdog is gone; the lock was given back" "$(err_of "$name.b")"
    check "$mode: ... its command never ran" test ! -e "$T/$name.b.ran"
    check "$mode: ... and the next waiter runs at once, not after its lease (<= 5 s; $ms ms)" \
        test "$(code_of "$name.c")" = 0 -a "$ms" -le 5000

    # ---- a queued waiter: its watchdog waits, no command yet -------------
    # The watchdog is forked at once and waits for the go; the command is
    # born only once the right is held: a waiter kill -9'd in line, or one
    # whose --timeout ends its wait, leaves nothing behind, and its
    # command never ran.
    name=$(fresh queue$mode)
    held_and_queued "$name" "$mode queue"
    wd=$(pgrep -P "$(pid_of "$name.b")")
    check "$mode: a queued waiter has its watchdog, and no command yet" \
        test -n "$wd" -a -z "$(pgrep -P "$wd")" -a ! -e "$T/$name.b.ran"
    kill -9 "$(pid_of "$name.b")"
    wait_until 5 gone "$wd"
    check "$mode: ... the waiter kill -9'd: its watchdog is gone" gone "$wd"
    rb lock --name "$name" --id c --timeout 1 -- touch "$T/$name.c.ran"
    expect_eq "$mode: a waiter whose --timeout ends its wait exits 124" 124 $?
    check "$mode: ... and leaves no process behind" \
        test -z "$(pgrep -f "$T/$name.c.ran")"
    touch "$T/$name.go"
    await "$name.a" 20
    check "$mode: ... neither command ran" test ! -e "$T/$name.b.ran" -a ! -e "$T/$name.c.ran"
    # A runner that gives up before it holds the right (Redis cannot be
    # reached) ends at once: it has no command to give a grace to
    # (--kill-after 30 would show).
    t0=$(now_ms)
    $RBARRIER lock --url "redis://127.0.0.1:$(free_port)" --name "$name" \
        --kill-after 30 -- touch "$T/$name.d.ran" 2> /dev/null
    rc=$?
    ms=$(since "$t0")
    expect_eq "$mode: a runner that cannot reach Redis exits 4" 4 "$rc"
    check "$mode: ... at once, not after --kill-after (<= 10 s; $ms ms)" \
        test "$ms" -le 10000
    check "$mode: ... and its command never ran" test ! -e "$T/$name.d.ran"

    # ---- the watchdog alone kill -9'd: the runner ends the tree itself ----
    # (its daemon too, which left the command's group: it comes to the
    # runner, a subreaper too, or is in the command's cgroup).
    # The runner of lock is exec'd by a shell that started a child first:
    # that child is the runner's too, and not the command's.
    for cmd in lock run; do
        name=$(fresh wd$cmd$mode)
        if [ $cmd = lock ]; then set -- lock --name "$name"
        else set -- run --name "$name" --n 1; fi
        spawn "$name" sh -c 'sleep 60 & echo $! > "$0"; exec "$@"' "$T/$name.kid" \
            $RBARRIER "$@" -- sh -c "${daemon//DAEMON/$name.d}; exec sleep 60"
        wait_until 20 test -s "$T/$name.d" || not_ok "$mode wd: the daemon starts"
        wd=$(pgrep -P "$(pid_of "$name")" | grep -vx "$(cat "$T/$name.kid")")
        kill -9 "$wd"
        await "$name" 20
        check "$mode: $cmd's watchdog alone kill -9'd: the runner ends, not 0 ($(code_of "$name"))" \
            test "$(code_of "$name")" != running -a "$(code_of "$name")" != 0
        check "$mode: ... and the command's daemon is gone" gone "$(pid_in "$T/$name.d")"
        check "$mode: ... but not the runner's own older child" kill -0 "$(pid_in "$T/$name.kid")"
        kill "$(pid_in "$T/$name.kid")" 2>/dev/null
        if [ $mode = cgroup ]; then
            check "$mode: ... and the command's cgroup" \
                test -z "$(find /sys/fs/cgroup -maxdepth 8 -type d -name "rbarrier-$wd" 2>/dev/null)"
        fi
    done
done
unset RBARRIER_SUPERVISE
