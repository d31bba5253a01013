# Help that teaches: `rbarrier help CMD` and CMD --help for every command,
# lines within 80 columns, one or two real examples, only the exit codes a
# command can return; the top-level help names $RBARRIER_URL,
# $REDISCLI_AUTH and the exit-code table; -V; a typo gets the nearest
# command. (Help passing no barrier is in t_badinput.sh.)
. "$RB_TESTS_DIR/lib.sh"

top=$(rb --help)
expect_eq "rbarrier --help exits 0" 0 $?
expect_match "top-level help names \$RBARRIER_URL" "RBARRIER_URL" "$top"
expect_match "top-level help names \$REDISCLI_AUTH" "REDISCLI_AUTH" "$top"
expect_match "top-level help has the exit-code table" "124 +this party's own --timeout" "$top"
expect_match "top-level help says how to get a command's help" "rbarrier help <command>" "$top"
expect_eq "top-level help fits 80 columns" "" "$(awk 'length > 80' <<<"$top")"
expect_eq "rbarrier help = rbarrier --help" "$top" "$(rb help)"
expect_match "-V prints the version" "^rbarrier [0-9]+\.[0-9]+\.[0-9]+$" "$(rb -V)"

cmds=$(awk 'tolower($0) ~ /^commands:/ { on = 1; next }
            on && /^ +[a-z]/ { print $1; next } on && /^$/ { on = 0 }' <<<"$top")
for c in $cmds; do
    h=$(rb help "$c")
    expect_eq "help $c exits 0 and equals $c --help" "0 ok" \
        "$? $([ "$h" = "$(rb "$c" --help)" ] && echo ok || echo differs)"
    expect_eq "$c --help fits 80 columns" "" "$(awk 'length > 80' <<<"$h")"
    n=$(awk '/^examples:/ { on = 1; next } on && /^  rbarrier / { n++ } on && /^$/ { on = 0 }
             END { print n + 0 }' <<<"$h")
    check "$c --help has one or two real examples ($n)" test "$n" -ge 1 -a "$n" -le 2
    # every example must parse: run it with --help appended is not possible
    # (help must be alone), so check its flags against the option lines.
    bad=""
    for f in $(awk '/^examples:/ { on = 1; next } on && /^$/ { on = 0 } on' <<<"$h" |
               grep -oE -- ' --[a-z][a-z-]*' | sort -u); do
        grep -qE -- "^ +(-[a-zA-Z], )?$f( |$)" <<<"$h" || bad="$bad$f"
    done
    expect_eq "$c: every flag of its examples is one of its options" "" "$bad"
    expect_match "$c --help has an exit status section" "^exit status:" "$(grep '^exit status:' <<<"$h")"
done

# Only the codes a command can return.
codes_of() { rb help "$1" | awk '/^exit status:/ { on = 1; next } on && /^  [0-9N]/ { printf "%s ", $1 }'; }
expect_eq "status lists 0 1 2 4 128+N (no 3, no 124)" "0 1 2 4 128+N " "$(codes_of status)"
expect_eq "get lists 0 1 2 4 124 (--until-set --timeout) 128+N" "0 1 2 4 124 128+N " "$(codes_of get)"
expect_eq "demo lists 0 1 2 4 128+N" "0 1 2 4 128+N " "$(codes_of demo)"
expect_match "wait lists 3 and 124" "^0 (N )?1 2 3 4 124 128\+N" "$(codes_of wait)"

# A typo gets the nearest command; nothing near gets none.
err=$(rb stauts 2>&1)
expect_eq "a misspelt command exits 2" 2 $?
expect_match "... and suggests the nearest" "did you mean 'status'\?" "$err"
err=$(rb help wiat 2>&1)
expect_match "help of a misspelt command suggests too" "did you mean 'wait'\?" "$err"
err=$(rb zzzzzzzz 2>&1)
expect_eq "nothing near: no suggestion" "rbarrier: unknown command 'zzzzzzzz' (see 'rbarrier --help')" "$err"
