#!/bin/sh
# examples/checkpoint.sh: stop all workers at a barrier before saving.
#
# A checkpoint is only consistent if every worker saves the state of the
# same step: nobody may still be working on the step, and nobody may start
# the next step before every save is on disk. Two barriers per checkpoint
# give exactly that:
#
#   work ... | wait "ckpt-RUN" | save | wait "ckpt-RUN-saved" | work ...
#              all have stopped         all have saved
#
# usage: examples/checkpoint.sh INDEX COUNT DIR [ROUNDS]
#
#   INDEX   this worker's index, 0..COUNT-1 (its party id)
#   COUNT   how many workers take part
#   DIR     where checkpoints go (shared by all workers, e.g. an NFS mount)
#   ROUNDS  work-then-checkpoint rounds (default 3)
#
# environment:
#   RBARRIER      the rbarrier command (default: rbarrier from PATH); split
#                 into words, so a wrapper such as "valgrind -q rbarrier"
#                 works
#   RBARRIER_URL  where Redis is (default redis://127.0.0.1:6379/0)
#   RUN           run name, part of the barrier names (default "ckpt-demo")
#   TIMEOUT       seconds to wait for the others at a barrier (default 120)
#
# Output, one line per event:
#   worker I: round R saved DIR/RUN.round-R.worker-I
#   worker I: round R resumed
# For every round, all "saved" lines come before any "resumed" line.
#
# Exit status: 0 after all rounds; 3 when another worker broke the round
# (it timed out, died or was interrupted: nothing of that round is saved by
# this worker); 124 when this worker gave up waiting; 4 when Redis is out
# of reach; 1 for anything else.
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

# barrier NAME: wait for all COUNT workers at barrier NAME, and turn
# rbarrier's exit status into what this worker does next. The status is
# caught with `|| status=$?` so that set -e does not end the script before
# the case statement has looked at it.
barrier() {
    status=0
    $RBARRIER wait --name "$1" --n "$count" --id "$index" \
        --timeout "$timeout" || status=$?
    case $status in
    0)  ;;                      # everyone arrived: go on
    3)  # Broken: someone else timed out, died (its lease ran out), was
        # interrupted, or an operator ran `rbarrier reset`. The reason is
        # already on stderr. Do not save a checkpoint the others will not
        # have: stop, and let the job restart from the last complete one.
        echo "worker $index: round $round: barrier $1 broken, not saving" >&2
        exit 3 ;;
    124) # This worker waited TIMEOUT seconds; the others have been told
        # (their wait exits 3). Typically a worker that never started.
        echo "worker $index: round $round: gave up on $1 after" \
            "${timeout}s" >&2
        exit 124 ;;
    4)  echo "worker $index: Redis unreachable" >&2
        exit 4 ;;
    *)  # 1: Redis error or lost state; 2: bad usage; 128+N: signal N.
        exit "$status" ;;
    esac
}

# work: stand-in for a training step or a batch of a long job.
state=0
work() {
    state=$((state + index + 1))
}

mkdir -p "$dir"
round=1
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
