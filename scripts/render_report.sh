#!/bin/sh
# Renders an HTML report of `pairsight report` to a PNG with headless
# Chromium, so that a person (or a reviewer without a browser) can look at it.
# The whole page is captured: a first pass of Chromium measures the page's
# height (a script added to a copy of the page writes it into the DOM, which
# --dump-dom prints), the second takes the screenshot at that height.
# Usage: scripts/render_report.sh REPORT.html [OUT.png] [HEIGHT]
#        (default OUT: REPORT.png; HEIGHT: the whole page, width 1400;
#         a HEIGHT such as 900 captures only the first screen)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 REPORT.html [OUT.png] [HEIGHT]" >&2; exit 2; }
html=$1
out=${2:-${html%.html}.png}
height=${3:-}
[ -f "$html" ] || { echo "$0: no such file: $html" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "$0: chromium not found (scripts/setup.sh --with-browser installs it)" >&2; exit 1; }
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chrome() {
    "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$tmp/profile" "$@" 2>/dev/null
}
if [ -z "$height" ]; then
    # The copy sits beside the original so that relative links still resolve.
    probe=$(dirname "$abs")/.render-probe-$$.html
    trap 'rm -rf "$tmp" "$probe"' EXIT
    { cat "$abs"
      echo "<script>document.body.setAttribute('data-ps-height',"
      echo "Math.ceil(document.documentElement.scrollHeight))</script>"; } >"$probe"
    height=$(chrome --window-size=1400,1000 --dump-dom "file://$probe" |
        sed -n 's/.*data-ps-height="\([0-9][0-9]*\)".*/\1/p' | head -n 1)
    rm -f "$probe"
    [ -n "$height" ] || { echo "$0: could not measure the page's height" >&2; exit 1; }
fi
chrome --screenshot="$out" --window-size=1400,"$height" "file://$abs" >/dev/null
[ -s "$out" ] || { echo "$0: chromium wrote no image" >&2; exit 1; }
echo "$out"
