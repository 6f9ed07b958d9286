#!/usr/bin/env bash
# ceiling.sh: the machine's fp32 ceiling, measured by OpenBLAS's sgemm on
# 2 threads (bench/ceiling.c). OpenBLAS 0.3.21 does not recognise Zen 4/5
# and falls back to slow kernels unless OPENBLAS_CORETYPE names a core it
# knows; Cooperlake (AVX-512 + BF16) is the closest.
#
# usage: bench/ceiling.sh [n] [repeats]     env: THREADS (2), CORETYPE (Cooperlake)
#
# Without OpenBLAS it installs Debian's libopenblas-dev, unless
# CEILING_NO_INSTALL=1 (as `neateval bench` runs it): then it exits 3 with
# one line on stderr saying what is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${TMPDIR:-/tmp}/neateval-ceiling
if ! command -v cc >/dev/null 2>&1; then
	echo "ceiling.sh: no C compiler (cc) on the PATH" >&2
	exit 3
fi
if ! { pkg-config --exists openblas 2>/dev/null || [ -e /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h ]; }; then
	if [ "${CEILING_NO_INSTALL:-0}" = 1 ]; then
		echo "ceiling.sh: OpenBLAS is not installed (Debian: apt-get install libopenblas-dev)" >&2
		exit 3
	fi
	echo "ceiling.sh: installing libopenblas-dev" >&2
	apt-get install -y -qq libopenblas-dev >&2 || { apt-get update -qq >&2 && apt-get install -y -qq libopenblas-dev >&2; }
fi
if pkg-config --exists openblas 2>/dev/null; then
	flags=$(pkg-config --cflags --libs openblas)
else
	flags="-I/usr/include/x86_64-linux-gnu/openblas-pthread -lopenblas"
fi
# shellcheck disable=SC2086
cc -O2 -o "$out" "$here/ceiling.c" $flags
OPENBLAS_CORETYPE=${CORETYPE:-Cooperlake} OPENBLAS_NUM_THREADS=${THREADS:-2} "$out" "${1:-2048}" "${2:-10}"
