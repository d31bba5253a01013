# bash completion for rbarrier                            -*- shell-script -*-
#
# Subcommands and flags are read from the program's own --help when a word
# is completed, so the completion cannot drift from the program. Flags with
# a fixed set of values show it in their --help placeholder (--reduce=a|b|c);
# those values are offered after the flag.

_rbarrier_help()
{
    local prog=$1
    shift
    command -v -- "$prog" >/dev/null 2>&1 || prog=rbarrier
    "$prog" "$@" --help 2>/dev/null
}

_rbarrier()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=
    local prog=${COMP_WORDS[0]} sub= i flag values help
    COMPREPLY=()
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}

    # The subcommand is the first word after the program name; after a
    # lone "--" (run) the rest is a command line of its own.
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            COMPREPLY=($(compgen -c -- "$cur"))
            return
        fi
    done
    ((COMP_CWORD > 1)) && sub=${COMP_WORDS[1]}

    if [[ -z $sub ]]; then
        help=$(_rbarrier_help "$prog")
        COMPREPLY=($(compgen -W "$(awk '/^commands:/ { on = 1; next }
                on && /^  [a-z]/ { print $1 }' <<<"$help") --help --version" \
            -- "$cur"))
        return
    fi

    # "--flag=value": bash splits it at "=" (COMP_WORDBREAKS).
    flag=$prev
    if [[ $cur == = ]]; then
        flag=$prev cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
        flag=${COMP_WORDS[COMP_CWORD - 2]}
    fi

    help=$(_rbarrier_help "$prog" "$sub")
    if [[ $flag == --* && $cur != -* ]]; then
        # The placeholder of this flag in the help: "--flag=PLACEHOLDER".
        values=$(awk -v f="$flag" '$1 == f || index($1, f "=") == 1 {
                sub(/^[^=]*=?/, "", $1); print $1; exit }' <<<"$help")
        case $flag in
        --cacert | --cert | --key | --once)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --cacertdir)
            COMPREPLY=($(compgen -d -- "$cur"))
            return ;;
        esac
        if [[ $values == *'|'* ]]; then
            COMPREPLY=($(compgen -W "${values//|/ }" -- "$cur"))
            return
        elif [[ -n $values ]]; then
            return   # a free value (NAME, SEC, URL): nothing to offer
        fi
    fi
    # Flags: the first word of each option line of the subcommand's help.
    COMPREPLY=($(compgen -W "$(awk '/^ +(-[a-zA-Z], )?--[a-z]/ {
            for (i = 1; i <= NF; i++) if ($i ~ /^--[a-z]/) {
                sub(/[=,].*/, "", $i); print $i; break } }' <<<"$help")" \
        -- "$cur"))
}
complete -F _rbarrier rbarrier
