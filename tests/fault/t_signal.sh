# SIGTERM / SIGINT / SIGHUP of a waiting party: it breaks the round for the
# others ("<id> interrupted") and exits 128+signal, at once. A command
# started with '&' by a script has SIGINT ignored (POSIX), and rbarrier
# keeps a signal ignored at start ignored, as shells do: the parties get
# SIGINT back with env --default-signal (the nohup case is in
# t_processes.sh).
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

for sig in TERM:143 INT:130 HUP:129; do
    signame=${sig%:*} want=${sig#*:}
    name=$(fresh "sig$signame")
    for i in 0 1 2; do
        spawn "$name.w$i" env --default-signal=INT $RBARRIER wait --name "$name" --n 4 --id "w$i" --timeout 60
    done
    wait_arrived "$name" 3 || not_ok "3 parties arrived"
    t0=$(now_ms)
    kill -"$signame" "$(pid_of "$name.w1")"
    await "$name.w1" 10; await "$name.w0" 10; await "$name.w2" 10
    expect_eq "SIG$signame: the signalled party exits $want" "$want" "$(code_of "$name.w1")"
    ms=$(took_ms "$name.w1" "$t0")
    check "SIG$signame: it exits at once (within 2 s; took $ms ms)" test "$ms" -le 2000
    expect_match "SIG$signame: it says it was interrupted" "^rbarrier: $name: interrupted \(3/4 arrived: (w[012],){2}w[012]\)$" \
        "$(err_of "$name.w1")"
    for i in 0 2; do
        expect_eq "SIG$signame: w$i exits 3" 3 "$(code_of "$name.w$i")"
        ms=$(took_ms "$name.w$i" "$t0")
        check "SIG$signame: w$i learns at once, not by lease (within 2 s; took $ms ms)" test "$ms" -le 2000
        expect_match "SIG$signame: w$i names the interrupted party" \
            "round [0-9]+ broken: w1 interrupted \(3/4 arrived: (w[012],){2}w[012]\)$" "$(err_of "$name.w$i")"
    done
done

# With --json the interrupted party still prints its one object.
name=$(fresh sigjson)
spawn "$name.a" env --default-signal=INT $RBARRIER wait --name "$name" --n 2 --id a --json
wait_arrived "$name" 1 || not_ok "party arrived"
kill -INT "$(pid_of "$name.a")"
await "$name.a" 10
expect_eq "SIGINT with --json exits 130" 130 "$(code_of "$name.a")"
expect_match "--json says interrupted" '"outcome":"interrupted","reason":"[^"]+","exit":130' "$(cat "$RB_TEST_TMP/$name.a.out")"
expect_match "the round records the break" "broken a interrupted" "$(rcli LRANGE "$(rkey "$name" 1 out)" 0 -1)"

# A signal during the reconnect backoff (nothing listening) cuts it too.
port=$(free_port)
spawn "$name.b" $RBARRIER wait --name "$name" --n 2 --id b --timeout 30 --url "redis://127.0.0.1:$port"
pid=$(pid_of "$name.b")
# Await its SIGTERM handler (bit 15-1 of SigCgt): before that, the default
# action would also give 143 and the test would prove nothing.
catches_sigterm() {
    local mask
    mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$mask" ] && (( (16#$mask >> 14) & 1 ))
}
wait_until 10 catches_sigterm "$pid" || not_ok "the party installed its SIGTERM handler"
t0=$(now_ms)
kill -TERM "$pid"
await "$name.b" 10
expect_eq "SIGTERM while connecting exits 143" 143 "$(code_of "$name.b")"
ms=$(took_ms "$name.b" "$t0")
check "... at once (within 2 s; took $ms ms)" test "$ms" -le 2000
