# docker-compose.yml, Dockerfile and .dockerignore, checked without a
# container engine (tests/compose/run.sh, `make test-compose`, starts the
# cluster for real): the compose file parses as YAML (python3 with its yaml
# module is needed: without it these checks are skipped, and counted as
# skipped); it has a `redis` service built from the Dockerfile's redis stage
# and four worker services with --worker 0..3 of --workers 4 in one run,
# each built from the Dockerfile's runtime stage and pointed at the redis
# service; the Dockerfile has build, redis and runtime stages, all on
# debian:bookworm-slim; the runtime stage installs the packages that provide
# the binary's shared libraries and runs rbarrier; the four workers are one
# job (`run --name compose --n 4 --id SERVICE ... -- rbarrier worker ...`)
# whose lease is shorter than the workers' barrier lease (so the job, which
# names the container, is what finds a dead one); then the four workers'
# exact command lines from the compose file run here against the shared
# server and must keep the demo's property (globals 1..40 once each).
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)

if ! python3 -c 'import yaml' 2>/dev/null; then
    skip "python3 with the yaml module is needed to check docker-compose.yml (Debian: apt-get install python3-yaml)"
    exit 0
fi
ok "python3 and its yaml module are available"

cmds=$RB_TEST_TMP/compose-commands
: > "$cmds"
python3 - "$root" "$cmds" <<'PY'
import json, os, re, shlex, sys, traceback
import yaml

root, cmds_path = sys.argv[1], sys.argv[2]

def ok(what): print("ok - " + what)
def not_ok(what): print("not ok - " + what)
def check(what, cond, detail=""):
    if cond: ok(what)
    else: not_ok(what + (" (" + detail + ")" if detail else ""))

def as_list(cmd):
    if cmd is None: return None
    if isinstance(cmd, str): return shlex.split(cmd)
    return [str(x) for x in cmd]

def interpolate(args):
    """${VAR:-default} and ${VAR-default} as compose expands them when VAR
    is not set (this test sets none of them)."""
    return [re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}", r"\1", a) for a in args]

def seconds(text):
    """A duration as the CLI takes it (90, 1.5s, 5m, 1h), in seconds."""
    m = re.match(r"^([0-9]+(?:\.[0-9]+)?)([smhd]?)$", text or "")
    if not m: return None
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]

def opt(args, name):
    """Value of --name V or --name=V in args, else None."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args): return args[i + 1]
        if a.startswith(name + "="): return a[len(name) + 1:]
    return None

def env_of(svc):
    env = svc.get("environment") or {}
    if isinstance(env, list):
        env = dict(e.split("=", 1) if "=" in e else (e, "") for e in env)
    return {str(k): str(v) for k, v in env.items()}

def depends(svc):
    d = svc.get("depends_on") or {}
    if isinstance(d, list): return {x: {} for x in d}
    return {k: (v or {}) for k, v in d.items()}

def replicas(svc):
    deploy = svc.get("deploy") or {}
    if "replicas" in deploy: return int(deploy["replicas"])
    if "scale" in svc: return int(svc["scale"])
    return 1

def build_of(svc):
    build = svc.get("build")
    if isinstance(build, str): build = {"context": build}
    return build if isinstance(build, dict) else None

def check_build(name, svc, stage):
    """svc is built from the project's Dockerfile, stage `stage`."""
    build = build_of(svc)
    if build is None:
        not_ok("%s builds from the project's Dockerfile (no build:)" % name)
        return
    ctx = os.path.realpath(os.path.join(root, str(build.get("context", "."))))
    df = os.path.realpath(os.path.join(ctx, str(build.get("dockerfile", "Dockerfile"))))
    check("%s builds from the project's Dockerfile" % name,
          ctx == os.path.realpath(root) and df == os.path.realpath(os.path.join(root, "Dockerfile")),
          "context %s, dockerfile %s" % (ctx, df))
    # No target: Docker builds the last stage.
    target = build.get("target") or stages_by_name.get("__last__")
    check("%s builds the Dockerfile's %s stage" % (name, stage), target == stage, "target %s" % target)

def compose_checks():
    path = os.path.join(root, "docker-compose.yml")
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except Exception as e:
        not_ok("docker-compose.yml parses as YAML (%s)" % " ".join(str(e).split()))
        return
    ok("docker-compose.yml parses as YAML")
    services = (doc or {}).get("services") or {}
    check("it defines services", isinstance(services, dict) and services)

    redis = services.get("redis")
    check("a service named redis", isinstance(redis, dict))
    if isinstance(redis, dict):
        check_build("redis", redis, "redis")
        rcmd = as_list(redis.get("command")) or stages_by_name.get("redis", {}).get("cmd") or []
        check("redis keeps nothing on disk (--save '' --appendonly no)",
              opt(rcmd, "--save") == "" and opt(rcmd, "--appendonly") == "no", " ".join(rcmd))
        check("redis accepts the workers' containers (--protected-mode no)",
              opt(rcmd, "--protected-mode") == "no", " ".join(rcmd))

    # A worker: `run RUN-FLAGS -- rbarrier worker WORKER-FLAGS` (the image's
    # entrypoint is rbarrier).
    workers, runs, lines = {}, {}, {}
    for name, svc in services.items():
        if name == "redis" or not isinstance(svc, dict): continue
        cmd = interpolate(as_list(svc.get("command")) or [])
        if cmd[:1] != ["run"] or "--" not in cmd: continue
        at = cmd.index("--")
        if cmd[at + 1:at + 3] != ["rbarrier", "worker"]: continue
        workers[name] = (svc, cmd[at + 2:])
        runs[name] = cmd[1:at]
        lines[name] = cmd
    check("every service but redis is `run ... -- rbarrier worker ...`",
          len(workers) == len(services) - 1, "services: %s" % ", ".join(services))

    # One job: same name, --n 4, each member's --id its service's name (the
    # name a break reports), one lease, and entering bounded.
    for what in ("--name", "--n", "--lease", "--prefix"):
        values = {opt(r, what) for r in runs.values()}
        check("all runners agree on %s" % what, len(values) == 1, "got %s" % sorted(map(str, values)))
    check("the job has four members (--n 4)", all(opt(r, "--n") == "4" for r in runs.values()))
    check("each runner's --id is its service's name",
          all(opt(r, "--id") == name for name, r in runs.items()),
          ", ".join("%s: %s" % (n, opt(r, "--id")) for n, r in sorted(runs.items())))
    check("every runner bounds entering with --timeout",
          all(opt(r, "--timeout") for r in runs.values()))
    job_lease = [seconds(opt(r, "--lease") or "10") for r in runs.values()]
    bar_lease = [seconds(opt(a, "--lease") or "10") for _, a in workers.values()]
    check("the workers' barrier lease is longer than the job's",
          None not in job_lease + bar_lease and job_lease and min(bar_lease) > max(job_lease),
          "job %s, barrier %s" % (job_lease, bar_lease))

    total = sum(replicas(svc) for svc, _ in workers.values())
    check("four workers in all", total == 4, "%d" % total)
    indexes = sorted(opt(args, "--worker") for svc, args in workers.values()
                     for _ in range(replicas(svc)))
    runnable = indexes == ["0", "1", "2", "3"]
    check("their --worker indexes are 0, 1, 2, 3, each once", runnable, "got %s" % indexes)
    for what in ("--workers", "--iters", "--run", "--prefix"):
        values = {opt(args, what) for _, args in workers.values()}
        runnable = runnable and len(values) == 1
        check("all workers agree on %s" % what, len(values) == 1, "got %s" % sorted(map(str, values)))
    check("every worker has --workers 4",
          all(opt(args, "--workers") == "4" for _, args in workers.values()))
    check("every worker bounds its waits with --timeout",
          all(opt(args, "--timeout") for _, args in workers.values()))

    for name, (svc, args) in sorted(workers.items()):
        check_build(name, svc, "runtime")
        check("%s keeps the image's entrypoint (rbarrier)" % name, "entrypoint" not in svc)
        url = env_of(svc).get("RBARRIER_URL") or opt(args, "--url") or ""
        check("%s talks to the redis service" % name,
              re.match(r"^redis://([^@]*@)?redis(:6379)?(/[0-9]+)?$", url), url)
        dep = depends(svc)
        check("%s depends on redis" % name, "redis" in dep, str(dep))
        cond = (dep.get("redis") or {}).get("condition", "service_started")
        if cond == "service_healthy":
            check("%s waits for redis to be healthy, and redis has a healthcheck" % name,
                  isinstance(redis, dict) and redis.get("healthcheck"))

    if not runnable:
        return  # they would not meet: running them only waits for --timeout
    with open(cmds_path, "w") as f:
        for name in sorted(lines):
            f.write(" ".join(shlex.quote(a) for a in lines[name]) + "\n")

stages_by_name = {}

def dockerfile_checks():
    with open(os.path.join(root, "Dockerfile")) as f:
        text = f.read()
    # Instructions: continuation lines joined, comment lines dropped.
    lines, cur = [], ""
    for raw in text.splitlines():
        s = raw.strip()
        if s.startswith("#") or (not s and not cur): continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        lines.append(cur + s)
        cur = ""
    if cur: lines.append(cur)
    stages = []
    for line in lines:
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            parts = [p for p in rest.split() if not p.startswith("--")]
            stages.append({"image": parts[0] if parts else "",
                           "name": parts[2] if len(parts) >= 3 and parts[1].lower() == "as" else None,
                           "ins": []})
        elif stages:
            stages[-1]["ins"].append((word, rest.strip()))
    for st in stages:
        if st["name"]: stages_by_name[st["name"].lower()] = st
        cmd = [rest for w, rest in st["ins"] if w == "CMD"]
        if cmd:
            try: st["cmd"] = [str(x) for x in json.loads(cmd[-1])]
            except ValueError: st["cmd"] = shlex.split(cmd[-1])
    if stages: stages_by_name["__last__"] = stages[-1]["name"]
    names = [s["name"] for s in stages]
    # runtime last: `docker build .` makes the CLI image
    check("the Dockerfile's stages are build, redis, runtime", names == ["build", "redis", "runtime"],
          ", ".join(map(str, names)))
    images = [s["image"] for s in stages]
    check("every FROM is debian:bookworm-slim", images and all(i == "debian:bookworm-slim" for i in images),
          ", ".join(images))
    build, redis, final = (stages_by_name.get(n) for n in ("build", "redis", "runtime"))
    if not (build and redis and final): return
    def runs(stage): return " ".join(rest for w, rest in stage["ins"] if w == "RUN")
    brun = runs(build).split()
    check("the build stage installs a C compiler", "gcc" in brun or "build-essential" in brun)
    for pkg in ("make", "pkg-config", "libhiredis-dev", "libargtable2-dev", "libssl-dev"):
        check("the build stage installs %s" % pkg,
              pkg in brun or (pkg == "make" and "build-essential" in brun))
    check("the build stage runs make", re.search(r"(^|[;&|]\s*|\s)make(\s|$)", runs(build)))
    check("the redis stage installs Debian's redis-server", "redis-server" in runs(redis).split())
    check("the redis stage runs redis-server", (redis.get("cmd") or [""])[0] == "redis-server",
          str(redis.get("cmd")))
    frun = runs(final).split()
    with open(os.environ["RB_TEST_TMP"] + "/runtime-packages", "w") as f:
        f.write("\n".join(p for p in frun if re.match(r"^lib[a-z0-9.+-]+$", p)) + "\n")
    src = build["name"] or "0"
    copies = [rest for w, rest in final["ins"] if w == "COPY"]
    check("the runtime stage copies build/rbarrier to /usr/local/bin/rbarrier",
          any(re.match(r"^--from=%s\s+\S*build/rbarrier\s+/usr/local/bin/rbarrier/?$" % re.escape(src), c)
              for c in copies), "; ".join(copies))
    check("the runtime stage copies examples/",
          any(re.match(r"^examples/?\s", c) for c in copies), "; ".join(copies))
    entry = [rest for w, rest in final["ins"] if w == "ENTRYPOINT"]
    check("ENTRYPOINT is rbarrier (exec form)",
          entry and entry[-1] in ('["rbarrier"]', '["/usr/local/bin/rbarrier"]'), str(entry))

def dockerignore_checks():
    try:
        with open(os.path.join(root, ".dockerignore")) as f:
            pats = {l.strip().strip("/") for l in f if l.strip() and not l.startswith("#")}
    except OSError as e:
        not_ok(".dockerignore exists (%s)" % e)
        return
    check(".dockerignore excludes build/", "build" in pats, str(sorted(pats)))
    check(".dockerignore excludes .git", ".git" in pats, str(sorted(pats)))

# The Dockerfile first: the compose checks look up its stages.
for part in (dockerfile_checks, compose_checks, dockerignore_checks):
    try:
        part()
    except Exception:
        not_ok("%s ran to the end: %s" % (part.__name__, traceback.format_exc().strip().splitlines()[-1]))
PY

# The runtime stage must install the packages that hold the libraries this
# binary links (Debian names them by soname, e.g. libhiredis0.14), but for
# libc6, which every Debian image has.
# A sanitizer build (make asan) also links its runtime (libasan, libubsan,
# libstdc++), which no image ships: only the plain build says what the
# image needs.
bin=${RBARRIER##* }
if command -v ldd >/dev/null && ldd "$bin" | grep -q -e libasan -e libubsan; then
    skip "the runtime stage's packages: $bin is a sanitizer build"
elif command -v dpkg >/dev/null && command -v ldd >/dev/null; then
    sos=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1 }')
    expect_eq "the binary links libhiredis and libargtable2" 2 \
        "$(printf '%s\n' "$sos" | grep -c -e '^libhiredis' -e '^libargtable2')"
    for so in $sos; do
        pkg=$(dpkg -S "*/$so" 2>/dev/null | awk -F: -v so="/$so" \
              'substr($0, length($0) - length(so) + 1) == so { print $1; exit }')
        [ -n "$pkg" ] || { not_ok "dpkg knows which package provides $so"; continue; }
        [ "${pkg%%:*}" = libc6 ] && continue
        check "the runtime stage installs ${pkg%%:*} (it provides $so)" \
            grep -qx -- "${pkg%%:*}" "$RB_TEST_TMP/runtime-packages"
    done
    # libssl is loaded for rediss:// URLs, not linked: ldd cannot name it.
    so=$(ldd "$(command -v openssl)" 2>/dev/null | awk '$1 ~ /^libssl\.so/ { print $1 }')
    pkg=
    [ -n "$so" ] && pkg=$(dpkg -S "*/$so" 2>/dev/null | awk -F: -v so="/$so" \
        'substr($0, length($0) - length(so) + 1) == so { print $1; exit }')
    if [ -n "$pkg" ]; then
        check "the runtime stage installs $pkg (libssl, loaded for rediss://)" \
            grep -qx -- "$pkg" "$RB_TEST_TMP/runtime-packages"
    else
        skip "which package provides libssl: no openssl command or dpkg entry"
    fi
else
    skip "dpkg and ldd are needed to check the runtime stage's packages"
fi

# The four workers' command lines, as the compose file has them (the image's
# entrypoint is rbarrier, and the rbarrier in the job's command is this
# one), run here against the shared server. A fresh prefix, given to the
# runner and to the worker, keeps this run's job, barrier and parameter
# apart from any other.
expect_eq "four worker command lines" 4 "$(wc -l < "$cmds")"
prefix=$(fresh compose)
out=$RB_TEST_TMP/$prefix.out
: > "$out"
pids=""
while read -r line; do
    eval "set -- $line"
    args=() cmd=0
    for a in "$@"; do
        if [ "$cmd" = 0 ] && [ "$a" = -- ]; then
            args+=(--prefix "$prefix" --); cmd=1
        elif [ "$cmd" = 1 ] && [ "$a" = rbarrier ]; then
            args+=("$bin"); cmd=2
        else
            args+=("$a")
        fi
    done
    RBARRIER_URL=$RB_URL rb "${args[@]}" --prefix "$prefix" >> "$out" 2>&1 &
    pids="$pids $!"
done < "$cmds"
codes=""
for p in $pids; do wait "$p"; codes="$codes$?"; done
expect_eq "the compose workers, run here, all exit 0" 0000 "$codes"
expect_eq "their 40 lines: globals 1..40 once each, local = 4*k" ok \
    "$(demo_lines_check "$out" 4 10)"
expect_eq "nothing but worker lines in their output" "" "$(grep -v '^worker' "$out")"
