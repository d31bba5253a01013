# Exact numbers or a refusal (train, set, sync, get): integers stay exact
# 64-bit values, an overflow is an error with the value unchanged, floats
# only when the step or the value has a fraction, nothing goes through a
# Lua double; a missing permission is not hidden. --json prints numbers
# only in canonical form.
. "$RB_TESTS_DIR/lib.sh"

gkey() { echo "rb:p:{$1}"; }

# A value a double would print as 1e+14.
p=$(fresh exact)
rb set --param "$p" --value 99999999999999
expect_eq "train on 99999999999999: global 100000000000000 exactly" \
    "local 0 global 100000000000000" "$(rb train --param "$p" --worker w)"
expect_eq "Redis holds the same digits" 100000000000000 "$(rcli GET "$(gkey "$p")")"
expect_eq "train --json on it: a JSON number, exact" \
    "{\"param\":\"$p\",\"id\":\"w\",\"local\":0,\"value\":100000000000001,\"outcome\":\"ok\",\"exit\":0}" \
    "$(rb train --param "$p" --worker w --json)"

# Past LLONG_MAX: an error, exit 1, the value unchanged.
p=$(fresh overflow)
rb set --param "$p" --value 9223372036854775806
expect_eq "train up to LLONG_MAX" "local 0 global 9223372036854775807" \
    "$(rb train --param "$p" --worker w)"
err=$(rb train --param "$p" --worker w 2>&1)
expect_eq "train past LLONG_MAX exits 1" 1 $?
expect_match "... and says it would overflow" "^rbarrier: .*would overflow a 64-bit integer; nothing was changed$" "$err"
expect_eq "... and leaves the value unchanged" 9223372036854775807 "$(rcli GET "$(gkey "$p")")"
rb train --param "$p" --worker w --by -9223372036854775807 >/dev/null
expect_eq "a negative step back is exact" 0 "$(rb get --param "$p")"
rb set --param "$p" --value -9223372036854775808
rb train --param "$p" --worker w --by -1 >/dev/null 2>&1
expect_eq "train below LLONG_MIN exits 1" 1 $?
expect_eq "... value unchanged" -9223372036854775808 "$(rcli GET "$(gkey "$p")")"

# A value past 64 bits (stored by another client): an integer step is
# refused, not lost; a float step too small for its precision too.
p=$(fresh huge)
rcli SET "$(gkey "$p")" 100000000000000000000 >/dev/null
err=$(rb train --param "$p" --worker w --by 1 2>&1)
expect_eq "train --by 1 on 1e20 exits 1" 1 $?
expect_match "... saying the value is out of range" "outside the 64-bit integer range" "$err"
err=$(rb train --param "$p" --worker w --by 0.5 2>&1)
expect_eq "train --by 0.5 on 1e20 (below its precision) exits 1" 1 $?
expect_match "... saying so" "below its float precision" "$err"
expect_eq "1e20 unchanged" 100000000000000000000 "$(rcli GET "$(gkey "$p")")"
expect_eq "no train record was left by the refusals" 0 "$(rcli EXISTS "$(gkey "$p"):local:w:train")"

# Floats only with a fraction: an integer step on an integer stays integer.
p=$(fresh float)
expect_eq "integer steps stay integers" "local 0 global 2" \
    "$(rb train --param "$p" --worker w --by 2)"
expect_eq "a fractional step makes a float" "local 0 global 2.25" \
    "$(rb train --param "$p" --worker w --by 0.25)"
expect_eq "an integer step on a float value adds as a float" "local 0 global 3.25" \
    "$(rb train --param "$p" --worker w --by 1)"
expect_eq "sync copies the digits as stored" 3.25 "$(rb sync --param "$p" --worker w)"

# Non-canonical numbers are bad input (exit 2); one stored by another
# client comes out of --json as a string, never as invalid JSON.
# The param's keys and their contents, not DBSIZE: other tests' ended
# rounds expire (they linger 5 minutes) while this runs.
param_state() { for k in $(rcli --scan --pattern "rb:p:{$1}*" | sort); do echo "$k $(rcli DUMP "$k" | od -An -tx1 | tr -d ' \n')"; done; }
before=$(param_state "$p")
rb set --param "$p" --value 007 2>/dev/null
expect_eq "set --value 007 exits 2" 2 $?
rb train --param "$p" --worker w --by 9223372036854775808 2>/dev/null
expect_eq "train --by past 64 bits exits 2" 2 $?
expect_eq "... nothing written" "$before" "$(param_state "$p")"
p=$(fresh raw)
rcli SET "$(gkey "$p")" 007 >/dev/null
expect_eq "get --json of a stored 007: a string" \
    "{\"param\":\"$p\",\"value\":\"007\",\"outcome\":\"ok\",\"exit\":0}" \
    "$(rb get --param "$p" --json)"
rcli SET "$(gkey "$p")" $'a"b\\\001c' >/dev/null
js=$(rb get --param "$p" --json)
check "get --json of a hostile stored value parses as JSON" \
    python3 -c 'import json,sys; json.loads(sys.argv[1])' "$js"

# A missing permission is an error, not a silent fallback (INCRBY refused
# used to fall back to INCRBYFLOAT and exit 0).
p=$(fresh noperm)
user=noincr$$
rcli ACL SETUSER "$user" on '>pw-x' '~*' '+@all' '-incrby' >/dev/null
err=$(REDISCLI_AUTH=pw-x rb train --user "$user" --param "$p" --worker w 2>&1)
expect_eq "train without +incrby exits 1" 1 $?
expect_match "... and names the permission" "\+incrby" "$err"
expect_eq "... and wrote nothing" 0 "$(rcli EXISTS "$(gkey "$p")")"
rcli ACL DELUSER "$user" >/dev/null

# Hostile callers of the scripts: bad ARGV is refused before any write.
sha_of() { rcli SCRIPT LOAD "$(sh "$RB_TESTS_DIR/../tools/embed-lua.sh" --expand "$RB_TESTS_DIR/../lua/$1")"; }
train=$(sha_of train-3.lua)
set=$(sha_of set-1.lua)
sync=$(sha_of sync-2.lua)
p=$(fresh hostile)
k=$(gkey "$p")
for args in "1e3 0 n1 60" "1 1 n1 60" "0.5 0 n1 60" "007 0 n1 60" "1 0 n1 abc" "1 0 n1 0" "1 0 n,1 60"; do
    out=$(rcli EVALSHA "$train" 3 "$k" "$k:local:w" "$k:local:w:train" $args 2>&1)
    expect_match "train with ARGV '$args' is refused" "bad argument" "$out"
done
for args in "1e3 60" "abc 60" "1 0" "1 x"; do
    out=$(rcli EVALSHA "$set" 1 "$k" $args 2>&1)
    expect_match "set with ARGV '$args' is refused" "bad argument" "$out"
done
out=$(rcli EVALSHA "$sync" 2 "$k" "$k:local:w" 0 2>&1)
expect_match "sync with ttl 0 is refused" "bad argument" "$out"
expect_eq "nothing of the hostile calls was written" 0 "$(rcli EXISTS "$k" "$k:local:w" "$k:local:w:train")"
