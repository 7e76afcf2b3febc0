#!/bin/sh
# pairsight serve against an attacker and a careless operator (issue 41,
# items 1-9: work per request, slowloris, reloads, replies that must be
# JSON, log lines, memory, HTTP and JSON quirks, pods that are not
# pairsight's): tests/serve_hardening.py, one line per item.
# Usage: sh tests/test_serve_hardening.sh PAIRSIGHT [ITEM...]
CLI=${1:?usage: test_serve_hardening.sh PAIRSIGHT [ITEM...]}
shift
[ -x /usr/bin/python3 ] || { echo "test_serve_hardening: skipped: /usr/bin/python3 is absent"; exit 77; }
exec /usr/bin/python3 tests/serve_hardening.py "$CLI" "$@"
