# Sourced by the tests that follow a docs/ARCHITECTURE.md recipe on a toy
# addition (after tests/clitest.sh, with CLI set): the build folder B, and
# the steps that rebuild the CLI with edited copies of a few sources: each
# compiled with its library's flags (CMake's flags.make), swapped into a
# copy of that library's archive (or, for src/cli/main.c, used in place of
# its object), and the CLI linked again into $T/pairsight. Each step exits
# 77 when B is not a CMake build folder with make files, 1 when the edit
# does not compile or link.
B=${PS_BUILD_DIR:-$(dirname "$CLI")}
ROOT=$(pwd)
command -v ar >/dev/null || { echo "skip: no ar"; exit 77; }
RECIPE_SED=

# recipe_compile TARGET ARCHIVE SOURCE: SOURCE (an edited copy of one file
# of CMake target TARGET, e.g. pairsight_obj, whose archive is ARCHIVE, e.g.
# libpairsight.a; ARCHIVE "-" for the CLI's main.c) compiled into the copy.
recipe_compile() {
    flags=$B/CMakeFiles/$1.dir/flags.make
    link=$B/CMakeFiles/pairsight_cli.dir/link.txt
    for f in "$flags" "$link"; do
        [ -f "$f" ] || { echo "skip: no $f (not a CMake build folder with make files)"; exit 77; }
    done
    obj=$(basename "$3").o
    mkdir -p "$T/o"
    cflags=$(sed -n 's/^C_FLAGS = //p' "$flags")
    defs=$(sed -n 's/^C_DEFINES = //p' "$flags")
    incs=$(sed -n 's/^C_INCLUDES = //p' "$flags")
    # shellcheck disable=SC2086
    (cd "$B" && cc $defs $incs $cflags -I"$ROOT/src" -c "$3" -o "$T/o/$obj") ||
        { echo "FAIL: the edited $(basename "$3") does not compile"; exit 1; }
    if [ "$2" = - ]; then
        RECIPE_SED="$RECIPE_SED s| CMakeFiles/pairsight_cli.dir/src/cli/$obj | $T/o/$obj |;"
        return
    fi
    [ -f "$T/$2" ] || cp "$B/$2" "$T/$2" || { echo "skip: no $B/$2"; exit 77; }
    ar d "$T/$2" "$obj" && ar q "$T/$2" "$T/o/$obj" || { echo "FAIL: ar"; exit 1; }
    RECIPE_SED="$RECIPE_SED s| $2 | $T/$2 |;"
}

# recipe_link: the CLI linked with the edited copies into $T/pairsight.
recipe_link() {
    cmd=$(sed "$RECIPE_SED s| -o pairsight | -o $T/pairsight |" "$B/CMakeFiles/pairsight_cli.dir/link.txt")
    (cd "$B" && sh -c "$cmd") || { echo "FAIL: linking the CLI with the edited sources"; exit 1; }
}
