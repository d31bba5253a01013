#!/bin/sh
# Check the protocol models with spin: spin -a, cc, pan, for every
# configuration below (`make model`), or show that every seeded bug is
# caught (`make model-mutants`, with --mutants).
#
#   tests/model/run.sh [--mutants] [BUILD_DIR]
#
# A configuration is one line: name, model, mode, -D switches. Modes:
#   safety  assertions, exhaustive (pan built with -DSAFETY)
#   term    the model's LTL claim under weak fairness (pan -a -f)
# Every search is exhaustive (hash compaction is not used: -DCOLLAPSE only
# compresses states losslessly); a search cut short by the depth or memory
# limit counts as a failure, never as a pass.
set -eu
mutants=0
if [ "${1:-}" = --mutants ]; then
	mutants=1
	shift
fi
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/model}
mkdir -p "$out"
out=$(cd "$out" && pwd)
CC=${CC:-cc}
# pan is built -O2 for the big searches below, -O0 (built in a fifth of the
# time) for the small ones and for the searches that find the seeded bugs
heavy=" b2-laps b3-once t3 t2-timeout j3 "

# name        model   mode    switches
configs='
b2         barrier safety -DN=2 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=1 -DSTALLS=1 -DRESETS=1 -DEARLY_CRASH
b2-once    barrier safety -DN=2 -DONCE=3 -DFAILS=1 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=1 -DSTALLS=1 -DRESETS=1 -DEARLY_CRASH
b2-laps    barrier safety -DN=2 -DCALLS=2 -DONCE=1 -DFAILS=1 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=1 -DRESETS=1
b3         barrier safety -DN=3 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=1 -DEARLY_CRASH
b3-once    barrier safety -DN=3 -DONCE=7 -DFAILS=1 -DCRASHES=1 -DLOSSES=1 -DRESETS=1 -DSIGNALS=0
t2         barrier term   -DTERM -DN=2 -DONCE=3 -DFAILS=1 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=0 -DLATE_CRASH
t3         barrier term   -DTERM -DN=3 -DONCE=7 -DFAILS=1 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=0 -DLATE_CRASH
t2-timeout barrier term   -DTERM -DN=2 -DTIMEOUT=2 -DONCE=3 -DFAILS=1 -DCRASHES=1 -DLOSSES=1 -DSIGNALS=1 -DSTALLS=1 -DRESETS=1 -DEARLY_CRASH
'

# name (the bug)                 model   mode    switches
mutant_list='
release-at-n-1                 barrier safety -DMUT_RELEASE_N1 -DN=2 -DCRASHES=0 -DLOSSES=0 -DSIGNALS=0
retry-counts-twice             barrier safety -DMUT_RETRY_TWICE -DN=2 -DCRASHES=0 -DLOSSES=1 -DSIGNALS=0
heartbeat-ignores-leases       barrier term   -DMUT_HB_NO_LEASE -DTERM -DN=2 -DONCE=3 -DFAILS=1 -DCRASHES=1 -DLOSSES=0 -DSIGNALS=0 -DLATE_CRASH
reset-misses-once-round        barrier safety -DMUT_RESET_ONCE -DN=2 -DONCE=3 -DRESETS=1 -DCRASHES=0 -DLOSSES=0 -DSIGNALS=0
once-claim-ignores-outcome     barrier safety -DMUT_CLAIM_NO_CHECK -DN=2 -DONCE=3 -DSIGNALS=1 -DCRASHES=0 -DLOSSES=0
failed-arrival-not-withdrawn   barrier safety -DMUT_NO_WITHDRAW -DN=2 -DLOSSES=1 -DSIGNALS=1 -DCRASHES=0
release-after-outcome          barrier safety -DMUT_RELEASE_NO_CHECK -DN=2 -DONCE=3 -DSIGNALS=1 -DCRASHES=0 -DLOSSES=0
earliest-deadline-skips-scan   barrier safety -DMUT_DL_SKIP -DN=2 -DCRASHES=1 -DLOSSES=0 -DSIGNALS=0 -DEARLY_CRASH
earliest-deadline-not-lowered  barrier safety -DMUT_DL_NO_LOWER -DN=3 -DCRASHES=1 -DLOSSES=0 -DSIGNALS=0 -DEARLY_CRASH
heartbeat-raises-earliest      barrier safety -DMUT_HB_RAISES_DL -DN=3 -DCRASHES=1 -DLOSSES=0 -DSIGNALS=0 -DEARLY_CRASH
heartbeat-leaves-earliest      barrier safety -DMUT_HB_NO_LOWER_DL -DN=3 -DCRASHES=1 -DLOSSES=0 -DSIGNALS=0 -DEARLY_CRASH
record-pruned-at-round-end     barrier safety -DMUT_RECORD_PRUNED -DN=2 -DCRASHES=0 -DLOSSES=1 -DSIGNALS=0
'
# Each other model brings its own configurations and mutants.
for model in job param supervise lock expect keeper; do
	[ -f "$here/$model.pml" ] || continue
	configs="$configs
$(cat "$here/$model.configs")"
	mutant_list="$mutant_list
$(cat "$here/$model.mutants")"
done

# run NAME MODEL MODE SWITCHES...: prints pan's summary in $dir/pan.out;
# returns 0 when pan found no error and searched the whole space.
run() {
	r_dir=$out/$1 r_model=$2 r_mode=$3
	case "$heavy" in
	*" $1 "*) popt=-O2 ;;
	*) popt=-O0 ;;
	esac
	shift 3
	rm -rf "$r_dir"
	mkdir -p "$r_dir"
	# the model and the parts it includes (job_faults.pml for job)
	for f in "$here/$r_model.pml" "$here/${r_model}"_*.pml; do
		if [ -f "$f" ]; then cp "$f" "$r_dir/"; fi
	done
	(
		cd "$r_dir"
		spin -a "$@" "$r_model.pml" >spin.out 2>&1 || { cat spin.out; exit 2; }
		if [ "$r_mode" = safety ]; then
			$CC $popt -w -DSAFETY -DCOLLAPSE -DMEMLIM=1536 -o pan pan.c
			./pan -m1000000 -w24 >pan.out 2>&1 || true
		else
			$CC $popt -w -DCOLLAPSE -DMEMLIM=1536 -o pan pan.c
			./pan -a -f -m1000000 -w24 >pan.out 2>&1 || true
		fi
	)
}

# The lines of pan's report a reader needs (without the unreached code).
summary() {
	grep -E 'statespace search|never claim  |errors:|states, stored|total actual memory|elapsed time' "$1" |
		sed 's/^[[:space:]]*/    /'
	grep -E '^pan:.*(violated|cycle|too small|out of memory)' "$1" |
		sed 's/^/    /' || true
}

clean() {    # 0: no error and the whole space was searched
	grep -q 'errors: 0$' "$1" &&
		! grep -qE 'too small|out of memory|search not completed' "$1"
}

status=0
if [ $mutants = 0 ]; then
	start=$(date +%s)
	echo "$configs" | while read -r name model mode switches; do
		[ -n "$name" ] || continue
		t0=$(date +%s)
		echo "== $name ($model.pml, $mode): $switches"
		# shellcheck disable=SC2086
		run "$name" "$model" "$mode" $switches
		summary "$out/$name/pan.out"
		if clean "$out/$name/pan.out"; then
			echo "   $name: passed in $(($(date +%s) - t0)) s"
		else
			echo "   $name: FAILED (trail: spin -t -p $switches $out/$name/$model.pml, in $out/$name)"
			echo fail >"$out/.failed"
		fi
	done
	echo "model: $(($(date +%s) - start)) s in all"
	if [ -f "$out/.failed" ]; then
		rm -f "$out/.failed"
		echo "model: FAILED"
		exit 1
	fi
	echo "model: every configuration passed (errors: 0)"
	exit 0
fi

echo "$mutant_list" | while read -r name model mode switches; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086
	run "mutant-$name" "$model" "$mode" $switches
	f=$out/mutant-$name/pan.out
	if grep -qE 'errors: [1-9]' "$f"; then
		why=$(grep -E '^pan:1?:? *(assertion violated|acceptance cycle|invalid end)' "$f" | head -1)
		echo "caught  $name: $why"
	else
		echo "missed  $name"
		echo fail >"$out/.failed"
	fi
done
if [ -f "$out/.failed" ]; then
	rm -f "$out/.failed"
	echo "model-mutants: some seeded bug was MISSED"
	exit 1
fi
echo "model-mutants: every seeded bug was caught"
