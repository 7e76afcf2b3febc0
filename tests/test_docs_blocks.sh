#!/bin/sh
# Every shell and Python block of every docs/*.md runs as written, in order,
# from a fresh copy of the tree with the built CLI (tests/docs_blocks.py says
# how, and how a doc marks a block that cannot run here and why). Exit 77,
# after running the rest, where a block needs ../shared/data or torch and it
# is absent.
# Usage: sh tests/test_docs_blocks.sh PAIRSIGHT [DOC...]
CLI=${1:?usage: test_docs_blocks.sh PAIRSIGHT [DOC...]}
shift
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
exec "$PY" tests/docs_blocks.py "$CLI" "$@"
