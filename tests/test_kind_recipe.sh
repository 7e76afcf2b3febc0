#!/bin/sh
# docs/ARCHITECTURE.md's recipe "Adding a predictor kind (co-location)",
# followed on a toy kind in a copy of the sources: `toy` predicts each
# workload's solo throughput at its share times one ratio, the median
# co-located / solo ratio of every measured training slot. The recipe's
# three files are edited (the kind's enum and policy values, its X() line)
# or written (its own file), nothing else: the test checks that the recipe
# names exactly these files and that the copy differs from the sources in
# them alone. Then src/colocate/*.c and the colocate commands are compiled
# with the copy's headers (the build's flags, -O0 for time, -Werror), the
# files that name kinds or policies elsewhere are checked with
# -fsyntax-only, and the CLI is linked again from the build's objects:
# `colocate train --kind toy` and `colocate predict` then run the toy kind,
# found by name, and the policy list names it.
CLI=${1:?usage: test_kind_recipe.sh PAIRSIGHT}
. tests/clitest.sh
B=${PS_BUILD_DIR:-$(dirname "$CLI")}
ROOT=$(pwd)
link=$B/CMakeFiles/pairsight_cli.dir/link.txt
objs=$B/CMakeFiles/pairsight_obj.dir/src
cmds=$B/libpairsight_commands.a
for f in "$link" "$objs/colocate/model.c.o" "$cmds"; do
    [ -e "$f" ] || { echo "skip: no $f (not a CMake build folder with make files)"; exit 77; }
done
command -v ar >/dev/null || { echo "skip: no ar"; exit 77; }

# The recipe's files, as docs/ARCHITECTURE.md numbers them.
RECIPE="include/pairsight_colocate.h src/colocate/model_internal.h src/colocate/toy.c"
named=$(awk '/^## Adding a predictor kind/ { on = 1; next } /^## / { on = 0 }
             on && /^[0-9]+\. `[^`]*`/ { sub(/^[0-9]+\. `/, ""); sub(/`.*/, ""); print }' docs/ARCHITECTURE.md |
        sed 's/new\.c$/toy.c/' | tr '\n' ' ' | sed 's/ $//')
[ "$named" = "$RECIPE" ] || fail "docs/ARCHITECTURE.md's kind recipe names '$named', the test edits '$RECIPE'"

# A copy of the sources, then the recipe's three edits.
mkdir "$T/tree" "$T/o"
cp -R include src "$T/tree/" || exit 1
awk '/^    PS_COLOC_AUTO,/ { print "    PS_COLOC_TOY,"; }
     /^    PS_POL_AUTO = PS_POL_KINDS \+ PS_COLOC_AUTO,/ { print "    PS_POL_TOY = PS_POL_KINDS + PS_COLOC_TOY,"; }
     { print }' include/pairsight_colocate.h > "$T/tree/include/pairsight_colocate.h"
sed 's/^#define PSI_CL_KINDS(X) \(.*\) X(auto)$/#define PSI_CL_KINDS(X) \1 X(toy) X(auto)/' \
    src/colocate/model_internal.h > "$T/tree/src/colocate/model_internal.h"
cat > "$T/tree/src/colocate/toy.c" <<'EOF'
/* The toy kind: each workload's solo throughput at its share times the
 * median co-located / solo ratio of every measured training slot. */
#include "colocate/colocate.h"

#include "colocate/model_internal.h"
#include "common/common.h"

#include <math.h>
#include <stdlib.h>

static int fit_toy(ps_coloc_model_t *m, const cl_data_t *d, const int *train, int n_train)
{
    size_t n = 0;
    for (int i = 0; i < n_train; i++)
        n += (size_t)d->c[train[i]].k;
    double *v = psi_malloc(n * sizeof *v + 1);
    if (!v)
        return PS_E_NOMEM;
    n = 0;
    for (int i = 0; i < n_train; i++) {
        const cl_coloc_t *c = &d->c[train[i]];
        for (int s = 0; s < c->k; s++) {
            double solo = psi_cl_solo(d, c->w[s], c->share[s]);
            if (!isnan(c->tput[s]) && solo > 0)
                v[n++] = c->tput[s] / solo;
        }
    }
    m->ratio_global = n ? psi_median(v, n) : 1.0;
    free(v);
    return 0;
}

static int predict_toy(const ps_coloc_model_t *m, const cl_data_t *d, int ci, double *out_slot, double *out_sum)
{
    const cl_coloc_t *c = &d->c[ci];
    *out_sum = 0;
    for (int s = 0; s < c->k; s++) {
        out_slot[s] = m->ratio_global * psi_cl_solo(d, c->w[s], c->share[s]);
        *out_sum += out_slot[s];
    }
    return 0;
}

static double np_toy(const cl_data_t *d, const ps_coloc_params_t *p)
{
    (void)d;
    (void)p;
    return 1;
}

const psi_cl_kind_t psi_cl_kind_toy = {.kind = PS_COLOC_TOY,
                                       .name = "toy",
                                       .nf = CL_SUM_NF,
                                       .body = "none",
                                       .fit = fit_toy,
                                       .predict = predict_toy,
                                       .n_params = np_toy};
EOF
changed=$(cd "$T/tree" && for f in $(find include src -type f | sort); do
              [ -f "$ROOT/$f" ] && cmp -s "$f" "$ROOT/$f" || printf '%s ' "$f"; done | sed 's/ $//')
[ "$changed" = "$RECIPE" ] || fail "the copy differs from the sources in '$changed', not in the recipe's '$RECIPE'"
grep -q 'X(toy) X(auto)' "$T/tree/src/colocate/model_internal.h" || fail "X(toy) not added to PSI_CL_KINDS"
[ "$(grep -c 'PS_COLOC_TOY' "$T/tree/include/pairsight_colocate.h")" -eq 2 ] ||
    fail "PS_COLOC_TOY and PS_POL_TOY not both added to include/pairsight_colocate.h"
# shellcheck disable=SC2154 # fails: clitest.sh's count
[ "$fails" -eq 0 ] || finish test_kind_recipe

# Compile with the copy's headers: each target's flags (flags.make), its
# include folders pointed at the copy, -O0 -g0 appended (seconds, not a
# minute). compile TARGET SOURCE [OBJECT]: OBJECT, or -fsyntax-only.
compile() {
    fm=$B/CMakeFiles/$1.dir/flags.make
    cflags=$(sed -n 's/^C_FLAGS = //p' "$fm")
    defs=$(sed -n 's/^C_DEFINES = //p' "$fm")
    incs=$(sed -n 's/^C_INCLUDES = //p' "$fm" | sed "s|-I$ROOT/src|-I$T/tree/src|g; s|-I$ROOT/include|-I$T/tree/include|g")
    if [ -n "${3:-}" ]; then out="-c -o $3"; else out=-fsyntax-only; fi
    # shellcheck disable=SC2086
    $CC $defs $incs $cflags -O0 -g0 -Werror $out "$2" 2>>"$T/cc" || echo "$2" >>"$T/cc_failed"
}
CC=$(awk '{ print $1; exit }' "$link") # the build's compiler
mkdir "$T/cli"
i=0
for f in "$T"/tree/src/colocate/*.c "$T"/tree/src/cli/cmd_colocate*.c; do
    case $f in
    */cli/*) compile pairsight_commands "$f" "$T/cli/$(basename "$f").o" & ;;
    *) compile pairsight_obj "$f" "$T/o/$(basename "$f").o" & ;;
    esac
    i=$((i + 1))
    [ $((i % 4)) -ne 0 ] || wait
done
wait
# The other files that name kinds or policies: syntax and warnings only.
for f in $(cd "$T/tree" && grep -lE 'PS_COLOC_|PS_POL_|ps_coloc_kind|psi_cl_kind|ps_coloc_policy' src/*/*.c |
           grep -vE '^src/(colocate/|cli/cmd_colocate)'); do
    case $f in
    src/serve/*) compile pairsight_serve "$T/tree/$f" ;;
    src/cli/*) compile pairsight_commands "$T/tree/$f" ;;
    *) compile pairsight_obj "$T/tree/$f" ;;
    esac
done
[ -f "$T/cc_failed" ] && { fail "with the toy kind, these do not compile: $(cat "$T/cc_failed") ($(cat "$T/cc"))"; finish test_kind_recipe; }

# The library and the commands with the new objects, and the CLI linked.
find "$objs" -name '*.c.o' ! -path '*/src/colocate/*' > "$T/objs"
# shellcheck disable=SC2046
ar qc "$T/libpairsight.a" $(cat "$T/objs") "$T"/o/*.o || { fail "ar (library)"; finish test_kind_recipe; }
cp "$cmds" "$T/libpairsight_commands.a"
(cd "$T/cli" && ar r "$T/libpairsight_commands.a" ./*.o) || { fail "ar (commands)"; finish test_kind_recipe; }
cmd=$(sed "s| libpairsight\\.a | $T/libpairsight.a |; s| libpairsight_commands\\.a | $T/libpairsight_commands.a |;
           s| -o pairsight | -o $T/pairsight |" "$link")
(cd "$B" && sh -c "$cmd") 2>"$T/ld" || { fail "linking the CLI with the toy kind: $(cat "$T/ld")"; finish test_kind_recipe; }
P=$T/pairsight

# The toy kind, found by name: trained, saved, loaded and predicting.
D=tests/data/colocate
expect 0 "$P" colocate train --workloads $D/workloads.csv --colocations $D/colocations3.csv --kind toy --out "$T/toy.psc"
has "$T/err" "toy"
grep -q "^kind toy$" "$T/toy.psc" || fail "the model file does not say kind toy: $(head -5 "$T/toy.psc")"
expect 0 "$P" colocate predict --model "$T/toy.psc" --workloads $D/workloads.csv --colocations $D/colocations3.csv --out "$T/p.csv"
# Every prediction is the exclusive throughput at the share times one ratio.
awk -F, 'NR == FNR { if (FNR > 1) x[$1 "," $2] = $3; next }
         FNR == 1 { for (i = 1; i <= NF; i++) if ($i == "tput_pred") c = i; next }
         { r = $c / (x[$2 "," $4] * $5 / 100); n++
           if (n == 1) r0 = r; else if (r - r0 > 1e-9 * r0 || r0 - r > 1e-9 * r0) bad++ }
         END { if (!c || n < 10 || bad || !(r0 > 0)) { print "no single ratio: " n " rows, " bad " off"; exit 1 } }' \
    $D/workloads.csv "$T/p.csv" || fail "toy's predictions: $(head -3 "$T/p.csv")"
# Its policy takes the kind's name; an unknown kind's message lists it.
expect 2 "$P" colocate train --workloads $D/workloads.csv --colocations $D/colocations3.csv --kind nope --out "$T/x.psc"
has "$T/err" "toy"
expect 0 "$P" colocate eval --workloads $D/workloads.csv --colocations $D/colocations3.csv --seeds 1 --predictors toy --json -q
has "$T/out" '"toy"'
# The unchanged CLI does not know it (the test would pass without the edits otherwise).
expect 2 "$CLI" colocate train --workloads $D/workloads.csv --colocations $D/colocations3.csv --kind toy --out "$T/y.psc"
cd "$ROOT" || exit 1
finish test_kind_recipe
