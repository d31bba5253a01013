# shellcheck shell=bash disable=SC2154
# (sock, tmp, raw, SMOKE, here: set by bench/run.sh)
# bench/scale.sh: issue #34's scale figures for `make bench`, sourced by
# bench/run.sh; scale_rows runs them and prints their table; RB_BENCH_ONLY=
# scale makes run.sh run them alone.
#
# What one protocol call costs Redis as the round grows: N = 16, 1,024 and
# 100,000 parties. One host cannot hold 100,000 blocking parties, so the
# parties are the scripts themselves, called with the arguments the
# library sends (lua/README.md), pipelined over one connection; Redis' own
# accounting (INFO commandstats: EVALSHA's usec, which covers everything
# a script runs) says what each call cost, so the client's speed does not
# count. Per N:
#   scale_arrive_us_nN       an arrival into a round of about N (the last
#                            min(N-1, 1000) arrivals before it is full)
#   scale_beat_us_nN         a heartbeat in that round (1,000 of them)
#   scale_beat_list_us_nN    ... asking for the members (--expect progress)
#   scale_xarrive_us_nN      an arrival with --expect (its digest; the list
#                            was stored before, in parts)
#   scale_complete_us_nN     the arrival that completes the round
#   scale_break_us_nN        a timeout's break (abandon) of a round of N-1
#   scale_break_bytes_nN     the outcome every party then reads, in bytes
#   scale_xbeat_list_us_nN, scale_xbreak_us_nN, scale_xbreak_bytes_nN
#                            the heartbeat asking for the members, and the
#                            break, of a round with --expect
#   scale_complete_us_nN     (the mean of 3 rounds)
#   scale_mem_bytes_nN       Redis memory per party of an open round: its
#                            member (MEMORY USAGE of the in key / N) and
#                            its arrival record (a key of its own)
#   scale_xmem_bytes_nN      ... and of the --expect set, per id
#   scale_xstore_max_us_nN   the longest call that stores the --expect list
#                            (a part of 1,024 ids: no call holds Redis long),
#                            from the slow log; scale_xstore_parts_nN calls
# and scale_<path>_ratio: the figure at N=100,000 over N=16 (goal <= 1.5).
# Then the same question for a TCPStore barrier (torch's own store), where
# torch is importable (bench/tcpstore_scale.py: scale_tcpstore_*): each
# party is a connection there, so N is what one host can open.

sc_cli() { redis-cli -s "$sock" "$@"; }
# Tab-separated commands on stdin, as RESP, in one pipeline.
sc_pipe() {
    awk -F'\t' '{ printf "*%d\r\n", NF
                  for (i = 1; i <= NF; i++) printf "$%d\r\n%s\r\n", length($i), $i }' |
        sc_cli --pipe >"$tmp/scale.pipe" 2>&1
    grep -q 'errors: 0,' "$tmp/scale.pipe" || { cat "$tmp/scale.pipe" >&2; return 1; }
}
# EVALSHA's calls and usec so far
sc_stat() {
    sc_cli INFO commandstats | tr -d '\r' |
        sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),usec=\([0-9]*\),.*/\1 \2/p'
}
# sc_cost CMD...: µs of Redis per EVALSHA that CMD (a pipeline) sends
sc_cost() {
    local c0 u0 c1 u1
    read -r c0 u0 <<<"$(sc_stat)"
    "$@" >/dev/null || return 1
    read -r c1 u1 <<<"$(sc_stat)"
    awk -v c=$((c1 - c0)) -v u=$((u1 - u0)) 'BEGIN { printf "%.2f\n", c ? u / c : -1 }'
}

# sc_took TOKEN: µs of the EVALSHA whose arguments hold TOKEN, as the slow
# log (every command logged, during scale_rows) has it. A lone call is
# timed inside a pipeline of its kind, where the caches are as warm as
# for the others: alone after a pause it costs several times as much.
sc_took() {
    sc_cli SLOWLOG GET 128 | awk -v t="$1" '
        $0 == "EVALSHA" { d = prev } $0 == t && d != "" { print d; exit } { prev = $0 }'
}

# sc_arrivals B N FROM TO CALL [DIGEST]: arrive lines for ids pFROM..pTO,
# their nonces CALL<id> (a party's next call has another nonce)
sc_arrivals() {
    local b=$1 n=$2 call=$5 digest=${6:-}
    seq -f 'p%06g' "$3" "$4" | awk -v sha="$SC_ARRIVE" -v b="$b" -v n="$n" -v c="$call" -v d="$digest" '
        { printf "EVALSHA\t%s\t2\t%s\t%s:nonce\t%s\t%s%s\t%s\t600000\t600\t300\t0\t\t%s\t\n", sha, b, b, $1, c, $1, n, d }'
}
# sc_beats B GEN N COUNT [1]: heartbeat lines of COUNT members spread
# over the round (ids p000001..)
sc_beats() {
    local b=$1 g=$2 n=$3 list=${5:-}
    awk -v sha="$SC_BEAT" -v b="$b" -v g="$g" -v n="$n" -v k="$4" -v l="$list" 'BEGIN {
        for (i = 0; i < k; i++) {
            printf "EVALSHA\t%s\t4\t%s\t%s:%s:in\t%s:%s:out\t%s:nonce\t%s\tp%06d\t600000\t300\t600%s\n",
                sha, b, b, g, b, g, b, g, 1 + (i * 7919) % n, l == "" ? "" : "\t" l
        } }'
}

# sc_break B MEMBERS [GEN]: a timeout's break of round GEN (1) of B by
# p000001, at the end of 100 heartbeats (its nonce-free arguments carry
# brk-B-GEN as "what")
sc_break() {
    local g=${3:-1}
    { sc_beats "$1" "$g" "$2" 100
      printf 'EVALSHA\t%s\t3\t%s\t%s:%s:in\t%s:%s:out\t%s\tp000001\tbrk-%s-%s\t300\tarrivals\n' \
          "$SC_ABANDON" "$1" "$1" "$g" "$1" "$g" "$g" "$1" "$g"; } | sc_pipe
}
# sc_breaks B N M GEN CALL [DIGEST]: rounds GEN and GEN+1 of B (N
# parties) filled with M arrivals each and broken; prints the two breaks'
# µs. A break is one call: one figure of it is noise, a median of three
# is not.
sc_breaks() {
    local b=$1 n=$2 m=$3 g=$4 call=$5 digest=${6:-} r
    for r in "$g" $((g + 1)); do
        sc_arrivals "$b" "$n" 1 "$m" "$call$r" "$digest" | sc_pipe || return 1
        sc_break "$b" "$m" "$r" || return 1
        printf '%s ' "$(sc_took "brk-$b-$r")"
    done
}
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# sc_store B FILE TAG: store the --expect list of FILE's ids (one a line)
# for barrier B in parts, cut as the library cuts them (after 1,024 ids, or
# before an id that would take a part past 64 KiB); print its digest, and
# record the longest call (the slow log's) and the number of calls as
# scale_xstore_max_us_TAG and scale_xstore_parts_TAG.
sc_store() {
    local b=$1 ids=$2 tag=$3 sums digest k
    rm -f "$tmp"/scale.part.*
    awk -v out="$tmp/scale.part." '
        { if (ids == 1024 || (ids && bytes + 1 + length($0) > 65536)) { k++; ids = 0; bytes = 0 }
          f = sprintf("%s%04d", out, k)
          if (f != last && last != "") close(last)
          last = f
          printf "%s%s", (ids ? "," : ""), $0 > f
          bytes += (ids ? 1 : 0) + length($0); ids++ }' "$ids"
    sums=$(for k in "$tmp"/scale.part.*; do sha1sum <"$k" | cut -c1-40; done | tr -d '\n')
    digest=$(printf '%s' "$sums" | sha1sum | cut -d' ' -f1)
    k=$((${#sums} / 40))
    sc_cli CONFIG SET slowlog-max-len 100000 >/dev/null
    sc_cli SLOWLOG RESET >/dev/null
    for r in $(seq "$k"); do
        printf 'EVALSHA\t%s\t1\t%s\t%s\t%d\t%s\t%s\t600\t600000\n' "$SC_STORE" "$b" \
            "$digest" "$r" "$sums" "$(cat "$tmp/scale.part.$(printf %04d $((r - 1)))")"
    done | sc_pipe || return 1
    [ "$(sc_cli SCARD "$b:x:$digest")" = "$(wc -l <"$ids")" ] ||
        { echo "bench: scale: the --expect list of $tag was not stored" >&2; return 1; }
    # Scripts' own commands are logged too: an EVALSHA line, then its sha.
    sc_cli SLOWLOG GET 100000 | awk -v s="$SC_STORE" -v t="$tag" -v parts="$k" '
        $0 == "EVALSHA" { d = prev; getline; if ($0 == s && d > m) m = d }
        { prev = $0 }
        END { printf "scale_xstore_max_us_%s %d\nscale_xstore_parts_%s %d\n", t, m, t, parts }' >>"$raw"
    sc_cli SLOWLOG RESET >/dev/null
    sc_cli CONFIG SET slowlog-max-len 128 >/dev/null
    rm -f "$tmp"/scale.part.*
    echo "$digest"
}

# sc_run N: every figure at N, into $raw
sc_run() {
    local n=$1 b x list digest k from us out r usec= brk more
    b="rb:b:{scale-$n}"
    x="rb:b:{scalex-$n}"
    k=$(( n - 1 < 1000 ? n - 1 : 1000 ))
    from=$(( n - k ))     # the measured arrivals: p$from..p$((n-1))
    if [ "$from" -gt 1 ]; then sc_arrivals "$b" "$n" 1 $((from - 1)) a | sc_pipe || return 1; fi
    us=$(sc_cost eval 'sc_arrivals "$b" "$n" "$from" $((n - 1)) a | sc_pipe') || return 1
    echo "scale_arrive_us_n$n $us" >>"$raw"
    awk -v z="$(sc_cli MEMORY USAGE "$b:1:in" SAMPLES 0)" -v n=$((n - 1)) \
        -v r="$(sc_cli MEMORY USAGE "$b:i:p000001")" \
        'BEGIN { printf "scale_mem_bytes_n%d %.0f\n", n + 1, z / n + r }' >>"$raw"
    us=$(sc_cost eval 'sc_beats "$b" 1 $((n - 1)) 1000 | sc_pipe') || return 1
    echo "scale_beat_us_n$n $us" >>"$raw"
    us=$(sc_cost eval 'sc_beats "$b" 1 $((n - 1)) 1000 1 | sc_pipe') || return 1
    echo "scale_beat_list_us_n$n $us" >>"$raw"
    # The break, then the same round again to its completion.
    sc_break "$b" $((n - 1)) || return 1
    brk=$(sc_took "brk-$b-1")
    out=$(sc_cli LINDEX "$b:1:out" 0)
    echo "scale_break_bytes_n$n ${#out}" >>"$raw"
    # Rounds 2..4: one completing call each, so three of them.
    for r in 2 3 4; do
        sc_arrivals "$b" "$n" 1 "$n" "r$r" | sc_pipe || return 1
        [ "$(sc_cli LINDEX "$b:$r:out" 0)" = ok ] ||
            { echo "bench: scale: round $r of $n did not pass" >&2; return 1; }
        usec="$usec $(sc_took "r$r$(printf 'p%06d' "$n")")"
    done
    echo "$usec" | awk -v n="$n" '{ printf "scale_complete_us_n%d %.2f\n", n, ($2 + $3 + $4) / 3 }' >>"$raw"
    more=$(sc_breaks "$b" "$n" $((n - 1)) 5 b) || return 1
    # shellcheck disable=SC2086
    echo "scale_break_us_n$n $(median "$brk" $more)" >>"$raw"
    # --expect: the list is stored once, in parts (expect-store), then
    # every arrival sends its digest (the SHA1 of the parts' SHA1s). The
    # plain rounds go first: four rounds of N left behind would make each
    # call below meet colder caches, a cost of the bench, not of N.
    sc_cli FLUSHDB >/dev/null
    seq -f 'p%06g' 1 "$n" >"$tmp/scale.ids"
    digest=$(sc_store "$x" "$tmp/scale.ids" "n$n") || return 1
    printf 'EVALSHA\t%s\t2\t%s\t%s:nonce\tp%06d\txfirst\t%s\t600000\t600\t300\t0\t\t%s\t\n' \
        "$SC_ARRIVE" "$x" "$x" "$n" "$n" "$digest" | sc_pipe || return 1
    if [ "$from" -gt 1 ]; then sc_arrivals "$x" "$n" 1 $((from - 1)) a "$digest" | sc_pipe || return 1; fi
    us=$(sc_cost eval 'sc_arrivals "$x" "$n" "$from" $((n - 2)) a "$digest" | sc_pipe') || return 1
    echo "scale_xarrive_us_n$n $us" >>"$raw"
    us=$(sc_cost eval 'sc_beats "$x" 1 $((n - 2)) 1000 1 | sc_pipe') || return 1
    echo "scale_xbeat_list_us_n$n $us" >>"$raw"
    sc_break "$x" $((n - 2)) || return 1
    brk=$(sc_took "brk-$x-1")
    out=$(sc_cli LINDEX "$x:1:out" 0)
    echo "scale_xbreak_bytes_n$n ${#out}" >>"$raw"
    more=$(sc_breaks "$x" "$n" $((n - 2)) 2 x "$digest") || return 1
    # shellcheck disable=SC2086
    echo "scale_xbreak_us_n$n $(median "$brk" $more)" >>"$raw"
    awk -v s="$(sc_cli MEMORY USAGE "$x:x:$digest" SAMPLES 0)" -v n="$n" \
        'BEGIN { printf "scale_xmem_bytes_n%d %.0f\n", n, s / n }' >>"$raw"
    sc_cli FLUSHDB >/dev/null
}

scale_rows() {
    local sizes="16 1024 100000" n key small big r
    [ "$SMOKE" = 1 ] && sizes="16 256"
    SC_ARRIVE=$(sh "$here/../tools/embed-lua.sh" --expand "$here/../lua/arrive-2.lua" | sc_cli -x SCRIPT LOAD)
    SC_BEAT=$(sh "$here/../tools/embed-lua.sh" --expand "$here/../lua/heartbeat-4.lua" | sc_cli -x SCRIPT LOAD)
    SC_ABANDON=$(sh "$here/../tools/embed-lua.sh" --expand "$here/../lua/abandon-3.lua" | sc_cli -x SCRIPT LOAD)
    SC_STORE=$(sh "$here/../tools/embed-lua.sh" --expand "$here/../lua/expect-store-1.lua" | sc_cli -x SCRIPT LOAD)
    sc_cli CONFIG SET slowlog-log-slower-than 0 >/dev/null
    sc_cli CONFIG SET slowlog-max-len 128 >/dev/null
    for n in $sizes; do
        say "scale: N = $n (scripts called directly, pipelined)"
        sc_run "$n" || { echo "bench: scale: N = $n failed" >&2; exit 1; }
    done
    # The longest ids (200 bytes) make the biggest parts (64 KiB).
    seq -f "%0200g" 1 2000 >"$tmp/scale.ids"
    sc_store "rb:b:{scale-long}" "$tmp/scale.ids" long >/dev/null ||
        { echo "bench: scale: storing the list of long ids failed" >&2; exit 1; }
    sc_cli FLUSHDB >/dev/null
    sc_cli CONFIG SET slowlog-log-slower-than 10000 >/dev/null
    small=${sizes%% *} big=${sizes##* }
    printf '\nScale (issue #34): Redis µs per call (INFO commandstats), bytes, by N; ratio N=%s / N=%s (goal <= 1.5)\n' "$big" "$small"
    printf '%-22s' "path"
    for n in $sizes; do printf '%12s' "N=$n"; done
    printf '%10s\n' ratio
    for key in arrive_us beat_us beat_list_us complete_us break_us xarrive_us \
               xbeat_list_us xbreak_us break_bytes xbreak_bytes mem_bytes xmem_bytes; do
        printf '%-22s' "$key"
        for n in $sizes; do
            printf '%12s' "$(sed -n "s/^scale_${key}_n$n //p" "$raw" | tail -1)"
        done
        r=$(awk -v lo="$(sed -n "s/^scale_${key}_n$small //p" "$raw" | tail -1)" \
                -v hi="$(sed -n "s/^scale_${key}_n$big //p" "$raw" | tail -1)" \
                'BEGIN { printf "%.2f", (lo > 0 ? hi / lo : -1) }')
        echo "scale_${key}_ratio $r" >>"$raw"
        printf '%10s\n' "$r"
    done
    # Storing a list is O(N) by nature: what is bounded is each call.
    printf '%-22s' "xstore_max_us"
    for n in $sizes; do printf '%12s' "$(sed -n "s/^scale_xstore_max_us_n$n //p" "$raw" | tail -1)"; done
    printf '%10s\n' "-"
    printf '(the longest call that stores an --expect list: %s calls at N=%s; ids of 200 bytes: %s µs, %s calls for 2,000; goal < 5000 µs)\n' \
        "$(sed -n "s/^scale_xstore_parts_n$big //p" "$raw" | tail -1)" "$big" \
        "$(sed -n "s/^scale_xstore_max_us_long //p" "$raw" | tail -1)" \
        "$(sed -n "s/^scale_xstore_parts_long //p" "$raw" | tail -1)"
    tcpstore_rows
}

# TCPStore's server CPU per request of its barrier, by N connections
# (RB_BENCH_TCPSTORE_SIZES, comma-separated). Without torch, a SKIP line:
# CI installs torch for its torch tests alone, and the rest of the bench
# must not need it.
tcpstore_rows() {
    local sizes=${RB_BENCH_TCPSTORE_SIZES:-16,1024,4096,8192} args=() n ok=() key small big r
    [ "$SMOKE" = 1 ] && sizes=16,64 args=(--requests 100)
    if ! "$PYTHON" -c 'import torch.distributed' 2>/dev/null; then
        printf '\nSKIP TCPStore scale: torch is not importable for %s (tools/install-torch.sh installs Debian python3-torch)\n' "$PYTHON"
        echo "scale_tcpstore_skipped 1" >>"$raw"
        return 0
    fi
    "$PYTHON" "$here/tcpstore_scale.py" --sizes "$sizes" "${args[@]}" >"$tmp/tcpstore.out" ||
        { cat "$tmp/tcpstore.out" >&2; echo "bench: scale: TCPStore failed" >&2; exit 1; }
    cat "$tmp/tcpstore.out" >>"$raw"
    for n in ${sizes//,/ }; do
        grep -q "^scale_tcpstore_add_us_n$n " "$tmp/tcpstore.out" && ok+=("$n")
    done
    [ "${#ok[@]}" -gt 0 ] || { cat "$tmp/tcpstore.out" >&2; echo "bench: scale: TCPStore measured nothing" >&2; exit 1; }
    small=${ok[0]} big=${ok[-1]}
    printf '\nScale, TCPStore (%s): server CPU µs per request, by N connections; ratio N=%s / N=%s\n' \
        "$(sed -n 's/^# tcpstore: \(torch [^,]*\),.*/\1/p' "$tmp/tcpstore.out")" "$big" "$small"
    printf '%-22s' "path"
    for n in ${sizes//,/ }; do printf '%12s' "N=$n"; done
    printf '%10s\n' ratio
    for key in add_us wait_us keywait_us open_s; do
        printf '%-22s' "tcpstore_$key"
        for n in ${sizes//,/ }; do
            r=$(sed -n "s/^scale_tcpstore_${key}_n$n //p" "$tmp/tcpstore.out")
            grep -q "^scale_tcpstore_failed_n$n " "$tmp/tcpstore.out" && r=failed
            printf '%12s' "${r:--}"
        done
        r=$(awk -v lo="$(sed -n "s/^scale_tcpstore_${key}_n$small //p" "$tmp/tcpstore.out")" \
                -v hi="$(sed -n "s/^scale_tcpstore_${key}_n$big //p" "$tmp/tcpstore.out")" \
                'BEGIN { printf "%.2f", (lo > 0 ? hi / lo : -1) }')
        # No ratio of a size to itself: one size measured says nothing of growth.
        [ "$key" = open_s ] || [ "$big" = "$small" ] && r=-
        [ "$r" = - ] || echo "scale_tcpstore_${key}_ratio $r" >>"$raw"
        printf '%10s\n' "$r"
    done
    echo "(add: an arrival, add(key, 1); wait: the barrier's poll, add(key, 0), every 10 ms per waiting rank; keywait: wait([key]) of a set key)"
    sed -n 's/^# tcpstore: N = /stopped: N = /p' "$tmp/tcpstore.out"
}
