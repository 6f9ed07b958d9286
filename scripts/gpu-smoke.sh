#!/usr/bin/env bash
# gpu-smoke.sh: the first command on a lent GPU, over what
# scripts/gpu-prepare.sh built here (carry .gpu); done in under 90 s:
#
#   gpu        nvidia-smi -L: the card is there
#   smoke      TestSmoke: the modules load (sm_90 cubin, or the PTX through
#              the JIT: which, and how long), each kernel's registers,
#              shared and local memory as the driver reports them; one
#              evaluation against the CPU backend; an impossible cuMemAlloc
#              that must come back as the typed out-of-memory
#   jit        TestJIT: the same modules from the PTX alone, timed
#
# The table comes last; logs in $OUT (smoke.log, summary.txt). Give the
# device call timeout_s 120.
#
#   scripts/gpu-smoke.sh [--dry-run]
#
# --dry-run checks that the binaries are in place and prints the plan.
# GPU_DIR (default .gpu) is where gpu-prepare.sh put them.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/gpu-lib.sh
dry=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--dry-run) dry=1; shift ;;
	*) echo "gpu-smoke: unknown argument $1" >&2; exit 2 ;;
	esac
done
budget=${GPU_SMOKE_BUDGET:-85}
g=${GPU_DIR:-$root/.gpu}
out=${OUT:-$g/out}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
need "$g/cuda.test" || exit 1
driver_libs
export CUDA_MODULE_LOADING=EAGER

step gpu 10 "nvidia-smi -L" nvidia-smi -L
step smoke 45 "modules, one evaluation against the CPU, typed OOM" \
	"$g/cuda.test" -test.run '^TestSmoke$' -test.v -test.count=1 -test.timeout=40s
if ((!dry)); then
	gl_details[-1]="$(module_detail "$work/smoke.log"); $(gotest_detail "$work/smoke.log")"
fi
step jit 25 "the PTX through the JIT, timed" \
	"$g/cuda.test" -test.run '^TestJIT$' -test.v -test.count=1 -test.timeout=20s
if ((!dry)); then
	gl_details[-1]="$(module_detail "$work/jit.log")"
	cat "$work"/*.log >"$out/smoke.log"
fi
table
