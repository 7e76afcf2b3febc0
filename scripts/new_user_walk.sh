#!/bin/sh
# A new user's first hour, scripted (issue 29), runnable in CI on a fresh
# clone after the build: the README's "Using it" block run as written, top to
# bottom, in a scratch folder; then its report rendered whole in headless
# Chromium, with the GPU's name and the data's source on the first screen;
# then the Python step, where scripts/new_user_walk_python.sh exists (the
# Python package's venv install is its own engineer's; this is its hook).
# Usage: scripts/new_user_walk.sh [WORKDIR]   (default: a fresh temporary one)
# Exit 0 when every step passed, 1 with the failing step named, 77 when
# Chromium is absent (the README block still ran).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/pairsight" ] || { echo "new_user_walk: build/pairsight is missing: run scripts/test.sh first" >&2; exit 1; }
work=${1:-$(mktemp -d)}
mkdir -p "$work"
say() { echo "== new-user walk: $*" >&2; }

# 1. The README's block, extracted between the "## Using it" heading and the
# end of its first sh block, run in the scratch folder with the clone's
# build/, scripts/ and tests/ beside it, as from the root of a clone.
sed -n '/^## Using it$/,/^## /p' "$root/README.md" | sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' >"$work/walk.sh"
[ -s "$work/walk.sh" ] || { echo "new_user_walk: no sh block under README's '## Using it'" >&2; exit 1; }
for d in build scripts tests; do ln -sfn "$root/$d" "$work/$d"; done
say "README's 'Using it' block ($(wc -l <"$work/walk.sh") lines) in $work"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    # Without a browser the block runs but its last line (render) cannot.
    sed -i '/render_report.sh/d' "$work/walk.sh"
fi
(cd "$work" && sh -eux walk.sh) >"$work/walk.log" 2>&1 || {
    tail -n 30 "$work/walk.log" >&2
    echo "new_user_walk: the README's block failed (log: $work/walk.log)" >&2
    exit 1
}
for f in camp/ops.csv camp/coexec.csv camp/campaign.json model.psm q.csv pred.csv model2.psm eval.json report.html plan.json bounds.csv; do
    [ -s "$work/$f" ] || { echo "new_user_walk: the block wrote no $f" >&2; exit 1; }
done

# 2. The report: whole page, and what its first screen (1400 x 900) shows.
[ -n "$browser" ] || { echo "skip: chromium is absent (scripts/setup.sh --with-browser installs it)"; exit 77; }
say "report.html in headless Chromium"
h=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(struct.unpack(">II", d[16:24])[1])' \
    "$work/report.png")
[ "$h" -gt 4000 ] || { echo "new_user_walk: report.png is $h pixels high: not the whole page" >&2; exit 1; }
probe=$work/first-screen.html
{ cat "$work/report.html"
  echo "<script>var t=[];document.querySelectorAll('h1,th,td,p').forEach(function(e){"
  echo "var r=e.getBoundingClientRect();if(r.bottom>0&&r.bottom<=900)t.push(e.textContent)});"
  echo "document.body.setAttribute('data-first-screen',t.join(' | '))</script>"; } >"$probe"
first=$("$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/chrome" \
    --window-size=1400,900 --dump-dom "file://$probe" 2>/dev/null | grep -o 'data-first-screen="[^"]*"' || true)
gpu=$(sed -n 's/.*"gpu":"\([^"]*\)".*/\1/p' "$work/camp/campaign.json")
for want in "$gpu" "simulated on the twin" "seed 1"; do
    case $first in *"$want"*) ;; *)
        echo "new_user_walk: the report's first screen does not show '$want': $first" >&2; exit 1 ;;
    esac
done
scripts_dir=$root/scripts
"$scripts_dir/render_report.sh" "$work/report.html" "$work/first-screen.png" 900 >/dev/null
say "first screen shows GPU $gpu and the data's source; whole page $h pixels ($work/report.png)"

# 3. The Python package (its engineer's script; absent until it lands).
# PS_WALK_NO_PYTHON=1 leaves it out (the test suite's test_python_venv does
# the same venv install; running it twice cost 80 CPU seconds).
if [ "${PS_WALK_NO_PYTHON:-0}" = 1 ]; then
    say "Python: left out (PS_WALK_NO_PYTHON=1)"
elif [ -x "$scripts_dir/new_user_walk_python.sh" ]; then
    say "Python: scripts/new_user_walk_python.sh"
    "$scripts_dir/new_user_walk_python.sh" "$work"
fi
echo "ok: new-user walk in $work"
