#!/usr/bin/env bash
# kernel-resources.sh: the resources of every kernel in the committed
# cubins, one line each (name registers shared local stack), with the
# SHA-256 of the PTX each cubin was assembled from, so that a test can tell
# a cubin older than its PTX. Written to stdout; make kernels keeps it as
# evaluator/cuda/kernels/resources.sm_90.txt.
#
#   scripts/kernel-resources.sh CUOBJDUMP ARCH KERNELS_DIR
set -euo pipefail
cuobjdump=$1 arch=$2 dir=$3
echo "# kernel registers shared_bytes local_bytes stack_bytes (per thread: registers, local, stack; per block: static shared memory, with the 1 KiB the system reserves on sm_80+)"
echo "# $arch, from cuobjdump --dump-resource-usage ($("$cuobjdump" --version | grep -o "release [0-9.]*, V[0-9.]*")) of the cubins (make kernels)"
for m in gemm gemm_tc ops pop; do
	echo "# ptx $m $(sha256sum "$dir/$m.ptx" | cut -d' ' -f1)"
done
for m in gemm gemm_tc ops pop; do
	"$cuobjdump" --dump-resource-usage "$dir/$m.$arch.cubin"
done | awk '
	/Function / { name = $2; sub(":$", "", name) }
	/REG:/ {
		for (i = 1; i <= NF; i++) { split($i, kv, ":"); v[kv[1]] = kv[2] }
		if (name !~ /^_Z/) printf "%s %s %s %s %s\n", name, v["REG"], v["SHARED"], v["LOCAL"], v["STACK"]
	}' | LC_ALL=C sort
