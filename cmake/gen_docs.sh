#!/bin/sh
# Writes the man page and the bash completion of pairsight from the CLI's own
# help texts (`pairsight --help`, `pairsight help CMD`), so that neither can
# drift from the code. Run by the build (cmake/install.cmake) after the CLI.
# Usage: gen_docs.sh PAIRSIGHT OUT.1 OUT.bash
set -eu
cli=$1 man=$2 bash=$3
version=$("$cli" --version | sed 's/^pairsight //')
cmds=$("$cli" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')

# roff: a backslash is \e; a line that starts with . or ' is escaped with \&.
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" -e 's/^-/\\-/' ; }

{
    printf '.TH PAIRSIGHT 1 "" "pairsight %s" "User Commands"\n' "$version"
    printf '.SH NAME\npairsight \\- predict interference between deep-learning tasks sharing a GPU\n'
    printf '.SH SYNOPSIS\n.B pairsight\n.I COMMAND\n[\n.I OPTIONS\n]\n'
    printf '.SH DESCRIPTION\n.nf\n'
    "$cli" --help | roff
    printf '.fi\n.SH COMMANDS\n'
    for c in $cmds; do
        printf '.SS %s\n.nf\n' "$c"
        "$cli" help "$c" | roff
        printf '.fi\n'
    done
    printf '.SH FILES\nThe tables (ops.csv, coexec.csv, ...) are described in docs/FORMATS.md.\n'
    printf '.SH SEE ALSO\nThe README and docs/ of the pairsight sources.\n'
} >"$man.tmp"
mv "$man.tmp" "$man"

{
    echo "# bash completion for pairsight $version (generated from its help texts)"
    echo "_pairsight() {"
    echo '    local cur=${COMP_WORDS[COMP_CWORD]} words=""'
    echo '    if [ "$COMP_CWORD" -eq 1 ]; then'
    echo "        words=\"$(echo $cmds) help --help --version\""
    echo '    else'
    echo '        case ${COMP_WORDS[1]} in'
    for c in $cmds; do
        # The command's flags and the actions its usage lines name
        # ("usage: pairsight model export ...").
        w=$("$cli" help "$c" | { grep -oE -- '(^|[][ (,|])-{1,2}[a-z][a-z0-9-]*' || true; } |
            sed 's/^[][ (,|]//' | sort -u | tr '\n' ' ')
        a=$("$cli" help "$c" | sed -n "s/^\(usage:\)\{0,1\} *pairsight $c \([a-z][a-z-]*\).*/\2/p" | sort -u | tr '\n' ' ')
        echo "        $c) words=\"$a$w\" ;;"
    done
    echo "        help) words=\"$(echo $cmds)\" ;;"
    echo '        esac'
    echo '    fi'
    echo '    case $cur in'
    echo '        -*|"") COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;'
    echo '        *) COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur")) ;;'
    echo '    esac'
    echo "}"
    echo "complete -o filenames -F _pairsight pairsight"
} >"$bash.tmp"
mv "$bash.tmp" "$bash"
