# doc/rbarrier.1 cannot drift from the program: it lints clean; every
# subcommand of the top-level help has its subsection; every long flag of
# every subcommand's --help is listed in that subsection or under COMMON
# OPTIONS; every exit code a --help lists is under EXIT STATUS; every
# environment variable the CLI reads or sets is under ENVIRONMENT.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
man=$root/doc/rbarrier.1

if command -v mandoc >/dev/null; then
    # -W warning: the style level also reports the state of this machine's
    # man database (cross-references it has not indexed), not the page.
    lint=$(mandoc -T lint -W warning "$man" 2>&1)
    expect_eq "mandoc -T lint is clean" "" "$lint"
else
    echo "skip - mandoc not installed (tools/install-deps.sh installs it)"
fi
lint=$(groff -ww -z -mandoc "$man" 2>&1)
expect_eq "groff -ww -z -mandoc is clean" "" "$lint"

# The man page's flags: "SUBCOMMAND --flag" for each flag listed in a
# COMMANDS subsection (a subsection names its subcommands: ".Ss wait,
# barrier"), "* --flag" for COMMON OPTIONS.
documented=$(awk '
    /^\.Sh / { sec = substr($0, 5); cmds = ""; next }
    /^\.Ss / && sec == "COMMANDS" { cmds = substr($0, 5); gsub(/,/, " ", cmds); next }
    /^\.It / {
        if (sec == "COMMANDS" && cmds != "") who = cmds
        else if (sec == "COMMON OPTIONS") who = "*"
        else next
        for (i = 2; i < NF; i++) if ($i == "Fl" && $(i + 1) ~ /^-[a-z-]/) {
            n = split(who, w, " ")
            for (j = 1; j <= n; j++) print w[j] " -" $(i + 1)
        }
    }' "$man")
has_flag() { grep -qxF -e "$1 $2" -e "* $2" <<<"$documented"; }

# Subcommands: the words under "commands:" in the top-level help.
top=$(rb --help)
cmds=$(awk 'tolower($0) ~ /^commands:/ { on = 1; next }
            on && /^ +[a-z]/ { print $1; next } on && /^$/ { on = 0 }' <<<"$top")
check "the top-level help lists subcommands" test "$(wc -w <<<"$cmds")" -ge 8

missing_cmds="" missing_flags="" missing_codes="" flags_seen=0
codes=$(awk '/^\.Sh EXIT STATUS/ { on = 1; next } /^\.Sh / { on = 0 }
             on && /^\.It / { print $2 }' "$man")
for c in $cmds; do
    grep -Eq "^\.Ss (.*[ ,])?$c(,| |$)" "$man" || missing_cmds="$missing_cmds $c"
    help=$(rb "$c" --help 2>&1)
    # An option line: indented, starts with a flag; its flags are the words
    # before the two-space gap that starts the description.
    for f in $(sed -nE 's/^ +(-[A-Za-z0-9](, |  +| ))?(--[a-z])/\3/p' <<<"$help" |
               sed -E 's/  .*//' | grep -oE -- '--[a-z][a-z0-9-]*'); do
        flags_seen=$((flags_seen + 1))
        has_flag "$c" "$f" || missing_flags="$missing_flags $c:$f"
    done
    for code in $(awk 'tolower($0) ~ /^exit status/ { on = 1; next }
                       on && /^ +[0-9]/ { print $1 } on && /^$/ { on = 0 }' <<<"$help"); do
        code=${code%%+*}
        grep -qx -- "$code\(+\)\{0,1\}" <<<"$codes" || missing_codes="$missing_codes $c:$code"
    done
done
check "every long flag of every --help was found ($flags_seen)" test "$flags_seen" -ge 30
expect_eq "every subcommand has a subsection in rbarrier.1" "" "$missing_cmds"
expect_eq "every long flag of every --help is in rbarrier.1 (subcommand:flag)" "" "$missing_flags"
expect_eq "every exit code of every --help is under EXIT STATUS" "" "$missing_codes"

# Environment variables the CLI reads or sets for a child (RBARRIER_FAULT
# exists only in fault-injection test builds).
env_doc=$(awk '/^\.Sh ENVIRONMENT/ { on = 1; next } /^\.Sh / { on = 0 }
               on { for (i = 1; i < NF; i++) if ($i == "Ev") print $(i + 1) }' "$man")
missing_env=""
for v in $(cat "$root"/cli/*.c | grep -oE '"(RBARRIER_[A-Z0-9_]+|REDISCLI_[A-Z_]+|TMPDIR)"' |
           tr -d '"' | sort -u); do
    [ "$v" = RBARRIER_FAULT ] && continue
    grep -qxF "$v" <<<"$env_doc" || missing_env="$missing_env $v"
done
expect_eq "every environment variable the CLI uses is under ENVIRONMENT" "" "$missing_env"
check "the man page documents RBARRIER_URL" grep -qxF RBARRIER_URL <<<"$env_doc"

# The SYNOPSIS of run and reset lists each flag of their subsections, and
# the flags DESIGN.md's command line gives a job are all there: in the
# program's --help, in the subsection and in the SYNOPSIS.
synopsis_of() {  # CMD: the long flags of CMD's lines in the SYNOPSIS
    awk -v c="$1" '/^\.Sh / { on = ($0 == ".Sh SYNOPSIS"); next }
        on && /^\.Nm/ { cur = ""; next }
        on && /^\.Cm / { cur = $2; next }
        on && cur == c { for (i = 1; i < NF; i++) if (($i == "Fl" || $i == ".Fl") && $(i + 1) ~ /^-/) print "-" $(i + 1) }' "$man"
}
for c in run reset; do
    syn=$(synopsis_of "$c") missing=""
    for f in $(awk -v c="$c" '$1 == c { print $2 }' <<<"$documented"); do
        grep -qxF -- "$f" <<<"$syn" || missing="$missing $f"
    done
    check "the SYNOPSIS has a $c line" test -n "$syn"
    expect_eq "the SYNOPSIS of $c lists each flag of its subsection" "" "$missing"
done
missing=""
for cf in "run --name" "run --n" "run --id" "run --expect" "run --timeout" "run --lease" \
          "run --ttl" "run --restarts" "run --kill-after" "run --quiet" "reset --job" "reset --lock"; do
    set -- $cf
    grep -qE -- "^ +(-[a-z], )?$2( |$)" <<<"$(rb "$1" --help 2>&1)" || missing="$missing $1:$2(--help)"
    grep -qxF -- "$1 $2" <<<"$documented" || missing="$missing $1:$2(subsection)"
    grep -qxF -- "$2" <<<"$(synopsis_of "$1")" || missing="$missing $1:$2(SYNOPSIS)"
done
expect_eq "every flag of a job (run, reset --job) is in --help, its subsection and the SYNOPSIS" "" "$missing"
