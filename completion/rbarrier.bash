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
    local prog=${COMP_WORDS[0]} sub= i flag line values choices help
    COMPREPLY=()
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}

    # The subcommand is the first word after the program name; after a
    # lone "--" (run, lock) the rest is a command line of its own.
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -- ]]; then
            COMPREPLY=($(compgen -c -- "$cur"))
            return
        fi
    done
    ((COMP_CWORD > 1)) && sub=${COMP_WORDS[1]}

    if [[ -z $sub || ($sub == help && COMP_CWORD -eq 2) ]]; then
        help=$(_rbarrier_help "$prog")
        COMPREPLY=($(compgen -W "$(awk 'tolower($0) ~ /^commands:/ { on = 1; next }
                on && /^ +[a-z]/ { print $1; next } on && /^$/ { on = 0 }' <<<"$help")
                $([[ -z $sub ]] && echo --help --version)" -- "$cur"))
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
        # This flag's option line in the help; a fixed set of values shows
        # as "a|b|c" in its placeholder (--reduce=max|min|sum|all) or its
        # description. No placeholder: the flag takes no value.
        line=$(awk -v f="$flag" '{ for (i = 1; i <= 2 && i <= NF; i++) {
                w = $i; sub(/,$/, "", w)
                if (w == f || index(w, f "=") == 1) { print; exit } } }' <<<"$help")
        values=$(grep -oE -- "$flag[= ][^ ]+" <<<"$line" | head -n 1)
        values=${values#"$flag"?}
        choices=$(grep -oE '(^|[ =(])[a-z0-9]+(\|[a-z0-9]+)+' <<<"$line" | head -n 1)
        choices=${choices#[ =(]}
        case $flag in
        --cacert | --cert | --key | --progress-file)
            COMPREPLY=($(compgen -f -- "$cur"))
            return ;;
        --once)
            COMPREPLY=($(compgen -c -- "$cur"))
            return ;;
        --cacertdir)
            COMPREPLY=($(compgen -d -- "$cur"))
            return ;;
        --expect)
            # --expect @FILE: the ids one a line in FILE
            if [[ $cur == @* ]]; then
                COMPREPLY=($(compgen -f -P @ -- "${cur#@}"))
                return
            fi ;;
        esac
        if [[ -n $choices ]]; then
            COMPREPLY=($(compgen -W "${choices//|/ }" -- "$cur"))
            return
        elif [[ -n $values ]]; then
            return   # a free value (NAME, SEC, URL): nothing to offer
        fi
    fi
    # Flags: those before the description on each option line of the help
    # ("  -h, --help   print ...", "  --name=NAME   barrier name").
    COMPREPLY=($(compgen -W "$(sed -nE 's/^ +(-[A-Za-z0-9](, |  +| ))?(--[a-z])/\3/p' <<<"$help" |
        sed -E 's/  .*//' | grep -oE -- '--[a-z][a-z0-9-]*')" -- "$cur"))
}
complete -F _rbarrier rbarrier
