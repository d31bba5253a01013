# Reaching Redis: --connect-timeout bounds how long a command keeps trying,
# and a long retry is said once on stderr (where and until when), so a wait
# on a Redis that is down is not silent.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

port=$(free_port)
dead=redis://127.0.0.1:$port
name=$(fresh conn)

# 1. --connect-timeout 1 on a command without a deadline: retries ~1 s.
t0=$(now_ms)
err=$(rb get --param "$name" --connect-timeout 1 --url "$dead" 2>&1)
code=$? ms=$(since "$t0")
expect_eq "get --connect-timeout 1, nothing listening: exit 4" 4 "$code"
check "... after about 1 s (0.9..3 s; $ms ms)" test "$ms" -ge 900 -a "$ms" -le 3000
expect_match "... one line naming the address" "^rbarrier: cannot reach Redis at 127\.0\.0\.1:$port: Connection refused$" "$err"

# 2. It bounds a wait's reaching Redis below its --timeout.
t0=$(now_ms)
err=$(rb wait --name "$name" --n 1 --timeout 20 --connect-timeout 1.5 --url "$dead" 2>&1)
code=$? ms=$(since "$t0")
expect_eq "wait --timeout 20 --connect-timeout 1.5: exit 4" 4 "$code"
check "... after about 1.5 s, not 20 (1.4..4 s; $ms ms)" test "$ms" -ge 1400 -a "$ms" -le 4000
expect_eq "... in one line" 1 "$(printf '%s\n' "$err" | wc -l)"

# 3. A long retry says so once, then goes on when Redis comes up.
spawn "$name.get" $RBARRIER get --param "$name" --connect-timeout 60 --url "$dead"
wait_until 15 grep -q "retrying" "$RB_TEST_TMP/$name.get.err"
expect_match "a long retry says once where and until when" \
    "^rbarrier: cannot reach Redis at 127\.0\.0\.1:$port: Connection refused; retrying until [0-2][0-9]:[0-5][0-9]:[0-5][0-9]$" \
    "$(err_of "$name.get")"
REDIS_PORT_WANT=$port start_redis conn || not_ok "start redis-server on port $port"
await "$name.get" 15
expect_eq "... and succeeds once Redis is up" 0 "$(code_of "$name.get")"
expect_eq "... printing the value" 0 "$(cat "$RB_TEST_TMP/$name.get.out")"
expect_eq "... having said it once" 1 "$(err_of "$name.get" | wc -l)"
stop_redis "$REDIS_PID"

# 4. Bad values are bad input.
for v in -1 abc ""; do
    rb get --param "$name" --connect-timeout "$v" --url "$dead" 2>/dev/null
    expect_eq "--connect-timeout '$v': exit 2" 2 $?
done
