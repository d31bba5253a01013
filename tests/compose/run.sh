#!/usr/bin/env bash
# The compose cluster, started for real (`make test-compose`, as root): the
# project's docker-compose.yml is brought up with podman and podman-compose,
# every image built from the project's Dockerfile on a debian:bookworm-slim
# base image that this script makes with debootstrap when there is none.
#
#   1. installs podman, podman-compose, runc, debootstrap and the CNI dnsname
#      plugin (the workers find the `redis` service by name) if missing;
#   2. configures podman for this run in a temporary directory
#      (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF);
#   3. makes the base image when no local debian:bookworm-slim exists:
#      debootstrap from the Debian mirror this machine's apt uses, then
#      `podman import`, tagged under the short and the fully qualified name.
#      The image's sources.list names that mirror, which is how the builds'
#      apt-get reaches it (over podman's bridge: the CNI bridge plugin turns
#      on net.ipv4.ip_forward, which step 6 turns back);
#   4. `podman-compose up -d --build`, waits for the four workers and checks
#      their logs: 4 x 10 lines, globals 1..40 once each, locals 4*k, exit 0;
#   5. fault run: the four workers run as one job, one container is killed
#      with `podman kill` while it runs, and each of the others exits 3
#      within the job's lease (and a margin for load), naming it;
#   6. tears down what it made (containers, networks, pods, volumes, the
#      images and build layers of this run, bridges) and restores the
#      sysctls podman's network plugins changed, on every exit.
# The base image stays, so the next run skips step 3; remove it with
# `podman rmi debian:bookworm-slim docker.io/library/debian:bookworm-slim`.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
export RB_TESTS_DIR=$root/tests
. "$RB_TESTS_DIR/lib.sh"

base=debian:bookworm-slim
base_fq=docker.io/library/$base
workers="worker0 worker1 worker2 worker3"
iters=10       # as in docker-compose.yml
lease_s=10     # the job's --lease in docker-compose.yml
packages="podman podman-compose runc debootstrap
golang-github-containernetworking-plugin-dnsname"
sysctls="net.ipv4.ip_forward net.ipv6.conf.all.forwarding net.ipv6.conf.default.forwarding"

passed=0 failed=0
pass() { ok "$@"; passed=$((passed + 1)); }
fail() { not_ok "$@"; failed=$((failed + 1)); }
expect() {  # WHAT EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (expected '$2', got '$3')"; fi
}
expect_re() {  # WHAT REGEX TEXT
    if printf '%s' "$3" | grep -Eq -- "$2"; then pass "$1"; else fail "$1 (got: $(printf '%s' "$3" | head -c 300))"; fi
}
note() { echo "# $*"; }
stamp() { echo "== $(date -u +%T) $*" >> "$log"; }
since() { echo $(( ($(now_ms) - $1) / 1000 )); }
# The EXIT trap: tear down (once podman is configured), check that nothing
# is left, and report.
configured=0 completed=0
finish() {
    local rc=$?
    trap - EXIT
    [ "$completed" = 1 ] || [ "$failed" -gt 0 ] ||
        fail "the test ran to its end (it stopped with status $rc)"
    if [ "$configured" = 1 ]; then
        teardown
        check_clean
    fi
    note "total $(since "$t0") s"
    # RB_COMPOSE_LOG=FILE keeps the build and podman-compose output.
    [ -n "${RB_COMPOSE_LOG:-}" ] && [ -f "${log:-}" ] && cp "$log" "$RB_COMPOSE_LOG"
    [ "$configured" = 1 ] && rm -rf "$work"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ] && exit 0
    exit 1
}
trap finish EXIT
trap 'exit 130' INT TERM
# A step that cannot go on: report it and end (the EXIT trap tears down).
abort() { fail "$@"; exit 1; }

t0=$(now_ms)
[ "$(id -u)" -eq 0 ] || abort "the compose test runs as root (apt-get, debootstrap, podman networks)"
# The host's rbarrier checks the workers' lines (demo_lines_check).
export RBARRIER=${RBARRIER:-$root/build/rbarrier}
[ -x "${RBARRIER##* }" ] || abort "no rbarrier binary at ${RBARRIER##* } (make test-compose builds it)"

# ---- 1. packages ---------------------------------------------------------
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q ' installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    note "installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update && apt-get install -y --no-install-recommends $missing; } > /dev/null ||
        abort "apt-get install$missing"
fi
pass "podman, podman-compose, runc, debootstrap and the dnsname plugin are installed"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/rbarrier-compose.XXXXXX")
log=$work/log
proj=rbc$$$RANDOM          # this run's compose project; the fault run's: ${proj}f
projects="$proj ${proj}f"

# ---- 2. podman, configured for this machine (before anything runs podman)
# runc: crun refuses the hybrid cgroup hierarchy here; cgroupfs and a file
# event log: there is no systemd session; the default nofile and nproc
# limits exceed the hard limits a container may get here; CNI: the backend
# whose DNS (the dnsname plugin) step 1 installs, whatever else is there.
cat > "$work/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "cni"
EOF
# root's usual store, so that the base image outlives the run
cat > "$work/storage.conf" <<'EOF'
[storage]
driver = "overlay"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
EOF
export CONTAINERS_CONF=$work/containers.conf CONTAINERS_STORAGE_CONF=$work/storage.conf

# What is there before this run, so that teardown removes only what it made.
declare -A sysctl_before
for s in $sysctls; do sysctl_before[$s]=$(sysctl -n "$s" 2>/dev/null); done
bridges_before=$(ip -o link show type bridge | awk -F': ' '{ print $2 }')
podman images -a -q --no-trunc | sort -u > "$work/images-before"

# ---- 6. teardown (from the EXIT trap) ----------------------------------
teardown() {
    local p ids i s now
    set +e
    stamp teardown
    # By label rather than `podman-compose down`, which stops containers one
    # by one and, in podman-compose 1.0.3, leaves the network behind.
    for p in $projects; do
        ids=$(podman ps -a -q --filter "label=io.podman.compose.project=$p")
        [ -n "$ids" ] && podman rm -f -t 0 $ids >> "$log" 2>&1
        ids=$(podman pod ps -q --filter "label=io.podman.compose.project=$p")
        [ -n "$ids" ] && podman pod rm -f $ids >> "$log" 2>&1
        ids=$(podman network ls -q --filter "label=io.podman.compose.project=$p")
        [ -n "$ids" ] && podman network rm -f $ids >> "$log" 2>&1
        ids=$(podman volume ls -q --filter "label=io.podman.compose.project=$p")
        [ -n "$ids" ] && podman volume rm -f $ids >> "$log" 2>&1
    done
    # This run's images and build layers (children before parents: a few
    # passes); the base image stays for the next run.
    podman images -a -q --no-trunc | sort -u |
        comm -23 - "$work/images-before" > "$work/images-new"
    base_id=$(podman image inspect -f '{{.Id}}' "$base_fq" 2>/dev/null)
    for i in 1 2 3 4 5 6; do
        ids=$(grep -v -x -e "${base_id:-none}" -e "sha256:${base_id:-none}" "$work/images-new" |
              while read -r id; do podman image exists "$id" && echo "$id"; done)
        [ -z "$ids" ] && break
        podman rmi -f $ids >> "$log" 2>&1
    done
    # Bridges the network plugins made for this run's networks and builds.
    for i in $(ip -o link show type bridge | awk -F': ' '{ print $2 }'); do
        case "$i" in cni-podman*) ;; *) continue ;; esac
        printf '%s\n' "$bridges_before" | grep -qx "$i" || ip link delete "$i" >> "$log" 2>&1
    done
    for s in $sysctls; do
        now=$(sysctl -n "$s" 2>/dev/null)
        [ -n "${sysctl_before[$s]}" ] && [ "$now" != "${sysctl_before[$s]}" ] &&
            sysctl -q -w "$s=${sysctl_before[$s]}"
    done
}
check_clean() {
    local p left="" s
    for p in $projects; do
        left="$left$(podman ps -a -q --filter "label=io.podman.compose.project=$p")"
        left="$left$(podman pod ps -q --filter "label=io.podman.compose.project=$p")"
        left="$left$(podman network ls -q --filter "label=io.podman.compose.project=$p")"
        left="$left$(podman volume ls -q --filter "label=io.podman.compose.project=$p")"
    done
    expect "no container, pod, network or volume of this run is left" "" "$left"
    left=$(podman images -a -q --no-trunc | sort -u | comm -23 - "$work/images-before" |
           grep -v -x -e "${base_id:-none}" -e "sha256:${base_id:-none}")
    expect "no image or build layer of this run is left (but the base image)" "" "$left"
    left=$(ip -o link show type bridge | awk -F': ' '{ print $2 }' |
           grep -v -x -F "${bridges_before:-none}")
    expect "no network bridge of this run is left" "" "$left"
    left=""
    for s in $sysctls; do
        [ "$(sysctl -n "$s" 2>/dev/null)" = "${sysctl_before[$s]}" ] || left="$left $s"
    done
    expect "every sysctl is as before the run" "" "$left"
}
configured=1

# ---- 3. the base image ---------------------------------------------------
if podman image exists "$base_fq" || podman image exists "localhost/$base"; then
    pass "a local $base image exists"
else
    # The mirror this machine's apt uses for Debian 12 main; it goes into
    # the image's sources.list (so the image builds reach it), never into
    # the repository.
    debian_mirror() {
        apt-get indextargets --format '$(SITE)' 'Created-By: Packages' \
            'Origin: Debian' 'Label: Debian' 'Codename: bookworm' 'Component: main' | head -n 1
    }
    mirror=$(debian_mirror)
    [ -n "$mirror" ] || { apt-get update > /dev/null; mirror=$(debian_mirror); }
    [ -n "$mirror" ] || abort "a Debian bookworm main mirror in this machine's apt sources"
    start=$(now_ms)
    stamp debootstrap
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >> "$log" 2>&1 ||
        { tail -n 20 "$log"; abort "debootstrap bookworm from $mirror"; }
    tar -C "$work/rootfs" -c . |
        podman import --change 'CMD ["bash"]' - "localhost/$base" >> "$log" 2>&1 &&
        podman tag "localhost/$base" "$base_fq" >> "$log" 2>&1 ||
        { tail -n 20 "$log"; abort "podman import of the debootstrap tree"; }
    rm -rf "$work/rootfs"
    pass "made $base with debootstrap from $mirror and podman import ($(since "$start") s)"
fi

# ---- 4. the cluster ------------------------------------------------------
cd "$root" || abort "cd $root"
# cname PROJECT SERVICE: the container of SERVICE in PROJECT
cname() {
    podman ps -a --format '{{.Names}}' --filter "label=io.podman.compose.project=$1" \
        --filter "label=com.docker.compose.service=$2"
}
# exited C [SECONDS]: await container C's exit (default 120 s) and print its
# exit status. Not `podman wait`: podman 4.3 waits 20 s for conmon here
# ("Exceeded conmon timeout") even for a container that has exited.
exited() {
    wait_until "${2:-120}" stopped "$1" || { echo "running"; return; }
    podman inspect -f '{{.State.ExitCode}}' "$1"
}
stopped() {
    case $(podman inspect -f '{{.State.Status}}' "$1" 2>/dev/null) in
    stopped|exited) return 0 ;;
    *) return 1 ;;
    esac
}
# up PROJECT [ARGS]: podman-compose up -d; its output goes to the log
up() {
    local p=$1; shift
    # Each project publishes its redis on a free port of its own: the first
    # project's redis still holds its port when the fault run comes up.
    RBARRIER_REDIS_PORT=$(free_port)
    export RBARRIER_REDIS_PORT
    stamp "up $p $* (redis on 127.0.0.1:$RBARRIER_REDIS_PORT)"
    podman-compose -p "$p" up -d "$@" >> "$log" 2>&1
}

start=$(now_ms)
if ! up "$proj" --build; then
    tail -n 40 "$log"
    abort "podman-compose up -d --build"
fi
pass "podman-compose up -d --build ($(since "$start") s, build included)"
stamp "waiting for the workers"

out=$work/workers.out
: > "$out"
codes="" errs=""
for w in $workers; do
    c=$(cname "$proj" "$w")
    [ -n "$c" ] || { fail "container of $w exists"; continue; }
    code=$(exited "$c")
    codes="$codes${code:-?}"
    podman logs "$c" > "$work/$w.log" 2> "$work/$w.err"
    cat "$work/$w.log" >> "$out"
    [ -s "$work/$w.err" ] && errs="$errs $w: $(head -c 300 "$work/$w.err")"
done
stamp "checking"
expect "the four workers exit 0" 0000 "$codes"
expect "their 4 x $iters lines: globals 1..$((4 * iters)) once each, local = 4*k" ok \
    "$(demo_lines_check "$out" 4 "$iters")"
expect "nothing but worker lines in their output" "" "$(grep -v '^worker' "$out")"
expect "nothing on their stderr" "" "$errs"
if [ "$failed" -gt 0 ]; then
    note "redis: $(podman logs "$(cname "$proj" redis)" 2>&1 | tail -n 5)"
    for w in $workers; do note "$w: $(cat "$work/$w.log" "$work/$w.err" 2>/dev/null | tail -n 3)"; done
fi
note "worker output, as the README shows it:"
for w in $workers; do sed "s/^/$w  | /" "$work/$w.log"; done |
    awk '{ print $NF, $0 }' | sort -n | cut -d' ' -f2- | sed -n '1,2p;$p'

# The first project's redis is still up, published on the host's loopback
# for redis-cli.
expect "its redis answers on 127.0.0.1:$RBARRIER_REDIS_PORT" PONG \
    "$(redis-cli -h 127.0.0.1 -p "$RBARRIER_REDIS_PORT" PING 2>&1)"

# ---- 5. a worker container killed while the job runs ---------------------
# The four workers, one job, run many iterations (RBARRIER_ITERS); once all
# four are running their command, worker1's container is killed. Its lease
# runs out and every other worker container must exit 3, naming it.
p=${proj}f
# The images just built, under the names podman-compose gives this
# project's (PROJECT_SERVICE), so that its up finds them instead of
# building them again.
for s in redis $workers; do
    podman tag "$(podman inspect -f '{{.ImageName}}' "$(cname "$proj" "$s")")" "${p}_$s" >> "$log" 2>&1
done
# Enough iterations to outlast any wait below: the kill, not the count,
# ends this job.
export RBARRIER_ITERS=1000000
if ! up "$p"; then
    tail -n 40 "$log"
    abort "podman-compose up (fault run)"
fi
unset RBARRIER_ITERS
fault_url=redis://127.0.0.1:$RBARRIER_REDIS_PORT/0
job_json() { $RBARRIER status --name compose --json --url "$fault_url" 2>/dev/null; }
all_running() { [ "$(job_json | grep -o '"state":"running"' | wc -l)" = 4 ]; }
if wait_until 120 all_running; then
    pass "the four workers run their command as one job"
else
    abort "the four workers run their command as one job (status: $(job_json | head -c 600))"
fi
victim=$(cname "$p" worker1)
stamp "kill $victim"
podman kill "$victim" >> "$log" 2>&1
expect "the killed worker1 exits 137 (SIGKILL)" 137 "$(exited "$victim" 60)"
# Times as podman recorded them, not as this loaded machine's podman
# commands return them.
finished_ms() { echo $(( $(podman inspect -f '{{.State.FinishedAt.UnixNano}}' "$1") / 1000000 )); }
killed=$(finished_ms "$victim")
for w in worker0 worker2 worker3; do
    c=$(cname "$p" "$w")
    code=$(exited "$c")
    ms=$(( $(finished_ms "$c") - killed ))
    podman logs "$c" > "$work/$w.fault.log" 2> "$work/$w.fault.err"
    err=$(cat "$work/$w.fault.err")
    expect "$w exits 3 after worker1 is killed" 3 "$code"
    expect_re "$w was working when worker1 was killed" '^worker +[0-9]+, ' "$(head -n 1 "$work/$w.fault.log")"
    expect_re "$w's log names the killed container" 'compose: job broken: lease of worker1 expired' "$err"
    # worker1 renewed its lease at most a third of a lease before the kill,
    # so it runs out 2/3 to 1 lease after it, and the others learn it
    # within a second (lease + 1 s in all). Asserted with margin for this
    # machine's load; the measured time is printed either way.
    note "$w: kill to exit $ms ms (lease ${lease_s} s, bound $((lease_s + 1)) s)"
    if [ "$ms" -le $(( (lease_s + 5) * 1000 )) ] && [ "$ms" -ge $(( lease_s * 500 )) ]; then
        pass "$w is released by worker1's lease: $ms ms after the kill (lease ${lease_s} s)"
    else
        fail "$w is released by worker1's lease: $ms ms after the kill, expected $((lease_s / 2))..$((lease_s + 5)) s"
    fi
    note "$w: $(tail -n 2 "$work/$w.fault.err" | tr '\n' ' ')"
done

completed=1
exit 0   # the EXIT trap tears down, checks and reports
