#!/bin/sh
# Renders an HTML report of `pairsight report` to a PNG with headless
# Chromium, so that a person (or a reviewer without a browser) can look at it.
# Usage: scripts/render_report.sh REPORT.html [OUT.png] [HEIGHT]
#        (default OUT: REPORT.png; HEIGHT: 4000 pixels, width 1400)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 REPORT.html [OUT.png] [HEIGHT]" >&2; exit 2; }
html=$1
out=${2:-${html%.html}.png}
height=${3:-4000}
[ -f "$html" ] || { echo "$0: no such file: $html" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "$0: chromium not found (scripts/setup.sh --with-browser installs it)" >&2; exit 1; }
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --screenshot="$out" --window-size=1400,"$height" "file://$abs" >/dev/null 2>&1
[ -s "$out" ] || { echo "$0: chromium wrote no image" >&2; exit 1; }
echo "$out"
