# A real framework stuck: three torch.distributed (gloo) ranks under
# `rbarrier run --stall-after 5s`; one rank is SIGSTOPped mid-training, the
# others block in all_reduce. The job ends within stall-after + lease/3 +
# 1 s (with a margin for a loaded machine), every member having trained
# until the stop (no false stall while torch starts), the reason says a
# member made no progress, and no python process is left. Debian's
# python3-torch (make test-torch installs it); without it the checks are
# skipped, and under CI (CI=true) that is a failure.
. "$RB_TESTS_DIR/lib.sh"

PY=/usr/bin/python3
if ! $PY -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
    if [ "${CI:-}" = true ]; then
        not_ok "torch stall: python3-torch with gloo is installed (CI=true: make test-torch installs it)"
    else
        skip "torch stall: python3-torch with gloo is not installed (make test-torch installs it)"
    fi
    exit 0
fi

T=$RB_TEST_TMP
ms() { date +%s%3N; }
name=$(fresh torch)
d=$T/$name
mkdir -p "$d"

# The worker reads rbarrier's environment itself (the rendezvous through a
# file of its own: the job's name and restart make it fresh).
cat > "$d/train.py" <<'EOF'
import os, signal, sys, time
progress = os.environ["RBARRIER_PROGRESS"]
os.utime(progress)                      # alive before torch's import
import torch
import torch.distributed as dist
rank, n = int(os.environ["RBARRIER_RANK"]), int(os.environ["RBARRIER_N"])
d = sys.argv[1]
dist.init_process_group("gloo", rank=rank, world_size=n,
                        init_method="file://%s/rdv.%s" % (d, os.environ["RBARRIER_RESTART"]))
t = torch.ones(4)
for step in range(1, 100000):
    dist.all_reduce(t)
    os.utime(progress)
    with open("%s/%s.step" % (d, os.environ["RBARRIER_ID"]), "w") as f:
        f.write("%d\n" % step)
    if rank == 1 and step == 20:
        with open("%s/stopped" % d, "w") as f:
            f.write("%d\n" % int(time.time() * 1000))
        os.kill(os.getpid(), signal.SIGSTOP)
    time.sleep(0.05)
EOF

for id in m0 m1 m2; do
    ( $RBARRIER run --name "$name" --id $id --expect m0,m1,m2 --lease 3s --stall-after 5s --kill-after 2s \
          --timeout 60 -- $PY "$d/train.py" "$d" 2> "$d/$id.err"
      echo $? > "$d/$id.code" ) &
done
check "torch: rank 1 stops itself at step 20" wait_until 120 test -s "$d/stopped"
wait
t1=$(ms)
expect_eq "... every runner exits 3" "3 3 3" "$(cat "$d/m0.code") $(cat "$d/m1.code") $(cat "$d/m2.code")"
expect_match "... the reason: a member made no progress" "job broken: m[0-2] made no progress for" "$(cat "$d/m0.err")"
expect_match "... the stopped rank is named" "job broken: m1 made no progress" "$(cat "$d/m0.err")"
took=$((t1 - $(cat "$d/stopped")))
diag "stop to last exit: $took ms (stall-after 5 s, lease 3 s: bound 7 s)"
if [ $took -lt 10000 ]; then ok "... within the bound (+3 s for a loaded machine: $took ms)"
else not_ok "... within the bound ($took ms; bound 7 s)"; fi
steps=$(cat "$d/m0.step" "$d/m1.step" "$d/m2.step" | tr '\n' ' ')
expect_match "... every member trained until the stop" "^(19|20|21) (19|20|21) (19|20|21) $" "$steps"
gone() { ! pgrep -f "$d/train.py" >/dev/null; }
check "... no python process is left" wait_until 5 gone
