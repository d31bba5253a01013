#!/bin/sh
# examples/worker.sh: the shared-counters worker loop, written in shell on
# top of the rbarrier command line. It does what `rbarrier worker` does, so
# it doubles as a guide to using barriers and parameters from scripts.
#
# usage: examples/worker.sh INDEX COUNT [ITERS [RUN]]
#
#   INDEX  this worker's index, 0..COUNT-1 (also its party id)
#   COUNT  how many workers take part; every one must be started
#   ITERS  iterations (default 10)
#   RUN    run name: the barrier and the parameter are both called RUN
#          (default $RUN, else "shell-demo"); use a new name for a new run,
#          or the global parameter goes on from where the last run left it
#
# environment:
#   RBARRIER      the rbarrier command (default: rbarrier from PATH); it is
#                 split into words, so "valgrind -q rbarrier" works
#   RBARRIER_URL  where Redis is (default redis://127.0.0.1:6379/0)
#   TIMEOUT       seconds to wait at a barrier before giving up (default 60)
#
# Start COUNT of these, on one machine or many, e.g.
#   for i in 0 1 2 3; do RUN=try1 examples/worker.sh "$i" 4 10 & done; wait
# Each iteration prints
#   worker  I, local_param  L global_param  G
# Across all workers of a run, the global values G are exactly
# 1..COUNT*ITERS, each printed once: no update is lost. Every worker's
# k-th line (k = 0, 1, ...) has L = COUNT*k, the value all of them copied
# after the k-th barrier. `rbarrier worker` processes of the same run,
# prefix and COUNT can join in: they use the same ids, barrier and
# parameter.
#
# Exit status: 0 when every iteration ran; otherwise the exit status of the
# rbarrier command that failed, e.g. 3 when the round was broken (another
# worker timed out, died or was interrupted), 124 when this worker's own
# TIMEOUT expired, 4 when Redis could not be reached. rbarrier has already
# said why on stderr.
set -eu

usage() {
    echo "usage: $0 INDEX COUNT [ITERS [RUN]]" >&2
    exit 2
}
[ $# -ge 2 ] && [ $# -le 4 ] || usage
index=$1
count=$2
iters=${3:-10}
run=${4:-${RUN:-shell-demo}}
timeout=${TIMEOUT:-60}
# Not quoted where it is used, on purpose: it may be several words.
RBARRIER=${RBARRIER:-rbarrier}

# Check the arguments before touching Redis: whole numbers, INDEX < COUNT.
for v in "$index" "$count" "$iters"; do
    case $v in
    '' | *[!0-9]*) echo "$0: '$v' is not a whole number" >&2; usage ;;
    esac
done
if [ "$index" -ge "$count" ]; then
    echo "$0: INDEX must be 0..$((count - 1)), not $index" >&2
    exit 2
fi

# meet: arrive at barrier RUN with COUNT parties and block until all COUNT
# are there. The same barrier serves round after round: the k-th call of
# every worker lands in the same round. The id makes a retried arrival
# count once. If the round is broken, stop the loop with rbarrier's exit
# status; carrying on would mean working with a partner missing.
meet() {
    $RBARRIER wait --name "$run" --n "$count" --id "$index" \
        --timeout "$timeout" || {
        status=$?
        echo "$0: worker $index: barrier '$run' failed (exit $status)," \
            "stopping" >&2
        exit "$status"
    }
}

i=0
while [ "$i" -lt "$iters" ]; do
    # 1. Everyone is here: the global value is no longer changing.
    meet
    # 2. Copy the global value into this worker's local copy (one atomic
    #    step on the server). sync prints the value; the loop does not need
    #    it here, because train reports the local copy too.
    $RBARRIER sync --param "$run" --worker "$index" >/dev/null
    # 3. Everyone has copied: from here on the global value changes again,
    #    but every local copy holds the same value.
    meet
    # 4. Add 1 to the global value, atomically (INCRBY on the server), and
    #    get back "local L global G": this worker's copy and the global
    #    value right after this worker's own increment. A failure exits
    #    the script (set -e) with rbarrier's status.
    reply=$($RBARRIER train --param "$run" --worker "$index" --by 1)
    read -r w1 local_v w2 global_v <<EOF
$reply
EOF
    if [ "$w1" != local ] || [ "$w2" != global ]; then
        echo "$0: worker $index: unexpected train reply '$reply'" >&2
        exit 1
    fi
    printf 'worker %2d, local_param %2d global_param %2d\n' \
        "$index" "$local_v" "$global_v"
    i=$((i + 1))
done
