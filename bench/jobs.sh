# shellcheck shell=bash disable=SC2154
# (tcp, sock, tmp, SMOKE: set by bench/run.sh)
# bench/jobs.sh: issue #22's job figures for `make bench`, sourced by
# bench/run.sh (which has loaded tests/lib.sh for now_ms and wait_until,
# and set $RBARRIER, $tmp, $tcp, $sock, step and say). jobs_rows runs them
# all; RB_BENCH_ONLY=jobs makes run.sh run these rows alone.
#
# Every runner is a real `rbarrier run` process, each CMD a shell. A CMD
# marks "running" by creating a file as its first act, with a shell
# builtin (`: > FILE`), and a runner's exit is marked the same way by the
# shell that waited for it: the files' modification times are the stamps.
# No process is started to read a clock, so what is measured is rbarrier,
# not the `date` of eight CMDs waiting for a CPU of a loaded machine. The
# kernel sets those times from its coarse clock (a tick, a few ms), the
# clock of now_ms (tests/lib.sh), which stamps the starts.
#   job_launch_ms       from starting N=8 runners to the last CMD's mark
#   job_launch_floor_ms the same for N=8 bare CMDs started the same way
#                       (no rbarrier): what the shell, fork and exec cost
#                       on this machine, measured next to each launch
#   job_fail_exit_ms    from w0's CMD stamping just before its `exit 1` to
#                       the last other runner's exit (N=8, one job a break)
#   job_silent_exit_ms  from `kill -9` of w0's runner and CMD to the last
#                       other runner's exit (N=4, --lease 2s: the target
#                       is lease + 1 s, job_silent_lease_ms)
#   job_restart_ms      with --restarts: from w0's CMD stamping before its
#                       `exit 1` to the last CMD of the next attempt
#                       marking running (N=8, one job, a restart a sample)
#   job_calls_per_member_s  INFO commandstats over windows while N=8
#                       members run with nothing failing, default lease:
#                       every command, the scripts' redis.call()s
#                       included, per member and second (INFO's own reads
#                       left out); job_cmds_per_member_s the client
#                       commands alone (EVALSHA and the blocking read)
#   job_stall_exit_ms   from w0's CMD stamping just before it stops itself
#                       (SIGSTOP) while the others make progress, to the
#                       last runner's exit (N=8, --stall-after 2s, --lease
#                       3s; the target, job_stall_bound_ms, is stall-after
#                       + lease/3 + 1 s)
#   job_big_launch_ms, job_big_launch_floor_ms, job_big_fail_exit_ms
#                       the first three at N=RB_BENCH_JOB_BIG (default
#                       1000, issue #34's big job, all on this host; 0: not
#                       run; never in the smoke run), job_big_n
#   job_stall_calls_per_member_s, job_stall_cmds_per_member_s: as the
#                       commands above, with --stall-after on and the
#                       members making progress each second (progress
#                       rides on the renewals: the same cost)

# jb_runner DIR NAME N I CMD [run flags...]: runner wI in the background;
# its pid in DIR/wI.pid, its exit time and code in DIR/wI.exit, .code.
jb_runner() {
    local dir=$1 name=$2 n=$3 i=$4 cmd=$5
    shift 5
    ( "$RBARRIER" run --url "$tcp/0" --name "$name" --n "$n" --id "w$i" \
          --timeout 60 "$@" -- sh -c "$cmd" > /dev/null 2>> "$dir/err" &
      echo $! > "$dir/w$i.pid"
      # Quiet: a runner killed on purpose is no news.
      exec 2> /dev/null
      code=0
      wait $! || code=$?
      : > "$dir/w$i.exit"
      echo "$code" > "$dir/w$i.code" ) &
}

# A CMD that marks running (DIR/run.<attempt>.<id>, its pid in
# DIR/pid.<id>), then sleeps until its runner stops it.
jb_sleeper() { echo ": > $1/run.\$RBARRIER_RESTART.\$RBARRIER_ID; echo \$\$ > $1/pid.\$RBARRIER_ID; exec sleep 1000"; }
# The same, making progress each second with a shell builtin (a
# redirection sets the file's time): a healthy member under --stall-after.
jb_beater() { echo ": > $1/run.\$RBARRIER_RESTART.\$RBARRIER_ID; echo \$\$ > $1/pid.\$RBARRIER_ID; while :; do : > \"\$RBARRIER_PROGRESS\"; sleep 1; done"; }
# w0's CMD: marks running, waits for a line on DIR/fifo.<attempt>, stamps
# DIR/fail.<attempt> and exits 1.
jb_failer() { echo ": > $1/run.\$RBARRIER_RESTART.\$RBARRIER_ID; read x < $1/fifo.\$RBARRIER_RESTART; : > $1/fail.\$RBARRIER_RESTART; exit 1"; }

# jb_count DIR GLOB: how many files in DIR match GLOB.
jb_count() { local f c=0; for f in "$1"/$2; do [ -e "$f" ] && c=$((c + 1)); done; echo $c; }
jb_all_running() { [ "$(jb_count "$1" "run.$2.*")" -ge "$3" ]; }
jb_all_exited() { [ "$(jb_count "$1" 'w*.code')" -ge "$2" ]; }
# jb_max DIR FILES...: the latest stamp (ms) of the files, globs expanded
# in DIR.
# shellcheck disable=SC2048,SC2086
jb_max() { local dir=$1; shift; (cd "$dir" && stat -c %.3Y $*) | tr -d . | sort -n | tail -n 1; }
# jb_codes DIR FROM TO: the exit codes of wFROM..wTO, space-separated.
jb_codes() { local i out=; for i in $(seq "$2" "$3"); do out="$out $(cat "$1/w$i.code")"; done; echo "${out# }"; }
jb_fail() { echo "bench: jobs: $*" >&2; [ -s "$dir/err" ] && sed 's/^/bench:   /' "$dir/err" >&2; return 1; }

# jb_floor DIR N: N bare CMDs, each marking running as a runner's CMD
# does (DIR/run.<i>), started and waited for as jb_runner starts runners.
jb_floor() {
    local dir=$1 n=$2 i
    mkdir -p "$dir"
    for i in $(seq 0 $((n - 1))); do
        ( sh -c ": > $dir/run.$i" &
          wait $! || true ) &
    done
    wait
}

# job_bench_fail N BREAKS: job_launch_ms, job_launch_floor_ms and
# job_fail_exit_ms per break.
job_bench_fail() {
    local n=$1 breaks=$2 i dir name t0 others
    for _ in $(seq "$breaks"); do
        name=$(fresh jobfail) dir=$tmp/jobs/$name
        t0=$(now_ms)
        jb_floor "$dir/floor" "$n"
        echo "job_launch_floor_ms $(( $(jb_max "$dir/floor" 'run.*') - t0 ))"
        mkdir -p "$dir" && mkfifo "$dir/fifo.0"
        t0=$(now_ms)
        jb_runner "$dir" "$name" "$n" 0 "$(jb_failer "$dir")"
        for i in $(seq 1 $((n - 1))); do
            jb_runner "$dir" "$name" "$n" "$i" "$(jb_sleeper "$dir")"
        done
        wait_until 60 jb_all_running "$dir" 0 "$n" || jb_fail "the CMDs of $name did not all start" || return 1
        echo "job_launch_ms $(( $(jb_max "$dir" 'run.0.*') - t0 ))"
        echo go > "$dir/fifo.0"
        wait_until 60 jb_all_exited "$dir" "$n" || jb_fail "the runners of $name did not all exit" || return 1
        wait
        others=$(for i in $(seq 1 $((n - 1))); do echo "w$i.exit"; done)
        # shellcheck disable=SC2086
        echo "job_fail_exit_ms $(( $(jb_max "$dir" $others) - $(jb_max "$dir" fail.0) ))"
        [ "$(jb_codes "$dir" 0 0)" = 1 ] && [ "$(jb_codes "$dir" 1 $((n - 1)) | tr -d ' 3')" = "" ] ||
            jb_fail "$name: exit codes $(jb_codes "$dir" 0 $((n - 1))), not 1 then 3s" || return 1
    done
}

# job_bench_big N BREAKS: job_bench_fail's figures at N (issue #34's
# 1,000-member job), as job_big_*, and N as job_big_n.
job_bench_big() {
    echo "job_big_n $1"
    job_bench_fail "$@" | sed 's/^job_/job_big_/'
}

# job_bench_silent N BREAKS LEASE_S: job_silent_exit_ms per break.
job_bench_silent() {
    local n=$1 breaks=$2 lease=$3 i dir name t0 others
    echo "job_silent_lease_ms $((lease * 1000))"
    for _ in $(seq "$breaks"); do
        name=$(fresh jobsilent) dir=$tmp/jobs/$name
        mkdir -p "$dir"
        for i in $(seq 0 $((n - 1))); do
            jb_runner "$dir" "$name" "$n" "$i" "$(jb_sleeper "$dir")" --lease "${lease}s"
        done
        wait_until 60 jb_all_running "$dir" 0 "$n" || jb_fail "the CMDs of $name did not all start" || return 1
        t0=$(now_ms)
        # (The CMD may be gone before its own kill: its watchdog ends it
        # once the runner is.)
        kill -9 "$(cat "$dir/w0.pid")" "$(cat "$dir/pid.w0")" 2> /dev/null || true
        wait_until 60 jb_all_exited "$dir" "$n" || jb_fail "the runners of $name did not all exit" || return 1
        wait
        others=$(for i in $(seq 1 $((n - 1))); do echo "w$i.exit"; done)
        # shellcheck disable=SC2086
        echo "job_silent_exit_ms $(( $(jb_max "$dir" $others) - t0 ))"
        [ "$(jb_codes "$dir" 1 $((n - 1)) | tr -d ' 3')" = "" ] ||
            jb_fail "$name: exit codes $(jb_codes "$dir" 1 $((n - 1))), not 3s" || return 1
    done
}

# job_bench_restart N RESTARTS: job_restart_ms per restart, all in one job.
job_bench_restart() {
    local n=$1 restarts=$2 r i dir name
    name=$(fresh jobrestart) dir=$tmp/jobs/$name
    mkdir -p "$dir"
    for r in $(seq 0 "$restarts"); do mkfifo "$dir/fifo.$r"; done
    jb_runner "$dir" "$name" "$n" 0 "$(jb_failer "$dir")" --restarts "$restarts"
    for i in $(seq 1 $((n - 1))); do
        jb_runner "$dir" "$name" "$n" "$i" "$(jb_sleeper "$dir")" --restarts "$restarts"
    done
    for r in $(seq 0 "$restarts"); do
        wait_until 60 jb_all_running "$dir" "$r" "$n" || jb_fail "attempt $r of $name did not start" || return 1
        [ "$r" = 0 ] || echo "job_restart_ms $(( $(jb_max "$dir" "run.$r.*") - $(jb_max "$dir" "fail.$((r - 1))") ))"
        echo go > "$dir/fifo.$r"
    done
    wait_until 60 jb_all_exited "$dir" "$n" || jb_fail "the runners of $name did not all exit" || return 1
    wait
}

# jb_cmdstats: "name calls" per command of INFO commandstats.
jb_cmdstats() {
    redis-cli -s "$sock" INFO commandstats | tr -d '\r' |
        sed -n 's/^cmdstat_\([^:]*\):calls=\([0-9]*\),.*/\1 \2/p'
}

# job_bench_calls N WINDOWS SECONDS [LEASE_S]: commands per member and
# second while N members run, over WINDOWS windows of SECONDS each. The
# members enter spread over a renewal interval (lease/3), as their
# renewals then are: entering together, they would renew together, and a
# window would count a whole interval's renewals or none.
job_bench_calls() {
    local n=$1 windows=$2 secs=$3 lease=${4:-10} row=${5:-job} w i dir name t0 t1
    shift $(($# < 5 ? $# : 5))
    name=$(fresh jobcalls) dir=$tmp/jobs/$name
    mkdir -p "$dir" && mkfifo "$dir/fifo.0"
    for i in $(seq 0 $((n - 1))); do
        [ "$i" = 0 ] || sleep "$(awk -v l="$lease" -v n="$n" 'BEGIN { printf "%.3f", l / 3 / n }')"
        if [ "$i" = 0 ]; then
            jb_runner "$dir" "$name" "$n" 0 "$(jb_failer "$dir")" --lease "${lease}s" "$@"
        else
            jb_runner "$dir" "$name" "$n" "$i" "$(if [ $# -gt 0 ]; then jb_beater "$dir"; else jb_sleeper "$dir"; fi)" \
                --lease "${lease}s" "$@"
        fi
    done
    wait_until 60 jb_all_running "$dir" 0 "$n" || jb_fail "the CMDs of $name did not all start" || return 1
    for w in $(seq "$windows"); do
        jb_cmdstats > "$dir/before"
        t0=$(now_ms)
        sleep "$secs"
        jb_cmdstats > "$dir/after"
        t1=$(now_ms)
        awk -v n="$n" -v ms=$((t1 - t0)) -v w="$w" -v row="$row" '
            NR == FNR { before[$1] = $2; next }
            $1 != "info" && $2 > before[$1] {
                d = $2 - before[$1]; all += d
                if ($1 ~ /^(evalsha|eval|blmove|brpoplpush)$/) client += d
                printf "# job window %d per member-s: %s %.3f\n", w, $1, d / n / (ms / 1000)
            }
            END {
                printf "%s_calls_per_member_s %.3f\n", row, all / n / (ms / 1000)
                printf "%s_cmds_per_member_s %.3f\n", row, client / n / (ms / 1000)
            }' "$dir/before" "$dir/after"
    done
    echo go > "$dir/fifo.0"
    wait_until 60 jb_all_exited "$dir" "$n" || jb_fail "the runners of $name did not all exit" || return 1
    wait
}

# job_bench_stall N BREAKS STALL_S LEASE_S: job_stall_exit_ms per stall.
# The members make progress with a shell builtin (a redirection sets the
# file's time), so no process is started per beat.
job_bench_stall() {
    local n=$1 breaks=$2 stall=$3 lease=$4 i dir name beat
    echo "job_stall_bound_ms $((stall * 1000 + lease * 1000 / 3 + 1000))"
    for _ in $(seq "$breaks"); do
        name=$(fresh jobstall) dir=$tmp/jobs/$name
        mkdir -p "$dir"
        beat="while [ ! -e $dir/go ]; do : > \"\$RBARRIER_PROGRESS\"; sleep 0.2; done"
        jb_runner "$dir" "$name" "$n" 0 ": > $dir/run.0.w0; $beat; : > $dir/stall.0; kill -STOP \$\$" \
            --lease "${lease}s" --stall-after "${stall}s" --kill-after 2s
        for i in $(seq 1 $((n - 1))); do
            jb_runner "$dir" "$name" "$n" "$i" ": > $dir/run.0.w$i; while :; do : > \"\$RBARRIER_PROGRESS\"; sleep 0.2; done" \
                --lease "${lease}s" --stall-after "${stall}s" --kill-after 2s
        done
        wait_until 60 jb_all_running "$dir" 0 "$n" || jb_fail "the CMDs of $name did not all start" || return 1
        : > "$dir/go"
        wait_until 60 jb_all_exited "$dir" "$n" || jb_fail "the runners of $name did not all exit" || return 1
        wait
        echo "job_stall_exit_ms $(( $(jb_max "$dir" 'w*.exit') - $(jb_max "$dir" stall.0) ))"
        [ "$(jb_codes "$dir" 0 $((n - 1)) | tr -d ' 3')" = "" ] && grep -q "w0 made no progress" "$dir/err" ||
            jb_fail "$name: exit codes $(jb_codes "$dir" 0 $((n - 1))), not 3s naming w0" || return 1
    done
}

# The rows: BREAKS breaks of each kind (RB_BENCH_JOB_BREAKS, default 20;
# the smoke run 2), three windows of 10 s for the commands (one of 2 s,
# with a 3 s lease, in the smoke run).
jobs_rows() {
    local breaks big
    if [ "$SMOKE" = 1 ]; then
        breaks=2
    else
        breaks=${RB_BENCH_JOB_BREAKS:-20}
    fi
    say "jobs: $breaks reported failures at N=8 (launch and break)"
    step job_bench_fail 8 "$breaks"
    say "jobs: $breaks silent deaths at N=4, lease 2 s"
    step job_bench_silent 4 "$breaks" 2
    say "jobs: $breaks restarts of one job at N=8"
    step job_bench_restart 8 "$breaks"
    say "jobs: $breaks stalls at N=8 (one member stops itself), stall-after 2 s, lease 3 s"
    step job_bench_stall 8 "$breaks" 2 3
    if [ "$SMOKE" = 1 ]; then
        say "jobs: commands while 8 members run, a window of 2 s, lease 3 s"
        step job_bench_calls 8 1 2 3
        step job_bench_calls 8 1 2 3 job_stall --stall-after 1h
    else
        say "jobs: commands while 8 members run, 3 windows of 10 s, default lease"
        step job_bench_calls 8 3 10
        say "jobs: the same with --stall-after on"
        step job_bench_calls 8 3 10 10 job_stall --stall-after 1h
    fi
    big=${RB_BENCH_JOB_BIG:-1000}
    if [ "$SMOKE" != 1 ] && [ "$big" -gt 0 ]; then
        say "jobs: 2 reported failures at N=$big (launch and break), all on this host"
        step job_bench_big "$big" 2
    fi
}
