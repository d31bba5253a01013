#!/bin/sh
# examples/checkpoint.sh: stop all workers at a barrier before saving, and
# restart them all from the last checkpoint when one of them crashes.
#
# A checkpoint is only consistent if every worker saves the state of the
# same step: nobody may still be working on the step, and nobody may start
# the next step before every save is on disk. Two barriers per checkpoint
# give exactly that:
#
#   work ... | wait "ckpt-RUN" | save | wait "ckpt-RUN-saved" | work ...
#              all have stopped         all have saved
#
# The whole worker runs as one member of the job RUN (`rbarrier run
# --restarts`): when a worker crashes between checkpoints (or its machine
# is lost), every other member's worker is stopped, and all of them start
# again from the last round that every worker saved, up to RESTARTS times.
#
# usage: examples/checkpoint.sh INDEX COUNT DIR [ROUNDS]
#
#   INDEX   this worker's index, 0..COUNT-1 (its member id)
#   COUNT   how many workers take part
#   DIR     where checkpoints go (shared by all workers, e.g. an NFS mount).
#           A run that finds checkpoints of its RUN there resumes after
#           the last round all workers saved, a fresh start too: a new
#           RUN name (or an empty DIR) starts from round 1
#   ROUNDS  work-then-checkpoint rounds (default 3)
#
# environment:
#   RBARRIER      the rbarrier command (default: rbarrier from PATH); split
#                 into words, so a wrapper such as "valgrind -q rbarrier"
#                 works
#   RBARRIER_URL  where Redis is (default redis://127.0.0.1:6379/0)
#   RUN           run name: the job's name, part of the barrier names and
#                 of the checkpoint files (default "ckpt-demo")
#   TIMEOUT       seconds to wait for the others to start, and at a
#                 barrier (default 120)
#   RESTARTS      how many times a crash restarts every worker (default 2)
#   STEP          a command for each round's real work (e.g. a training
#                 step), run as `$STEP ROUND` with the job's environment
#                 (RBARRIER_RESTART, ...); its failure is this worker's
#                 crash. Default: none, only the stand-in arithmetic
#
# Output, one line per event:
#   worker I: round R saved DIR/RUN.round-R.worker-I
#   worker I: round R resumed
#   worker I: restart K from the checkpoint of round R
# For every round, all "saved" lines come before any "resumed" line.
#
# Exit status: 0 after all rounds; 3 when the job broke (another worker
# crashed, died or was interrupted) with no restart left; 124 when the
# workers were not all there within TIMEOUT; 4 when Redis is out of reach;
# a worker that crashed itself exits with its own status.
set -eu

[ $# -ge 3 ] && [ $# -le 4 ] || {
    echo "usage: $0 INDEX COUNT DIR [ROUNDS]" >&2
    exit 2
}
index=$1
count=$2
dir=$3
rounds=${4:-3}
run=${RUN:-ckpt-demo}
timeout=${TIMEOUT:-120}
RBARRIER=${RBARRIER:-rbarrier}   # used unquoted: it may be several words

# Not yet inside the job: become its member. The runner starts this script
# again as its command, and again after every restart.
if [ "${RBARRIER_JOB:-}" != "$run" ]; then
    exec $RBARRIER run --name "$run" --n "$count" --id "$index" \
        --timeout "$timeout" --restarts "${RESTARTS:-2}" -- /bin/sh "$0" "$@"
fi

# barrier NAME: wait for all COUNT workers at barrier NAME, and turn
# rbarrier's exit status into what this worker does next. Inside the job
# the barrier takes --n and --id from the job, and breaks as soon as the
# job does. The status is caught with `|| status=$?` so that set -e does
# not end the script before the case statement has looked at it.
barrier() {
    status=0
    $RBARRIER wait --name "$1" --timeout "$timeout" || status=$?
    case $status in
    0)  ;;                      # everyone arrived: go on
    3)  # Broken: another worker crashed, died or was interrupted (the job
        # broke), or an operator ran `rbarrier reset`. The reason is
        # already on stderr. Do not save a checkpoint the others will not
        # have: stop; the job restarts everyone from the last complete one.
        echo "worker $index: round $round: barrier $1 broken, not saving" >&2
        exit 3 ;;
    124) # This worker waited TIMEOUT seconds; the others have been told.
        echo "worker $index: round $round: gave up on $1 after" \
            "${timeout}s" >&2
        exit 124 ;;
    4)  echo "worker $index: Redis unreachable" >&2
        exit 4 ;;
    *)  # 1: Redis error or lost state; 2: bad usage; 128+N: signal N.
        exit "$status" ;;
    esac
}

# saved_by_all R: every worker's checkpoint of round R is on disk. Each
# file is renamed into place whole, and no worker of this attempt saves
# before all have looked (the first barrier needs every one of them), so
# all workers find the same round.
saved_by_all() {
    i=0
    while [ "$i" -lt "$count" ]; do
        [ -f "$dir/$run.round-$1.worker-$i" ] || return 1
        i=$((i + 1))
    done
}

# work: stand-in for a training step or a batch of a long job.
state=0
work() {
    if [ -n "${STEP:-}" ]; then
        $STEP "$round"
    fi
    state=$((state + index + 1))
}

mkdir -p "$dir"
# Resume after the last round that every worker saved (a round that only
# some of them saved is done again), with this worker's state of then.
round=1
while [ "$round" -le "$rounds" ] && saved_by_all "$round"; do
    round=$((round + 1))
done
if [ "$round" -gt 1 ]; then
    read -r _ _ _ _ _ state < "$dir/$run.round-$((round - 1)).worker-$index"
    echo "worker $index: restart ${RBARRIER_RESTART:-0} from the checkpoint" \
        "of round $((round - 1))"
fi
while [ "$round" -le "$rounds" ]; do
    work
    # 1. Nobody saves until everybody has stopped working on this round.
    barrier "ckpt-$run"
    # 2. Save. Write to a temporary name and rename, so a crash mid-write
    #    never leaves a file that looks complete.
    file=$dir/$run.round-$round.worker-$index
    printf 'round %d worker %d state %d\n' "$round" "$index" "$state" \
        > "$file.tmp"
    mv "$file.tmp" "$file"
    echo "worker $index: round $round saved $file"
    # 3. Nobody resumes until everybody has saved: otherwise a fast worker
    #    could be a round ahead of a checkpoint the others never finished.
    barrier "ckpt-$run-saved"
    echo "worker $index: round $round resumed"
    round=$((round + 1))
done
