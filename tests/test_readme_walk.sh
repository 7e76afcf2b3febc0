#!/bin/sh
# The README's "Using it" block runs top to bottom on a clone, and its
# report shows the GPU and the data's source on its first screen
# (scripts/new_user_walk.sh, issue 29).
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The Python step is test_python_venv.sh (the same venv install).
PS_WALK_NO_PYTHON=1 scripts/new_user_walk.sh "$T/walk"
