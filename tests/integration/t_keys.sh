# The key layout's slot function against a live cluster-mode server, and
# the embed step's includes (expansion, circular includes).
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)

# 1. Every expected slot in keyslots.txt (which the unit test checks
#    rb_key__slot against) is what CLUSTER KEYSLOT answers today.
if start_redis keyslot --cluster-enabled yes \
        --cluster-config-file "$RB_TEST_TMP/redis-keyslot/nodes.conf"; then
    bad=0 total=0
    while read -r slot key; do
        got=$(redis-cli -s "$REDIS_SOCK" CLUSTER KEYSLOT "$key")
        total=$((total + 1))
        [ "$got" = "$slot" ] || { bad=$((bad + 1)); echo "# $key: file $slot, server $got"; }
    done < "$root/tests/unit/keyslots.txt"
    expect_eq "CLUSTER KEYSLOT agrees with all $total expected slots" 0 "$bad"
    stop_redis "$REDIS_PID"
else
    not_ok "start a cluster-mode redis-server"
fi

# 2. Includes: a line '--- @include "includes/x.lua"' is replaced by the
#    file's (expanded) text; nothing else changes.
d=$RB_TEST_TMP/lua-inc
mkdir -p "$d/includes"
printf 'local a = 1\n--- @include "includes/b.lua"\nreturn a + b\n' > "$d/top-1.lua"
printf -- '--- @include "includes/c.lua"\nlocal b = c\n' > "$d/includes/b.lua"
printf 'local c = 2\n' > "$d/includes/c.lua"
expect_eq "nested includes expand in place" \
    "$(printf 'local a = 1\nlocal c = 2\nlocal b = c\nreturn a + b')" \
    "$(sh "$root/tools/embed-lua.sh" --expand "$d/top-1.lua")"
sh "$root/tools/embed-lua.sh" --expand "$d/top-1.lua" > "$d/x.lua"
expect_eq "the expanded script runs" 3 "$(rcli EVAL "$(cat "$d/x.lua")" 0)"
printf -- '--- @include "includes/a.lua"\n' > "$d/includes/c.lua"
printf -- '--- @include "includes/b.lua"\n' > "$d/includes/a.lua"
err=$(sh "$root/tools/embed-lua.sh" "$d/out.c" "$d/top-1.lua" 2>&1)
check "a circular include fails the embed step" test $? -ne 0
expect_match "... naming the cycle" "circular include: .*b.lua.*c.lua.*a.lua.*b.lua" "$err"
check "... and writes no output" test ! -e "$d/out.c"
printf -- '--- @include "includes/missing.lua"\n' > "$d/top-1.lua"
sh "$root/tools/embed-lua.sh" "$d/out.c" "$d/top-1.lua" 2>/dev/null
check "a missing include fails the embed step" test $? -ne 0
