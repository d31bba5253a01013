#!/bin/sh
# Check the Lua scripts as Redis gets them (includes expanded by
# tools/embed-lua.sh): each compiles with Lua 5.1, the version in Redis;
# none assigns a global (Redis refuses that at run time); and none reads a
# global outside what Redis' Lua offers, so a misspelt local is found here
# rather than on the one path that reaches it.
#
# usage: tools/lint-lua.sh lua/a-1.lua lua/b-2.lua ...
# Needs luac5.1 (Debian: lua5.1).
set -eu
luac=${LUAC:-luac5.1}
if ! command -v "$luac" >/dev/null 2>&1; then
    echo "lint-lua: $luac not found (Debian: apt-get install lua5.1)" >&2
    exit 1
fi
here=$(dirname "$0")
# What a Redis script may read as a global (Redis 7's Lua environment).
known=" redis KEYS ARGV cjson cmsgpack bit struct string table math
 tonumber tostring type error pcall xpcall ipairs pairs next select unpack
 assert rawget rawset rawequal setmetatable getmetatable loadstring "
known=$(printf '%s' "$known" | tr '\n' ' ')
fails=0
for f in "$@"; do
    text=$(sh "$here/embed-lua.sh" --expand "$f") || { fails=$((fails + 1)); continue; }
    if ! listing=$(printf '%s\n' "$text" | "$luac" -p -l - 2>&1); then
        # "luac5.1: stdin:LINE: message" (LINE of the expanded text)
        printf '%s: %s\n' "$f" "$(printf '%s\n' "$listing" | head -1 |
            sed 's/^[^:]*: stdin:\([0-9]*\):/line \1 (expanded):/')" >&2
        fails=$((fails + 1))
        continue
    fi
    # luac -l lines: "<pc> [<line>] GETGLOBAL|SETGLOBAL <args> ; <name>"
    bad=$(printf '%s\n' "$listing" | awk -v known="$known" '
        { line = substr($2, 2, length($2) - 2) }
        $3 == "SETGLOBAL" { print line " assigns the global " $NF }
        $3 == "GETGLOBAL" && index(known, " " $NF " ") == 0 {
            print line " reads the unknown global " $NF }' | sort -n -u)
    if [ -n "$bad" ]; then
        printf '%s\n' "$bad" | while read -r n what; do
            printf '%s: %s, in: %s\n' "$f" "$what" \
                "$(printf '%s\n' "$text" | sed -n "${n}s/^[[:space:]]*//p")" >&2
        done
        fails=$((fails + 1))
    fi
done
[ "$fails" -eq 0 ]
