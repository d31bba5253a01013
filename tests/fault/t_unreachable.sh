# Nothing listening at the URL. With --timeout the first connect is retried
# (with backoff) until the timeout, so a wait started before Redis passes
# once Redis is up; past the timeout it exits 4. Without --timeout the
# first connect is one attempt: exit 4 at once, in one line.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

port=$(free_port)
url=redis://127.0.0.1:$port
name=$(fresh early)

# 1. Two parties start while nothing listens; Redis comes up 2 s later.
t0=$(now_ms)
spawn "$name.solo" $RBARRIER wait --name "$name-solo" --n 1 --id solo --timeout 10 --url "$url"
spawn "$name.a" $RBARRIER wait --name "$name" --n 2 --id a --timeout 10 --url "$url"
spawn "$name.b" $RBARRIER wait --name "$name" --n 2 --id b --timeout 10 --url "$url"
sleep 2   # nothing listens for 2 s
expect_eq "nobody gave up while nothing listened" "running running running" \
    "$(code_of "$name.solo") $(code_of "$name.a") $(code_of "$name.b")"
# Redis comes up between its launch and start_redis seeing it answer (a
# party may connect first: it polls too), so "after" is after the launch.
launched=$(since "$t0")
REDIS_PORT_WANT=$port start_redis early || not_ok "start redis-server on port $port"
up=$(since "$t0")
for t in solo a b; do await "$name.$t" 15; done
expect_eq "n=1 and both partners pass once Redis is up" "0 0 0" \
    "$(code_of "$name.solo") $(code_of "$name.a") $(code_of "$name.b")"
for t in solo a b; do
    ms=$(took_ms "$name.$t" "$t0")
    check "$t passed after Redis was launched (${launched} ms) and soon after it answered (<= $((up + 3000)); $ms ms)" \
        test "$ms" -ge "$launched" -a "$ms" -le $((up + 3000))
done
expect_eq "no message on stderr" "" "$(err_of "$name.solo")$(err_of "$name.a")$(err_of "$name.b")"
expect_eq "the pair's round is recorded on that server" ok \
    "$(redis-cli -s "$REDIS_SOCK" LRANGE "$(rkey "$name" 1 out)" 0 -1)"
stop_redis "$REDIS_PID"

# 2. --timeout 1, nothing listening: exit 4 after about 1 s.
port=$(free_port)
t0=$(now_ms)
err=$(rb wait --name "$name" --n 2 --timeout 1 --url "redis://127.0.0.1:$port" 2>&1)
code=$? ms=$(since "$t0")
expect_eq "--timeout 1, nothing listening: exit 4" 4 "$code"
check "... after about 1 s (0.9..3 s; $ms ms)" test "$ms" -ge 900 -a "$ms" -le 3000
expect_match "... naming the address" "^rbarrier: cannot reach Redis at 127\.0\.0\.1:$port: Connection refused$" "$err"
expect_eq "... in one line" 1 "$(printf '%s\n' "$err" | wc -l)"

# 3. No --timeout: one attempt, exit 4 at once, one line; the same for the
#    other subcommands, and for a unix socket that is not there.
for cmd in "wait --name $name --n 2" "status --name $name" "reset --name $name" \
           "get --param $name" "train --param $name --worker w" "sync --param $name --worker w"; do
    t0=$(now_ms)
    err=$(rb $cmd --url "redis://127.0.0.1:$port" 2>&1)
    code=$? ms=$(since "$t0")
    expect_eq "${cmd%% *}, nothing listening: exit 4" 4 "$code"
    check "${cmd%% *}: at once (<= 1 s; $ms ms)" test "$ms" -le 1000
    expect_match "${cmd%% *}: one line naming the address" "^rbarrier: cannot reach Redis at 127\.0\.0\.1:$port: Connection refused$" "$err"
done
err=$(rb wait --name "$name" --n 2 --url "unix://$RB_TEST_TMP/nothing-here.sock" 2>&1)
expect_eq "a missing unix socket: exit 4" 4 $?
expect_match "... one line naming it" "^rbarrier: cannot reach Redis at unix://$RB_TEST_TMP/nothing-here\.sock: No such file or directory$" "$err"
