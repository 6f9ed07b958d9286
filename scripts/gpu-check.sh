#!/usr/bin/env bash
# gpu-check.sh: the full check on a lent GPU, over what
# scripts/gpu-prepare.sh built here (carry .gpu), in at most
# GPU_CHECK_BUDGET seconds (default 290; give the device call timeout_s
# 330). The steps, most telling first:
#
#   facts            nvidia-smi -q: the card, driver, clocks, power, ECC, MIG
#   smoke            TestSmoke: modules (cubin or JIT, timed), one evaluation
#                    against the CPU backend, an impossible cuMemAlloc as the
#                    typed out-of-memory
#   conformance      TestConformance: the backend conformance suite,
#                    TestPopulationPath: the population kernels' stats equal
#                    the per-layer kernels' bit for bit, and TestFusedPools:
#                    the pools fused into convolutions equal the separate
#                    pools bit for bit (fp32, bf16, tf32), and
#                    TestPopLargeFrames: population blocks beyond 48 KiB
#   mnist-vs-cpu     TestMNISTAgainstCPU: both check populations (small and
#                    wide preset) on the MNIST test images, CUDA against the
#                    CPU backend genome by genome (pass/fail)
#   tf32-vs-cpu      TestTF32AgainstCPU: compute precision "tf32" (the
#                    tensor-core kernels) within its tolerance of the CPU
#   staged-resident  TestStagedVsResident and TestMemoryModel
#   real-oom         TestRealOOM, and TestRealOOMPopulation: the card filled
#                    to its limit, the full small population evaluated with
#                    DefaultParallel forwards, the batch controller halving,
#                    results the CPU backend's
#   memcheck         compute-sanitizer memcheck over TestSmoke
#   race             the race-enabled test binary over TestSmoke and
#                    TestStagedVsResident
#   ceilings         copy bandwidth and 8192³ products (fp32, tf32, bf16)
#                    through PyTorch (scripts/gpu_ceilings.py)
#   torch-tf32-on    PyTorch (bench/torch_ref.py) on the small population,
#   torch-tf32-off   TF32 on and off (scripts/torch_tf32.py), fitness compared
#   bench-neateval   neateval's throughput on the same population and
#   bench-tf32       images, in fp32 and in tf32
#   bench-pop-100    the same at 100 images: the population path by its
#   bench-layer-100  default rule, then off (NEATEVAL_CUDA_POPULATION)
#
# Each step has its own timeout, cut to what is left of the budget; a step
# killed at its timeout is TIMEOUT (not FAIL), one with under 10 s left is
# SKIP. The table comes last on stdout and in $OUT/summary.txt; the logs in
# $OUT/logs.tar.gz.
#
#   scripts/gpu-check.sh [--dry-run] [--images N] [--batch N]
#
# --dry-run checks that everything is in place and prints the plan without
# running it (for a machine without a GPU). GPU_DIR (default .gpu) is where
# gpu-prepare.sh put the binaries and the data.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source scripts/gpu-lib.sh
dry=0 images=2000 batch=2000
while [[ $# -gt 0 ]]; do
	case $1 in
	--dry-run) dry=1; shift ;;
	--images) images=$2; shift 2 ;;
	--batch) batch=$2; shift 2 ;;
	*) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
	esac
done
budget=${GPU_CHECK_BUDGET:-290}
g=${GPU_DIR:-$root/.gpu}
out=${OUT:-$g/out}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
need "$g/cuda.test" "$g/cuda.race.test" "$g/pop/pop.json" "$g/pop/pop.safetensors" "$g/popw/pop.json" \
	"$g/mnist/t10k-images-idx3-ubyte.gz" "$g/mnist/t10k-labels-idx1-ubyte.gz" \
	bench/torch_ref.py scripts/torch_tf32.py scripts/gpu_ceilings.py || exit 1
if ((dry)); then
	cat "$g/MANIFEST" 2>/dev/null
	python3 -m py_compile bench/torch_ref.py scripts/torch_tf32.py scripts/gpu_ceilings.py || exit 1
fi
driver_libs
py=python3
export PYTHONUNBUFFERED=1
# Kernels loaded with their module, not at their first launch: the real
# out-of-memory test fills the card, and a kernel loaded then would need
# memory that is not there.
export CUDA_MODULE_LOADING=EAGER
export NEATEVAL_CHECK_POPS=$g/pop/pop.json,$g/popw/pop.json NEATEVAL_MNIST_DIR=$g/mnist NEATEVAL_CHECK_IMAGES=$images
t=$g/cuda.test

# gotest NAME TIMEOUT REGEXP [BINARY]: a run of the test binary.
gotest() {
	local name=$1 secs=$2 re=$3 bin=${4:-$t}
	step "$name" "$secs" "$re" "$bin" -test.run "$re" -test.v -test.count=1 -test.timeout="$((secs - 5))s"
	if ((!dry)) && [[ ${gl_results[-1]} != SKIP ]]; then
		gl_details[-1]="$(gotest_detail "$work/$name.log") ($re)"
	fi
}

step facts 10 "nvidia-smi -q" nvidia-smi -q
if ((!dry)) && [[ -f $work/facts.log ]]; then
	gl_results[-1]=INFO
	gl_details[-1]=$(grep -m12 -E '^\s*(Product Name|Driver Version|CUDA Version|Total|Persistence Mode|Compute Mode|Current *:|Pending *:|Max Power Limit|Current Power Limit| SM  +:|Memory  +:)' "$work/facts.log" |
		sed -E 's/^ +//; s/ +: /=/; s/ +/ /g' | paste -sd';' -)
fi
gotest smoke 45 '^TestSmoke$'
((dry)) || gl_details[-1]="$(module_detail "$work/smoke.log"); ${gl_details[-1]}"
gotest conformance 40 '^(TestConformance|TestPopulationPath|TestFusedPools|TestPopLargeFrames)$'
gotest mnist-vs-cpu 80 '^TestMNISTAgainstCPU$'
gotest tf32-vs-cpu 30 '^TestTF32AgainstCPU$'
gotest staged-resident 30 '^(TestStagedVsResident|TestMemoryModel)$'
gotest real-oom 45 '^(TestRealOOM|TestRealOOMPopulation)$'

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n1)
if [[ -n $sanitizer ]] || ((dry)); then
	step memcheck 60 "compute-sanitizer memcheck, TestSmoke" "${sanitizer:-compute-sanitizer}" --tool memcheck --error-exitcode 99 \
		"$t" -test.run '^TestSmoke$' -test.count=1
	if ((!dry)) && [[ ${gl_results[-1]} == FAIL* ]]; then
		gl_details[-1]=$(grep -m1 -E 'ERROR SUMMARY|Invalid|Device not supported' "$work/memcheck.log")
	fi
else
	record memcheck SKIP 0 "compute-sanitizer not found"
fi
gotest race 45 '^(TestSmoke|TestStagedVsResident)$' "$g/cuda.race.test"

step ceilings 25 "copy bandwidth, 8192³ products" $py scripts/gpu_ceilings.py
((dry)) || [[ ${gl_results[-1]} != PASS ]] || { gl_results[-1]=INFO; gl_details[-1]=$(grep -E '^(copy|matmul)' "$work/ceilings.log" | paste -sd';' -); }

# PyTorch on the same card and images, TF32 on and off.
for mode in on off; do
	step "torch-tf32-$mode" 40 "bench/torch_ref.py, TF32 $mode" $py scripts/torch_tf32.py "$mode" "$g/pop/pop.json" "$g/mnist" \
		--batch "$batch" --device cuda --warmup --limit "$images" --results "$work/torch-$mode.jsonl"
	if ((!dry)) && [[ ${gl_results[-1]} == PASS ]]; then
		gl_results[-1]=INFO
		gl_details[-1]=$(tail -n1 "$work/torch-tf32-$mode.log" | $py -c 'import json,sys; r=json.loads(sys.stdin.read()); print(f"{r[\"images_genomes_per_s\"]} img·gen/s, {r[\"gflops\"]} GFLOP/s")' 2>&1)
	fi
done
if ((!dry)) && [[ -f $work/torch-on.jsonl && -f $work/torch-off.jsonl ]]; then
	cmp=$($py - "$work/torch-on.jsonl" "$work/torch-off.jsonl" <<'PY' 2>&1
import json, sys
a, b = ({r["genome_id"]: r for r in map(json.loads, open(p))} for p in sys.argv[1:3])
da = dl = 0.0
n = 0
for k, r in a.items():
    s = b.get(k)
    if s and r.get("accuracy") is not None and s.get("accuracy") is not None:
        n += 1
        da = max(da, abs(r["accuracy"] - s["accuracy"]))
        dl = max(dl, abs(r["loss"] - s["loss"]) / max(abs(s["loss"]), 1e-3))
print(f"{n} genomes: max |Δaccuracy| {da:.5f}, max rel Δloss {dl:.2e} (TF32 on vs off)")
PY
)
	record torch-tf32-delta INFO 0 "$(tail -n1 <<<"$cmp")"
fi

# neateval on the same population and images, fp32 then tf32.
for prec in fp32 tf32; do
	name=bench-neateval
	[[ $prec == tf32 ]] && name=bench-tf32
	NEATEVAL_BENCH_POP=$g/pop/pop.json NEATEVAL_BENCH_BATCH=$batch NEATEVAL_BENCH_LIMIT=$images NEATEVAL_BENCH_PARALLEL=4 NEATEVAL_BENCH_PRECISION=$prec \
		step "$name" 40 "BenchmarkEvaluateMNIST, small population, $prec" "$t" -test.run '^$' -test.bench '^BenchmarkEvaluateMNIST$' -test.benchtime 3x
	if ((!dry)) && [[ ${gl_results[-1]} == PASS ]]; then
		gl_results[-1]=INFO
		gl_details[-1]="$prec: $(grep -o '[0-9.e+]* images·genomes/s' "$work/$name.log" | tail -1), $(grep -o '[0-9.e+]* GFLOP/s' "$work/$name.log" | tail -1), $(grep -o '[0-9.e+]* device-ms/op' "$work/$name.log" | tail -1) (model: docs/gpu-performance-model.md, 2000 × 2000 rows)"
	fi
done

# The population path against the per-layer path on a small validation set
# (100 images, where launches bound the per-layer path): the default rule,
# then the path off. Results are the same either way (TestPopulationPath).
for mode in default off; do
	name=bench-pop-100
	[[ $mode == off ]] && name=bench-layer-100
	NEATEVAL_CUDA_POPULATION=$mode NEATEVAL_BENCH_POP=$g/pop/pop.json NEATEVAL_BENCH_BATCH=100 NEATEVAL_BENCH_LIMIT=100 NEATEVAL_BENCH_PARALLEL=16 NEATEVAL_BENCH_PRECISION=fp32 \
		step "$name" 25 "BenchmarkEvaluateMNIST, small population, 100 images, population path $mode" "$t" -test.run '^$' -test.bench '^BenchmarkEvaluateMNIST$' -test.benchtime 3x
	if ((!dry)) && [[ ${gl_results[-1]} == PASS ]]; then
		gl_results[-1]=INFO
		gl_details[-1]="population path $mode: $(grep -o '[0-9.e+]* images·genomes/s' "$work/$name.log" | tail -1), $(grep -o '[0-9.e+]* device-ms/op' "$work/$name.log" | tail -1) (model: docs/gpu-performance-model.md, 100 × 100 rows)"
	fi
done

if ((!dry)); then
	cat "$work"/*.log >"$out/tests.log"
	tar -czf "$out/logs.tar.gz" -C "$work" . 2>/dev/null
fi
table
