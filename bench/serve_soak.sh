#!/bin/sh
# The soak of pairsight serve: tests/serve_load.py for MINUTES minutes
# (default 30) instead of 10,000 requests: slowloris, oversized and heavy
# extender requests, a reload storm (files swapped by rename, POST
# /v1/reload, SIGHUP) and four clients of mixed requests, all at once. RSS
# is printed every minute; the run fails when /healthz takes 100 ms or
# more, a reply's fingerprint does not match its predictions, a request
# gets an unexpected status, the server dies, or RSS grows past the bound
# (48 MiB over its level after the warm-up; 320 MiB under ASan).
# Usage: sh bench/serve_soak.sh build/pairsight [MINUTES]
CLI=${1:?usage: bench/serve_soak.sh PAIRSIGHT [MINUTES]}
MIN=${2:-30}
exec /usr/bin/python3 tests/serve_load.py "$CLI" --seconds $((MIN * 60))
