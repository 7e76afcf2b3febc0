#!/bin/sh
# Installs the Debian packages pairsight builds and tests with.
# Idempotent: prints nothing and installs nothing when all are present.
# Usage: scripts/setup.sh [--with-browser]   (the browser is for rendering reports)
set -eu

pkgs="cmake make gcc clang clang-format python3 libclang-rt-dev pkg-config libxgboost-dev libsqlite3-dev \
libcjson-dev libopenblas-dev libblas3 liblapack3 binutils zlib1g-dev man-db \
python3-pip python3-setuptools python3-venv python3-numpy python3-pytest python3-xgboost \
python3-torch python3-torchvision libmicrohttpd-dev libgnutls28-dev openssl prometheus"
if [ "${1:-}" = "--with-browser" ]; then
    pkgs="$pkgs chromium"
fi

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "pairsight: installing Debian packages:$missing" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
