#!/bin/sh
# pairsight serve against real clients on loopback: every endpoint against
# the CLI's output, 30+ malformed requests, token and TLS, reload under
# load, the Kubernetes extender fixtures, promtool and a real Prometheus
# scraping it, and a bounded load test (tests/serve_test.py).
# Usage: sh tests/test_serve.sh PAIRSIGHT
CLI=${1:?usage: test_serve.sh PAIRSIGHT}
[ -x /usr/bin/python3 ] || { echo "test_serve: skipped: /usr/bin/python3 is absent"; exit 77; }
exec /usr/bin/python3 tests/serve_test.py "$CLI"
