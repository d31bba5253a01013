# bench/report.awk: the tables and JSON of `make bench` from bench-raw.txt
# (`key value` lines; '#' lines are details). Each key's median, min and
# max over its repetitions. First issue #24's yardsticks: a ratio is taken
# within each repetition (the two sides measured back to back) and its
# median shown, with the target and PASS/MISS; then the details, a row per
# figure with its floor, ratio and earlier target. A new measurement's keys
# need a row here to be shown; they go to the JSON in any case. Exits 1
# when a yardstick has no number (a measurement could not be made).
#
# With -v only=lock (make bench-lock) it shows the lock's rows alone.
#
# awk -f bench/report.awk -v json=FILE -v machine=TEXT -v date_utc=TIME \
#     -v cpu=TEXT -v cores=N -v redis=VERSION -v reps=N [-v only=lock] \
#     bench-raw.txt
function isort(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
}
function stats(k,    n, i, v) {
    n = cnt[k]
    for (i = 1; i <= n; i++) v[i] = val[k, i] + 0
    isort(v, n)
    MIN[k] = v[1]; MAX[k] = v[n]
    MED[k] = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function num(x) {
    if (x == int(x) && (x > 999 || x < -999)) return sprintf("%d", x)
    if (x >= 100 || x <= -100) return sprintf("%.0f", x)
    if (x >= 10 || x <= -10) return sprintf("%.1f", x)
    return sprintf("%.2f", x)
}
# Whether k was measured (cnt is set by the samples alone: a reference to
# MED[k] elsewhere creates that element, so MED cannot say).
function has(k) { return (k in cnt) }
function jesc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
# row(label, key, unit, floor text, ratio, target text, verdict)
function row(label, k, unit, ftext, ratio, ttext, verdict,    v, sp) {
    if (!has(k)) return
    v = num(MED[k]) unit
    sp = (cnt[k] > 1) ? num(MIN[k]) ".." num(MAX[k]) : "(1 run)"
    printf "%-44s %12s %15s %16s %8s %12s %s\n", label, v, sp, ftext,
        ratio, ttext, verdict
    if (verdict != "") {
        nchk++
        chk_fig[nchk] = label; chk_val[nchk] = MED[k]
        chk_tgt[nchk] = ttext; chk_ok[nchk] = (verdict == "PASS")
        chk_ratio[nchk] = ratio
    }
}
function verdict(ok) { return ok ? "PASS" : "MISS" }

# The per-repetition ratio a/b (b/a with inv) as key k: its median, min and
# max over the repetitions both keys have.
function ratio_key(k, a, b, inv,    n, i, x) {
    if (!(a in cnt) || !(b in cnt)) return
    n = (cnt[a] < cnt[b]) ? cnt[a] : cnt[b]
    if (n < 1) return
    for (i = 1; i <= n; i++) {
        x = inv ? val[b, i] / val[a, i] : val[a, i] / val[b, i]
        val[k, i] = x
    }
    cnt[k] = n; order[++nk] = k
    stats(k)
}
# A yardstick row: label, key, unit, what it compares, target text, pass.
function yrow(label, k, unit, ftext, ttext, ok,    v, sp) {
    if (only != "" && index(k, only "_") != 1) return
    nreq++
    if (!has(k)) {
        printf "%-46s %12s\n", label, "NO NUMBER"
        missing = missing " " k
        return
    }
    v = num(MED[k]) unit
    sp = (cnt[k] > 1) ? num(MIN[k]) ".." num(MAX[k]) : "(1 run)"
    printf "%-46s %10s %14s %26s %9s %s\n", label, v, sp, ftext, ttext,
        ttext == "-" ? "" : verdict(ok)
    if (ttext != "-") {
        nchk++; y24++
        chk_fig[nchk] = label; chk_val[nchk] = MED[k]
        chk_tgt[nchk] = ttext; chk_ok[nchk] = ok; chk_ratio[nchk] = "-"
        y24ok += ok
    }
}
function vs(a, ua, b, ub) { return num(MED[a]) ua " : " num(MED[b]) ub }

# ---- issue #22: jobs (bench/jobs.sh) ----------------------------------------
# A job row: label, key, unit, target text, pass; its samples (each break
# is one) give the median, min and max.
function jrow(label, k, unit, ttext, ok,    v, sp) {
    if (!has(k)) {
        printf "%-46s %12s\n", label, "NO NUMBER"
        missing = missing " " k
        return
    }
    v = num(MED[k]) unit
    sp = (cnt[k] > 1) ? num(MIN[k]) ".." num(MAX[k]) : "(1 run)"
    printf "%-46s %10s %14s %9s %9s %s\n", label, v, sp, cnt[k], ttext,
        ttext == "-" ? "" : verdict(ok)
    if (ttext != "-") {
        nchk++; j22++
        chk_fig[nchk] = label; chk_val[nchk] = MED[k]
        chk_tgt[nchk] = ttext; chk_ok[nchk] = ok; chk_ratio[nchk] = "-"
        j22ok += ok
    }
}
function jobs_table(    lim) {
    printf "\nIssue #22: jobs (rbarrier run; median of the samples)\n"
    printf "%-46s %10s %14s %9s %9s %s\n", "figure", "value", "min..max",
        "samples", "target", "result"
    printf "%-46s %10s %14s %9s %9s %s\n", "------", "-----", "--------",
        "-------", "------", "------"
    jrow("job: launch N=8 to all CMDs running", "job_launch_ms", "ms",
         "<=200ms", MED["job_launch_ms"] <= 200)
    jrow("  floor: 8 bare CMDs started the same way", "job_launch_floor_ms", "ms",
         "-", 1)
    jrow("job: reported failure to last exit, N=8", "job_fail_exit_ms", "ms",
         "<500ms", MED["job_fail_exit_ms"] < 500)
    lim = MED["job_silent_lease_ms"] + 1000
    jrow("job: silent death to last exit, N=4", "job_silent_exit_ms", "ms",
         "<=" num(lim / 1000) "s", MED["job_silent_exit_ms"] <= lim)
    jrow("job: --restarts, failure to all CMDs running", "job_restart_ms", "ms",
         "<=1000ms", MED["job_restart_ms"] <= 1000)
    jrow("job: Redis commands/s per running member", "job_calls_per_member_s", "",
         "<=2.0", MED["job_calls_per_member_s"] <= 2)
    jrow("  of which client commands/s per member", "job_cmds_per_member_s", "",
         "-", 1)
    lim = MED["job_stall_bound_ms"]
    jrow("job: member stops to last exit, N=8 (stall)", "job_stall_exit_ms", "ms",
         "<=" num(lim / 1000) "s", MED["job_stall_exit_ms"] <= lim)
    jrow("job: commands/s per member, --stall-after", "job_stall_calls_per_member_s", "",
         "<=2.0", MED["job_stall_calls_per_member_s"] <= 2)
    jrow("  of which client commands/s per member", "job_stall_cmds_per_member_s", "",
         "-", 1)
    if (has("job_big_launch_ms")) {
        jrow("job: launch N=" num(MED["job_big_n"]) " to all CMDs running",
             "job_big_launch_ms", "ms", "-", 1)
        jrow("  floor: as many bare CMDs", "job_big_launch_floor_ms", "ms", "-", 1)
        jrow("job: reported failure to last exit, N=" num(MED["job_big_n"]),
             "job_big_fail_exit_ms", "ms", "-", 1)
    }
    printf "%d of %d #22 targets met (silent death: lease %s + 1 s).\n", j22ok,
        j22, num(MED["job_silent_lease_ms"] / 1000) "s"
}

/^#/ || NF < 2 { next }
{
    k = $1
    if (!(k in cnt)) { order[++nk] = k }
    cnt[k]++; val[k, cnt[k]] = $2
}
END {
    for (i = 1; i <= nk; i++) stats(order[i])

    # RB_BENCH_ONLY=jobs: the job rows alone (the other tables need
    # figures that run did not make). Left unindented to keep merges small.
    if (only != "jobs") {
    # ---- issue #24: against the floor and the peers, same run -------------
    ratio_key("lib_floor.4", "rounds_per_s.4", "rounds_per_s_floor.4", 0)
    ratio_key("lib_floor.16", "rounds_per_s.16", "rounds_per_s_floor.16", 0)
    ratio_key("lib_py.4", "rounds_per_s.4", "rounds_per_s_py.4", 0)
    ratio_key("lib_py.16", "rounds_per_s.16", "rounds_per_s_py.16", 0)
    ratio_key("cli_shell.4", "shell_rounds_per_s_rbarrier.4",
              "shell_rounds_per_s_redis-cli.4", 0)
    ratio_key("start_get_ratio", "cli_get_ms", "redis_cli_get_ms", 0)
    ratio_key("tls_round_ratio", "rounds_per_s_tls.4", "rounds_per_s_tlsplain.4", 1)
    ratio_key("hist_onoff.4", "rounds_per_s.4", "rounds_per_s_nohist.4", 0)
    ratio_key("tls_cli_ratio", "tls_cli_ms", "tls_cli_plain_ms", 0)
    ratio_key("lock_pairs_py", "lock_pairs_per_s", "lock_pairs_per_s_py", 0)
    ratio_key("lock_handoffs_py", "lock_handoffs_per_s", "lock_handoffs_per_s_py", 0)
    printf "\nIssue #24 yardsticks (ratios within each repetition, median of %d)\n", reps
    printf "%-46s %10s %14s %26s %9s %s\n", "figure", "value", "min..max",
        "from (medians)", "target", "result"
    printf "%-46s %10s %14s %26s %9s %s\n", "------", "-----", "--------",
        "--------------", "------", "------"
    yrow("library/floor rounds/s, N=4", "lib_floor.4", "x",
         vs("rounds_per_s.4", "/s", "rounds_per_s_floor.4", "/s"), ">=0.90",
         MED["lib_floor.4"] >= 0.9)
    yrow("library/floor rounds/s, N=16", "lib_floor.16", "x",
         vs("rounds_per_s.16", "/s", "rounds_per_s_floor.16", "/s"), ">=0.90",
         MED["lib_floor.16"] >= 0.9)
    yrow("library/redis-py rounds/s, N=4", "lib_py.4", "x",
         vs("rounds_per_s.4", "/s", "rounds_per_s_py.4", "/s"), ">=1.5",
         MED["lib_py.4"] >= 1.5)
    yrow("library/redis-py rounds/s, N=16", "lib_py.16", "x",
         vs("rounds_per_s.16", "/s", "rounds_per_s_py.16", "/s"), ">=2.0",
         MED["lib_py.16"] >= 2)
    yrow("CLI/redis-cli shell barrier, 4 loops", "cli_shell.4", "x",
         vs("shell_rounds_per_s_rbarrier.4", "/s",
            "shell_rounds_per_s_redis-cli.4", "/s"), ">=5.0",
         MED["cli_shell.4"] >= 5)
    yrow("Redis commands per round, N=4, library", "calls_per_round.4", "",
         "scripts incl.", "<=28", MED["calls_per_round.4"] <= 28)
    yrow("Redis commands per round, N=4, floor", "calls_per_round_floor.4", "",
         "scripts incl.", "-", 1)
    yrow("history on/off rounds/s, N=4 (#35)", "hist_onoff.4", "x",
         vs("rounds_per_s.4", "/s", "rounds_per_s_nohist.4", "/s"), ">=0.90",
         MED["hist_onoff.4"] >= 0.9)
    yrow("Redis commands per round, N=4, history off", "calls_per_round_nohist.4",
         "", "scripts incl.", "-", 1)
    yrow("client cmds per round, N=4, history on : off", "cmds_per_round.4",
         "", vs("cmds_per_round.4", "", "cmds_per_round_nohist.4", ""), "-", 1)
    yrow("idle: Redis commands/s per waiting party", "idle_calls_per_party_s", "",
         "default lease", "<=2.0", MED["idle_calls_per_party_s"] <= 2)
    yrow("process start: rbarrier get / redis-cli GET", "start_get_ratio", "x",
         vs("cli_get_ms", "ms", "redis_cli_get_ms", "ms"), "<=0.30",
         MED["start_get_ratio"] <= 0.3)
    yrow("TLS: N=4 round time, rediss:// / plain", "tls_round_ratio", "x",
         num(1e6 / MED["rounds_per_s_tls.4"]) "us : " \
             num(1e6 / MED["rounds_per_s_tlsplain.4"]) "us", "<=1.3",
         MED["tls_round_ratio"] <= 1.3)
    yrow("TLS: one get process, rediss:// / plain", "tls_cli_ratio", "x",
         vs("tls_cli_ms", "ms", "tls_cli_plain_ms", "ms"), "<=1.5",
         MED["tls_cli_ratio"] <= 1.5)
    yrow("fan-out 64: last arrival to last release", "fanout_64_ms", "ms",
         "from the arrival's send", "<=10ms", MED["fanout_64_ms"] <= 10)
    yrow("lock/redis-py Lock pairs/s, uncontended", "lock_pairs_py", "x",
         vs("lock_pairs_per_s", "/s", "lock_pairs_per_s_py", "/s"), ">=1.0",
         MED["lock_pairs_py"] >= 1)
    yrow("lock/redis-py Lock hand-offs/s, 8 procs", "lock_handoffs_py", "x",
         vs("lock_handoffs_per_s", "/s", "lock_handoffs_per_s_py", "/s"), ">=3.0",
         MED["lock_handoffs_py"] >= 3)
    yrow("lock: Redis commands/s per blocked waiter", "lock_idle_calls_per_waiter_s", "",
         "default lease", "<=2.0", MED["lock_idle_calls_per_waiter_s"] <= 2)
    printf "%d of %d #24 targets met.\n", y24ok, y24
    if (only == "lock") {
        printf "\nDetails\n"
        printf "%-44s %12s %15s\n", "figure", "value", "min..max"
        row("lock: client commands per hand-off", "lock_handoff_cmds", "", "", "", "", "")
        row("lock: Redis commands per hand-off", "lock_handoff_calls", "", "", "", "", "")
        row("rw lock: grants/s, 8 readers + 1 writer", "lock_rw_grants_per_s", "", "", "", "", "")
        row("rw lock: client commands per grant", "lock_rw_cmds", "", "", "", "", "")
        printf "Raw samples: %s\n", "bench-raw.txt"
        if (missing != "") {
            printf "bench: no number for:%s\n", missing > "/dev/stderr"
            exit 1
        }
        exit 0
    }

    rtt = MED["rtt_p50_us"]; cli = MED["redis_cli_ping_ms"]
    printf "\nDetails (targets of earlier issues)\n"
    printf "%-44s %12s %15s %16s %8s %12s %s\n", "figure", "value",
        "min..max", "floor", "ratio", "target", "result"
    printf "%-44s %12s %15s %16s %8s %12s %s\n", "------", "-----",
        "--------", "-----", "-----", "------", "------"
    row("floor: Redis round trip p50 (TCP)", "rtt_p50_us", "us", "-", "-", "-", "")
    row("floor: Redis round trip p50 (unix)", "rtt_unix_p50_us", "us", "-", "-", "-", "")
    row("  RTT, client and Redis pinned to one core", "rtt_same_core_p50_us", "us", "-", "-", "-", "")
    row("  RTT, client and Redis on two cores", "rtt_cross_core_p50_us", "us", "-", "-", "-", "")
    row("floor: EVALSHA rate, 1 INCR, 1 conn", "evalsha_per_s", "/s", "-", "-", "-", "")
    row("floor: redis-cli PING process", "redis_cli_ping_ms", "ms", "-", "-", "-", "")
    row("floor: CPU of one PING (client+Redis)", "ping_cpu_us", "us", "-", "-", "-", "")
    pc = MED["ping_cpu_us"]
    fr = sprintf("%s/s =1/RTT", num(1e6 / rtt))
    split("2 4 16", ns, " ")
    for (j = 1; j <= 3; j++) {
        n = ns[j]; k = "rounds_per_s." n
        if (!has(k)) continue
        r = MED[k] * rtt / 1e6
        if (n == 4) row("N=4: rounds/s", k, "/s", fr, sprintf("%.3f", r), ">=0.333", verdict(r >= 1 / 3))
        else if (n == 16) row("N=16: rounds/s", k, "/s", fr, sprintf("%.3f", r), ">=0.100", verdict(r >= 0.1))
        else row("N=" n ": rounds/s", k, "/s", fr, sprintf("%.3f", r), "-", "")
        rs = MED["rtt_same_core_p50_us"]
        if (n != 2 && rs > 0)
            row("  the same against the one-core RTT", k, "/s",
                sprintf("%s/s =1/RTT1", num(1e6 / rs)), sprintf("%.3f", MED[k] * rs / 1e6),
                "-", "")
    }
    for (j = 1; j <= 3; j++) {
        n = ns[j]; k = "release_p50_us." n
        if (!has(k)) continue
        r = MED[k] / rtt
        row("N=" n ": release p50 (after completer reply)", k, "us", num(rtt) "us RTT",
            sprintf("%.2f", r), n == 4 ? "<=2.00" : "-", n == 4 ? verdict(r <= 2) : "")
        k = "release_p99_us." n
        row("N=" n ": release p99 (after completer reply)", k, "us", num(rtt) "us RTT",
            sprintf("%.2f", MED[k] / rtt), "-", "")
        k = "release_send_p50_us." n
        row("N=" n ": release p50 (after completer send)", k, "us", num(rtt) "us RTT",
            sprintf("%.2f", MED[k] / rtt), "-", "")
    }
    for (j = 1; j <= 3; j++) {
        n = ns[j]; k = "cmds_per_round." n
        if (!has(k)) continue
        r = MED[k] / n
        row("N=" n ": client commands per round", k, "", n " (=N)", sprintf("%.2f", r),
            "<=2.00", verdict(MED[k] <= 2 * n))
        row("N=" n ": Redis calls per round, scripts incl.", "calls_per_round." n, "",
            "-", "-", "-", "")
        row("N=" n ": Redis busy time per round", "redis_busy_us_per_round." n, "us",
            "-", "-", "-", "")
        k = "cpu_us_per_round." n
        if (has(k) && pc > 0)
            row("N=" n ": CPU per round (parties+Redis)", k, "us",
                num(MED["cmds_per_round." n] * pc) "us cmds*PING", sprintf("%.2f",
                MED[k] / (MED["cmds_per_round." n] * pc)), "-", "")
        if (has(k)) {
            # The rate the machine allows if every core did nothing but
            # this: cores / CPU per round.
            kk = "cpu_bound_rounds_per_s." n
            MED[kk] = cores * 1e6 / MED[k]; MIN[kk] = cores * 1e6 / MAX[k]
            MAX[kk] = cores * 1e6 / MIN[k]; cnt[kk] = cnt[k]; order[++nk] = kk
            row("N=" n ": rounds/s if CPU-bound on " cores " cores", kk, "/s",
                fr, sprintf("%.3f", MED[kk] * rtt / 1e6), "-", "")
        }
    }
    row("N=4 over unix socket: rounds/s", "rounds_per_s_unix.4", "/s",
        sprintf("%s/s =1/RTTu", num(1e6 / MED["rtt_unix_p50_us"])),
        sprintf("%.3f", MED["rounds_per_s_unix.4"] * MED["rtt_unix_p50_us"] / 1e6), "-", "")
    r = MED["cli_wait_ms"] / cli
    row("rbarrier wait --n 1, one process", "cli_wait_ms", "ms", num(cli) "ms cli PING",
        sprintf("%.2f", r), "<=0.60", verdict(r <= 0.6))
    row("rbarrier train, one process", "cli_train_ms", "ms", num(cli) "ms cli PING",
        sprintf("%.2f", MED["cli_train_ms"] / cli), "-", "")
    k = "fanout_1000_ms"
    row("fan-out 1000: arrival to last release", k, "ms", num(rtt) "us RTT",
        sprintf("%.0f", MED[k] * 1000 / rtt), "<=50ms", verdict(MED[k] <= 50))
    k = "idle_cmds_per_party_s"
    row("idle: client commands/s per party", k, "", "-", "-", "<=1", verdict(MED[k] <= 1))
    row("idle: Redis calls/s per party, scripts incl.", "idle_calls_per_party_s", "",
        "-", "-", "-", "")
    row("lock: client commands per hand-off, 8 procs", "lock_handoff_cmds", "",
        "-", "-", "-", "")
    row("lock: Redis cmds per hand-off, scripts incl.", "lock_handoff_calls", "",
        "-", "-", "-", "")
    # Issue #30: what the supervisor costs a command (bench/supervised.sh);
    # `make bench-start RB_BENCH_BASELINE=OLD` sets it against a build
    # before the supervisor.
    ratio_key("sup_handoff_floor", "lock_handoff_ms", "lock_handoff_floor_ms", 0)
    ratio_key("sup_job_floor", "job_start_ms", "job_start_floor_ms", 0)
    row("lock -- true, the whole process", "lock_true_ms", "ms", "-", "-",
        "-", "")
    row("lock hand-off to a queued waiter's CMD", "lock_handoff_ms", "ms",
        num(MED["lock_handoff_floor_ms"]) "ms end+start",
        num(MED["sup_handoff_floor"]), "-", "")
    row("job start, 8 members to the last CMD", "job_start_ms", "ms",
        num(MED["job_start_floor_ms"]) "ms 8 bare",
        num(MED["sup_job_floor"]), "-", "")
    row("memory: bytes per open barrier (4/5 in)", "bytes_per_open_barrier", "B",
        "-", "-", "-", "")
    k = "keys_left_after_ttl"
    if (MED[k] >= 0)
        row("keys left 60 s after last round, ttl 30", k, "", "-", "-", "=0", verdict(MED[k] == 0))
    else
        row("keys left 60 s after last round, ttl 30", k, " (skipped)", "-", "-", "=0", "")
    pass = 0
    for (i = 1; i <= nchk; i++) pass += chk_ok[i]
    printf "%d of %d earlier targets met. Raw samples: %s; JSON: %s\n",
        pass - y24ok, nchk - y24, "bench-raw.txt", "bench.json"
    }
    jobs_table()

    # JSON: medians at the top level (keys like rounds_per_s.4 grouped into
    # objects keyed by N), the same shape under "min" and "max".
    printf "{\n  \"date\": \"%s\",\n", date_utc > json
    printf "  \"machine\": {\"cpu\": \"%s\", \"cores\": %d, \"redis\": \"%s\", \"line\": \"%s\"},\n",
        jesc(cpu), cores, jesc(redis), jesc(machine) > json
    printf "  \"repetitions\": %d,\n", reps > json
    for (w = 1; w <= 3; w++) {
        if (w > 1) printf "  \"%s\": {\n", (w == 2 ? "min" : "max") > json
        ind = (w == 1) ? "  " : "    "
        ngrp = 0; split("", gseen)
        first = 1
        for (i = 1; i <= nk; i++) {
            k = order[i]
            x = (w == 1) ? MED[k] : (w == 2 ? MIN[k] : MAX[k])
            if (index(k, ".")) {
                g = substr(k, 1, index(k, ".") - 1)
                if (g in gseen) continue
                gseen[g] = 1
                printf "%s%s\"%s\": {", (first ? "" : ",\n"), ind, g > json
                sep = ""
                for (m = i; m <= nk; m++) {
                    kk = order[m]
                    if (substr(kk, 1, length(g) + 1) != g ".") continue
                    xx = (w == 1) ? MED[kk] : (w == 2 ? MIN[kk] : MAX[kk])
                    printf "%s\"%s\": %s", sep, substr(kk, length(g) + 2), xx + 0 > json
                    sep = ", "
                }
                printf "}" > json
            } else {
                printf "%s%s\"%s\": %s", (first ? "" : ",\n"), ind, k, x + 0 > json
            }
            first = 0
        }
        printf "%s", (w == 1) ? ",\n" : "\n  },\n" > json
    }
    printf "  \"targets\": [\n" > json
    for (i = 1; i <= nchk; i++)
        printf "    {\"figure\": \"%s\", \"value\": %s, \"ratio\": \"%s\", \"target\": \"%s\", \"pass\": %s}%s\n",
            jesc(chk_fig[i]), chk_val[i] + 0, jesc(chk_ratio[i]), jesc(chk_tgt[i]),
            chk_ok[i] ? "true" : "false", (i < nchk ? "," : "") > json
    printf "  ]\n}\n" > json
    if (missing != "") {
        printf "bench: no number for:%s\n", missing > "/dev/stderr"
        exit 1
    }
}
