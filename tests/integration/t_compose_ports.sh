# docker-compose.yml's Redis is published on loopback only, on
# ${RBARRIER_REDIS_PORT:-6380} (not 6379, which a local server may hold),
# and the runtime image trusts the system's CA certificates (rediss:// to a
# hosted Redis). Checked as text: t_compose.sh checks the YAML as a whole,
# tests/compose/run.sh starts the cluster for real.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
if ! python3 -c 'import yaml' 2>/dev/null; then
    skip "python3 with the yaml module is needed to read docker-compose.yml"
    exit 0
fi
ports=$(python3 - "$root/docker-compose.yml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
svcs = doc["services"]
print(" ".join(str(p) for p in svcs["redis"].get("ports", [])))
print(sum(1 for n, s in svcs.items() if n != "redis" and s.get("ports")))
PY
)
expect_eq "redis publishes 127.0.0.1:\${RBARRIER_REDIS_PORT:-6380}:6379 only" \
    '127.0.0.1:${RBARRIER_REDIS_PORT:-6380}:6379' "$(echo "$ports" | sed -n 1p)"
expect_eq "no worker publishes a port" 0 "$(echo "$ports" | sed -n 2p)"
runtime=$(sed -n '/^FROM .* AS runtime/,/^FROM /p' "$root/Dockerfile")
expect_match "the runtime stage installs ca-certificates" "install .*ca-certificates|^ +ca-certificates" "$runtime"
