#!/usr/bin/env bash
# cuda-deps.sh: put cuda.h (and the headers it includes) and the stub
# libcuda.so under .cache/cuda/{include,lib}, from Debian's nvidia-cuda-dev
# package (component non-free), so that the cuda-tagged packages compile and
# link on a machine without the NVIDIA driver (CI). Nothing built against
# the stub runs there: the stub only satisfies the linker; the real
# libcuda.so.1 comes with the driver on a GPU machine.
#
# Idempotent and cached: when both files are present it does nothing. The
# cache is outside the checkout (default ~/.cache/neateval/cuda), so that
# fresh clones on the same machine (CI) reuse it. Runs
# as root (apt-get); it adds the contrib, non-free and non-free-firmware
# components to an apt sources file of its own when no source has non-free.
#
#   scripts/cuda-deps.sh [CACHE_DIR]     (default: ~/.cache/neateval/cuda)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${1:-${XDG_CACHE_HOME:-${HOME:-$root}/.cache}/neateval/cuda}
inc=$cache/include
lib=$cache/lib

if [[ -f $inc/cuda.h && -e $lib/libcuda.so ]]; then
	echo "cuda-deps: cached in $cache"
	exit 0
fi

need_root() {
	if [[ $(id -u) != 0 ]]; then
		echo "cuda-deps: $1 needs root (apt-get); run as root or put cuda.h and libcuda.so in $cache yourself" >&2
		exit 1
	fi
}

# The non-free component: Debian's deb822 sources (debian.sources) list the
# suites; a second file of ours repeats its URIs and suites with the other
# components. Host names are read from the existing file, never written
# here.
add_nonfree() {
	local list=/etc/apt/sources.list.d/neateval-nonfree.sources
	if grep -rqsE '^[^#]*(Components:.*|deb .*)\bnon-free\b' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
		return 0
	fi
	local src=/etc/apt/sources.list.d/debian.sources
	if [[ ! -f $src ]]; then
		echo "cuda-deps: no $src to take the Debian mirror from; add the non-free component to your apt sources" >&2
		exit 1
	fi
	# Copy each stanza whose Components has main, with the components
	# replaced. Comments are dropped.
	awk '
		/^[[:space:]]*#/ { next }
		/^[[:space:]]*$/ { if (st != "") print st "\n"; st = ""; next }
		/^Components:/ { st = st "Components: contrib non-free non-free-firmware\n"; next }
		{ st = st $0 "\n" }
		END { if (st != "") print st }
	' "$src" >"$list.tmp"
	mv "$list.tmp" "$list"
	echo "cuda-deps: added $list (contrib non-free non-free-firmware)"
	updated=0
}

updated=1
need_root "fetching nvidia-cuda-dev"
add_nonfree
if [[ $updated == 0 ]] || ! apt-cache show nvidia-cuda-dev >/dev/null 2>&1; then
	apt-get update -qq
fi

work=$(mktemp -d)
# apt-get download writes as the _apt user where it exists.
if id _apt >/dev/null 2>&1; then
	chown _apt "$work"
fi
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -qq nvidia-cuda-dev)
deb=$(ls "$work"/nvidia-cuda-dev_*.deb)
dpkg -x "$deb" "$work/x"

# cuda.h includes only <stdlib.h> and <stdint.h>; cudaTypedefs.h and the
# other driver headers come along in case a later file wants them.
hdr=$(find "$work/x" -name cuda.h -path '*include*' | head -n1)
stub=$(find "$work/x" -name libcuda.so -path '*stubs*' | head -n1)
if [[ -z $hdr || -z $stub ]]; then
	echo "cuda-deps: $deb has no cuda.h or stubs/libcuda.so" >&2
	exit 1
fi
mkdir -p "$inc" "$lib"
hdir=$(dirname "$hdr")
for h in cuda.h cudaTypedefs.h cudaProfilerTypedefs.h; do
	if [[ -f $hdir/$h ]]; then
		cp "$hdir/$h" "$inc/"
	fi
done
cp "$stub" "$lib/libcuda.so"
# What was taken, for the log and for the next run's reader.
dpkg-deb -f "$deb" Package Version >"$cache/SOURCE"
echo "cuda-deps: $(tr '\n' ' ' <"$cache/SOURCE")-> $cache"
