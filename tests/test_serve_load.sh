#!/bin/sh
# pairsight serve under slowloris, oversized extender requests, a reload
# storm and 10,000 mixed requests at once, on loopback and within 60 s:
# /healthz within 100 ms throughout, 0 mismatched fingerprints, 0 crashes,
# RSS within its bound (tests/serve_load.py; bench/serve_soak.sh runs it
# for 30 minutes).
# Usage: sh tests/test_serve_load.sh PAIRSIGHT
CLI=${1:?usage: test_serve_load.sh PAIRSIGHT}
[ -x /usr/bin/python3 ] || { echo "test_serve_load: skipped: /usr/bin/python3 is absent"; exit 77; }
exec /usr/bin/python3 tests/serve_load.py "$CLI"
