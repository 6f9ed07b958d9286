#!/usr/bin/env bash
# ort-deps.sh: what the ONNX export tests and the onnxruntime peer of
# `neateval bench` need: Node (Debian: nodejs, npm), Debian's python3-onnx
# (the onnx checker) and onnxruntime-node from npm, installed into a cache
# outside the checkout (default ~/.cache/neateval/npm), so that fresh clones
# on the same machine (CI) reuse it.
#
# Idempotent: what is there already is left alone; apt-get runs only for a
# missing part (and needs root then). onnxruntime-node's install script,
# which downloads GPU libraries, is skipped (ONNXRUNTIME_NODE_INSTALL=skip):
# the CPU library is inside the package.
#
#   scripts/ort-deps.sh [CACHE_DIR]     (default: ~/.cache/neateval/npm)
#
# The tests find the package in CACHE_DIR/node_modules, or wherever
# NEATEVAL_ORT_NODE_PATH points.
set -euo pipefail

cache=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/neateval/npm}
version=${ORT_NODE_VERSION:-1.24.3}

apt_missing=()
command -v node >/dev/null || apt_missing+=(nodejs)
command -v npm >/dev/null || apt_missing+=(npm)
/usr/bin/python3 -c 'import onnx' 2>/dev/null || apt_missing+=(python3-onnx)
if ((${#apt_missing[@]})); then
	if [[ $(id -u) != 0 ]]; then
		echo "ort-deps: ${apt_missing[*]} missing; apt-get needs root: run as root or install them yourself" >&2
		exit 1
	fi
	echo "ort-deps: apt-get install ${apt_missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_missing[@]}" >/dev/null
fi

pkg=$cache/node_modules/onnxruntime-node/package.json
if [[ -f $pkg ]] && [[ $(node -p "require('$pkg').version") == "$version" ]]; then
	echo "ort-deps: onnxruntime-node $version cached in $cache"
	exit 0
fi
mkdir -p "$cache"
echo "ort-deps: npm install onnxruntime-node@$version into $cache"
ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "onnxruntime-node@$version"
NODE_PATH=$cache/node_modules node -e 'require("onnxruntime-node")' ||
	{ echo "ort-deps: onnxruntime-node installed but does not load" >&2; exit 1; }
echo "ort-deps: onnxruntime-node $version ready in $cache"
