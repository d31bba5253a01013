# run gives CMD torchrun's environment (DESIGN.md "Frameworks"): ranks,
# the members grouped by host, rank 0's address and a port handed round in
# the entering round (fresh per restart), overrides, --nproc-per-node, and
# bad input refused before anything is sent. No torch needed: the command
# writes what it sees (tests/torch runs real torch programs).
. "$RB_TESTS_DIR/lib.sh"

dir=$RB_TEST_TMP/torchenv.$$
mkdir -p "$dir"
vars='RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|GROUP_WORLD_SIZE|ROLE_RANK|ROLE_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|TORCHELASTIC_RESTART_COUNT|TORCHELASTIC_MAX_RESTARTS|TORCHELASTIC_RUN_ID|TORCHELASTIC_USE_AGENT_STORE'
cat >"$dir/dump.sh" <<EOS
#!/bin/sh
# dump.sh DIR [FAIL_RANK]: write the variables to DIR/<id>.<restart>;
# the member of rank FAIL_RANK exits 5 on the first attempt.
env | grep -E '^($vars)=' | sort >"\$1/\$RBARRIER_ID.\$RBARRIER_RESTART"
[ "\$RBARRIER_RESTART" = 0 ] && [ "\$RANK" = "\${2:--1}" ] && exit 5
exit 0
EOS
chmod +x "$dir/dump.sh"
# v FILE NAME: a variable's value in a dump
v() { sed -n "s/^$2=//p" "$1"; }

# Three members on one host, every one with an inherited RANK (and an
# agent-store setting that would hang torch).
j=$(fresh te)
mkdir "$dir/a"
for i in 0 1 2; do
    RANK=7 LOCAL_RANK=7 TORCHELASTIC_USE_AGENT_STORE=True RBARRIER_HOST=one \
        rb run --name "$j" --n 3 --id "m$i" --restarts 2 -- "$dir/dump.sh" "$dir/a" &
done
wait
ranks=$(cat "$dir"/a/m?.0 | sed -n 's/^RANK=//p' | sort | tr '\n' ' ')
expect_eq "RANK: 0, 1, 2, the inherited RANK never leaks" "0 1 2 " "$ranks"
for i in 0 1 2; do
    f=$dir/a/m$i.0
    r=$(v "$f" RANK)
    expect_eq "m$i: RANK is RBARRIER_RANK's, ROLE_RANK the same" "$r $r" \
        "$(v "$f" ROLE_RANK) $(v "$f" RANK)"
    expect_eq "m$i: one host: LOCAL_RANK = RANK, LOCAL_WORLD_SIZE 3, GROUP 0 of 1" \
        "$r 3 0 1" "$(v "$f" LOCAL_RANK) $(v "$f" LOCAL_WORLD_SIZE) $(v "$f" GROUP_RANK) $(v "$f" GROUP_WORLD_SIZE)"
    expect_eq "m$i: WORLD_SIZE, ROLE_WORLD_SIZE, restarts, run id" "3 3 0 2 $j" \
        "$(v "$f" WORLD_SIZE) $(v "$f" ROLE_WORLD_SIZE) $(v "$f" TORCHELASTIC_RESTART_COUNT) $(v "$f" TORCHELASTIC_MAX_RESTARTS) $(v "$f" TORCHELASTIC_RUN_ID)"
    expect_eq "m$i: TORCHELASTIC_USE_AGENT_STORE is False (no agent store)" False \
        "$(v "$f" TORCHELASTIC_USE_AGENT_STORE)"
    expect_eq "m$i: over unix:// MASTER_ADDR is 127.0.0.1" 127.0.0.1 "$(v "$f" MASTER_ADDR)"
done
ports=$(cat "$dir"/a/m?.0 | sed -n 's/^MASTER_PORT=//p' | sort -u)
expect_match "one MASTER_PORT for every member, a port number" '^[0-9]+$' "$ports"

# Over TCP MASTER_ADDR is the address rank 0 reaches Redis from.
if [ -n "${RB_TEST_PORT:-}" ]; then
    j=$(fresh tcp)
    out=$(RBARRIER_URL=redis://127.0.0.1:$RB_TEST_PORT rb run --name "$j" --n 1 \
          -- sh -c 'echo "$MASTER_ADDR"')
    expect_eq "over TCP to 127.0.0.1 MASTER_ADDR is 127.0.0.1" 127.0.0.1 "$out"
fi

# --restarts 1: the first attempt breaks (rank 1 exits 5), the members meet
# again and get a fresh MASTER_PORT.
j=$(fresh rs)
mkdir "$dir/r"
for i in 0 1 2; do
    rb run --name "$j" --n 3 --id "m$i" --restarts 1 -q -- "$dir/dump.sh" "$dir/r" 1 \
        2>/dev/null &
done
codes=""
for p in $(jobs -p); do wait "$p"; codes="$codes$? "; done
expect_eq "a --restarts 1 job whose first attempt failed finishes" "0 0 0 " "$codes"
p0=$(cat "$dir"/r/m?.0 | sed -n 's/^MASTER_PORT=//p' | sort -u)
p1=$(cat "$dir"/r/m?.1 | sed -n 's/^MASTER_PORT=//p' | sort -u)
check "each attempt has one MASTER_PORT for all ($p0 / $p1)" \
    test "$(echo "$p0" | wc -l) $(echo "$p1" | wc -l)" = "1 1"
check "the restart rendezvouses on a fresh MASTER_PORT ($p0 then $p1)" test "$p0" != "$p1"
expect_eq "TORCHELASTIC_RESTART_COUNT 1 after the restart" "1 1 1" \
    "$(for i in 0 1 2; do v "$dir/r/m$i.1" TORCHELASTIC_RESTART_COUNT; done | tr '\n' ' ' | sed 's/ $//')"

# --nproc-per-node 2 on two hosts: ids ID.0, ID.1; LOCAL_RANK 0/1 by rank
# within a host; hosts numbered by their lowest rank.
j=$(fresh np)
mkdir "$dir/n"
for h in ha hb; do
    RBARRIER_HOST=$h rb run --name "$j" --n 4 --nproc-per-node 2 --id "$h" \
        -- "$dir/dump.sh" "$dir/n" &
done
codes=""
for p in $(jobs -p); do wait "$p"; codes="$codes$? "; done
expect_eq "--nproc-per-node 2 on two hosts: both invocations exit 0" "0 0 " "$codes"
expect_eq "... the members are ID.0 and ID.1 of each" "ha.0.0 ha.1.0 hb.0.0 hb.1.0" \
    "$(ls "$dir/n" | sort | tr '\n' ' ' | sed 's/ $//')"
bad=""
for h in ha hb; do
    r0=$(v "$dir/n/$h.0.0" RANK) r1=$(v "$dir/n/$h.1.0" RANK)
    l0=$(v "$dir/n/$h.0.0" LOCAL_RANK) l1=$(v "$dir/n/$h.1.0" LOCAL_RANK)
    g0=$(v "$dir/n/$h.0.0" GROUP_RANK) g1=$(v "$dir/n/$h.1.0" GROUP_RANK)
    # LOCAL_RANK follows the rank within the host.
    if [ "$r0" -lt "$r1" ]; then want="0 1"; else want="1 0"; fi
    [ "$l0 $l1" = "$want" ] || bad="$bad $h:local($r0,$r1->$l0,$l1)"
    [ "$g0" = "$g1" ] || bad="$bad $h:group($g0,$g1)"
    lowest=$(( r0 < r1 ? r0 : r1 ))
    eval "low_$h=$lowest grp_$h=$g0"
    [ "$(v "$dir/n/$h.0.0" LOCAL_WORLD_SIZE) $(v "$dir/n/$h.0.0" GROUP_WORLD_SIZE)" = "2 2" ] ||
        bad="$bad $h:sizes"
done
if [ "$low_ha" -lt "$low_hb" ]; then want="0 1"; else want="1 0"; fi
[ "$grp_ha $grp_hb" = "$want" ] || bad="$bad groups-by-lowest-rank($low_ha,$low_hb->$grp_ha,$grp_hb)"
expect_eq "LOCAL_RANK 0/1 by rank in each host, GROUP_RANK by the hosts' lowest rank" "" "$bad"

# A member of --nproc-per-node fails: the invocation exits with its status,
# the other invocation 3.
j=$(fresh npf)
RBARRIER_HOST=x rb run --name "$j" --n 4 --nproc-per-node 2 --id x \
    -- sh -c '[ "$RANK" = 3 ] && exit 6; sleep 30' 2>/dev/null &
px=$!
RBARRIER_HOST=y rb run --name "$j" --n 4 --nproc-per-node 2 --id y \
    -- sh -c '[ "$RANK" = 3 ] && exit 6; sleep 30' 2>/dev/null &
py=$!
wait $px; cx=$?
wait $py; cy=$?
expect_eq "a failed member's invocation exits with its status, the other 3" "3 6" \
    "$(printf '%s\n' "$cx" "$cy" | sort -n | tr '\n' ' ' | sed 's/ $//')"

# A signal to the --nproc-per-node invocation reaches every member: it
# exits 128+15 and no command is left.
j=$(fresh nps)
mkdir "$dir/s"
# Not through rb(): $! must be the invocation's pid, not a subshell's.
$RBARRIER run --name "$j" --n 2 --nproc-per-node 2 \
    -- sh -c 'echo $$ > "$0/pid.$RANK"; exec sleep 60' "$dir/s" 2>/dev/null &
pn=$!
two_pids() { [ -s "$dir/s/pid.0" ] && [ -s "$dir/s/pid.1" ]; }
wait_until 20 two_pids
kill -TERM $pn
wait $pn
expect_eq "TERM to a --nproc-per-node invocation: exit 143" 143 "$?"
gone() { ! kill -0 "$(cat "$dir/s/pid.0")" 2>/dev/null && ! kill -0 "$(cat "$dir/s/pid.1")" 2>/dev/null; }
check "... and both members' commands are gone" wait_until 20 gone
gone || diag "$(ps -o pid,stat,ppid,pgid,cmd -p "$(cat "$dir/s/pid.0")" -p "$(cat "$dir/s/pid.1")")"

# Overrides: every member sees the flags' values.
j=$(fresh ov)
out=$(rb run --name "$j" --n 1 --master-addr 10.1.2.3 --master-port 29500 \
      -- sh -c 'echo "$MASTER_ADDR:$MASTER_PORT"')
expect_eq "--master-addr and --master-port override" "10.1.2.3:29500" "$out"
j=$(fresh ov2)
for i in 0 1; do
    rb run --name "$j" --n 2 --id "o$i" $( [ $i = 0 ] && echo --master-port 29511 ) \
        --expect o0,o1 -- sh -c 'echo "$MASTER_PORT"' >"$dir/ov$i" &
done
wait
expect_eq "rank 0's --master-port reaches the member without the flag" "29511 29511" \
    "$(cat "$dir/ov0") $(cat "$dir/ov1")"

# examples/socket_allsum.py: a plain socket program meets on MASTER_ADDR:
# MASTER_PORT, its workers waiting for the head with get --until-set.
j=$(fresh sock)
for i in 0 1 2; do
    RBARRIER_BIN=${RBARRIER##* } rb run --name "$j" --n 3 --id "s$i" --timeout 60 \
        -- python3 "$RB_TESTS_DIR/../examples/socket_allsum.py" >"$dir/sock$i" 2>&1 &
done
wait
expect_eq "examples/socket_allsum.py: every rank gets the sum" "rank 0 sum 6
rank 1 sum 6
rank 2 sum 6" "$(cat "$dir"/sock? | sort)"

# Bad input: exit 2, one line, nothing sent.
bad_run() {
    local what=$1; shift
    local before after err code
    before=$(cmdstats)
    err=$("$@" 2>&1 </dev/null)
    code=$?
    after=$(cmdstats)
    expect_eq "$what exits 2" 2 "$code"
    expect_eq "... with one line" 1 "$(printf '%s\n' "$err" | wc -l)"
    check "... and sends nothing" test "$before" = "$after"
}
j=$(fresh bad)
bad_run "--nproc-per-node 0" rb run --name "$j" --n 2 --nproc-per-node 0 -- true
bad_run "--nproc-per-node above --n" rb run --name "$j" --n 2 --nproc-per-node 3 -- true
bad_run "--nproc-per-node x" rb run --name "$j" --n 2 --nproc-per-node x -- true
bad_run "--nproc-per-node with ids not in --expect" \
    rb run --name "$j" --expect a,b --id a --nproc-per-node 2 -- true
bad_run "--master-port 0" rb run --name "$j" --n 1 --master-port 0 -- true
bad_run "--master-port 65536" rb run --name "$j" --n 1 --master-port 65536 -- true
bad_run "--master-addr 'a b'" rb run --name "$j" --n 1 --master-addr 'a b' -- true
bad_run "RBARRIER_HOST with a space" env RBARRIER_HOST='a b' $RBARRIER run --name "$j" --n 1 -- true
