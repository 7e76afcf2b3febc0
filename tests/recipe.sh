# Sourced by the tests that follow a docs/ARCHITECTURE.md recipe on a toy
# addition (after tests/clitest.sh, with CLI set): the build folder B, and
# recipe_link, which compiles one edited source of a library of the build
# with that library's flags (CMake's flags.make), swaps it into a copy of
# the library's archive and links the CLI again into $T/pairsight.
B=${PS_BUILD_DIR:-$(dirname "$CLI")}
ROOT=$(pwd)
command -v ar >/dev/null || { echo "skip: no ar"; exit 77; }

# recipe_link TARGET ARCHIVE SOURCE: SOURCE (an edited copy of one file of
# TARGET, e.g. pairsight_obj and libpairsight.a) compiled into ARCHIVE's copy
# in $T, the CLI linked with it; exits 77 when B is not a CMake build folder
# with make files, 1 when the edit does not compile or link.
recipe_link() {
    flags=$B/CMakeFiles/$1.dir/flags.make
    link=$B/CMakeFiles/pairsight_cli.dir/link.txt
    for f in "$flags" "$link" "$B/$2"; do
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
    cp "$B/$2" "$T/$2"
    ar d "$T/$2" "$obj" && ar q "$T/$2" "$T/o/$obj" || { echo "FAIL: ar"; exit 1; }
    cmd=$(sed "s| $2 | $T/$2 |; s| -o pairsight | -o $T/pairsight |" "$link")
    (cd "$B" && sh -c "$cmd") || { echo "FAIL: linking the CLI with the edited $(basename "$3")"; exit 1; }
}
