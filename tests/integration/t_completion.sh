# Bash completion (completion/rbarrier.bash) driven as bash drives it:
# source it, set COMP_WORDS and COMP_CWORD, call the function, read
# COMPREPLY. Subcommands and flags come from the program's own --help.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
bin=${RBARRIER##* }            # the binary, without a valgrind prefix
mkdir -p "$RB_TEST_TMP/compbin"
ln -sf "$bin" "$RB_TEST_TMP/compbin/rbarrier"

# complete WORD...: the offers for the last word (words as typed so far).
complete_words() {
    PATH="$RB_TEST_TMP/compbin:$PATH" bash -c '
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _rbarrier rbarrier "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
        _ "$root/completion/rbarrier.bash" "$@"
}

expect_eq "rbarrier w -> wait worker" "wait worker " "$(complete_words rbarrier w)"
expect_match "rbarrier '' -> every subcommand" "^(.* )?demo .*status .*train .*wait worker" \
    "$(complete_words rbarrier '')"
expect_eq "rbarrier --v -> --version" "--version " "$(complete_words rbarrier --v)"
expect_eq "rbarrier help s -> the subcommands with s" "set status sync " \
    "$(complete_words rbarrier help s)"
expect_eq "rbarrier run ... -- ech -> commands (echo)" "echo" \
    "$(complete_words rbarrier run --name x --n 2 -- ech | tr ' ' '\n' | grep -x echo | sort -u)"
expect_eq "rbarrier wait --ti -> --timeout" "--timeout " "$(complete_words rbarrier wait --ti)"
expect_eq "rbarrier wait --expect @DIR/compb -> @FILE names" "@$RB_TEST_TMP/compbin " \
    "$(complete_words rbarrier wait --expect "@$RB_TEST_TMP/compb")"
expect_eq "rbarrier wait --timeout '' -> nothing (a free value)" "" \
    "$(complete_words rbarrier wait --timeout '')"
expect_eq "rbarrier train --b -> --by" "--by " "$(complete_words rbarrier train --b)"
expect_eq "rbarrier re -> report reset" "report reset " "$(complete_words rbarrier re)"
expect_eq "rbarrier report --l -> --last" "--last " "$(complete_words rbarrier report --l)"
expect_eq "rbarrier lock --no -> --no-history, --nonblock" "--no-history --nonblock " "$(complete_words rbarrier lock --no)"
expect_eq "rbarrier lock --confl -> --conflict-exit-code" "--conflict-exit-code " "$(complete_words rbarrier lock --confl)"
expect_eq "rbarrier status --name x --j -> --json" "--json " \
    "$(complete_words rbarrier status --name x --j)"
expect_eq "rbarrier get -- (flags only of get)" "" \
    "$(complete_words rbarrier get -- | tr ' ' '\n' | grep -xE -- '--(n|worker|by)')"
expect_match "rbarrier worker --w -> --worker --workers" "^--worker --workers $" \
    "$(complete_words rbarrier worker --w)"

# Other --re* flags (--replicas) may be offered too; --reduce must be.
expect_match "rbarrier wait --re offers --reduce" "(^| )--reduce " "$(complete_words rbarrier wait --re)"
expect_eq "rbarrier wait --red -> --reduce" "--reduce " "$(complete_words rbarrier wait --red)"
expect_eq "rbarrier wait --reduce '' -> all max min sum" "all max min sum " \
    "$(complete_words rbarrier wait --reduce '')"
expect_eq "rbarrier wait --reduce=m -> max min" "max min " \
    "$(complete_words rbarrier wait --reduce = m)"


# Every long flag of every subcommand's --help is offered after
# `rbarrier SUB --`, and so are the flags DESIGN.md's command line gives a
# job (run's, and reset's --job).
top=$(rb --help)
missing="" seen=0
for c in $(awk 'tolower($0) ~ /^commands:/ { on = 1; next }
                on && /^ +[a-z]/ { print $1; next } on && /^$/ { on = 0 }' <<<"$top"); do
    offered=" $(complete_words rbarrier "$c" --)"
    for f in $(rb "$c" --help 2>&1 | sed -nE 's/^ +(-[A-Za-z0-9](, |  +| ))?(--[a-z])/\3/p' |
               sed -E 's/  .*//' | grep -oE -- '--[a-z][a-z0-9-]*'); do
        seen=$((seen + 1))
        [[ $offered == *" $f "* ]] || missing="$missing $c:$f"
    done
done
check "the flags of every --help were found ($seen)" test "$seen" -ge 30
expect_eq "rbarrier SUB -- offers every long flag of SUB's --help" "" "$missing"
offered=" $(complete_words rbarrier run --name x --)" missing=""
for f in --name --n --id --expect --timeout --lease --ttl --restarts --kill-after --quiet; do
    [[ $offered == *" $f "* ]] || missing="$missing $f"
done
expect_eq "rbarrier run ... -- offers every flag of a job" "" "$missing"
expect_eq "rbarrier run --res -> --restarts" "--restarts " "$(complete_words rbarrier run --res)"
expect_eq "rbarrier run --kill -> --kill-after" "--kill-after " "$(complete_words rbarrier run --kill)"
expect_eq "rbarrier run --kill-after '' -> nothing (a free value)" "" \
    "$(complete_words rbarrier run --kill-after '')"
expect_eq "rbarrier reset --name x --jo -> --job" "--job " "$(complete_words rbarrier reset --name x --jo)"
