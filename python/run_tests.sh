#!/bin/sh
# Runs the Python tests (python/tests) with an interpreter that has numpy:
# $PYTHON if set, else Debian's /usr/bin/python3, else python3 on PATH.
# The tests `go build` neateval into a temporary folder once (or use
# $NEATEVAL_BIN). Extra arguments go to unittest (-v, -k ...).
set -eu
cd "$(dirname "$0")/.."
for py in ${PYTHON:-} /usr/bin/python3 python3; do
	if "$py" -c 'import numpy' 2>/dev/null; then
		exec "$py" -m unittest discover -s python/tests "$@"
	fi
done
echo "run_tests.sh: no python3 with numpy (Debian: apt-get install -y python3 python3-numpy)" >&2
exit 1
