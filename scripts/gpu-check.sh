#!/usr/bin/env bash
# gpu-check.sh: the one command a session with a lent GPU runs, over what
# scripts/gpu-prepare.sh built here (carry .gpu):
#
#   1. the backend conformance suite on the GPU          (TestConformance)
#   2. fitness of random populations, GPU against CPU    (TestAgainstCPU)
#   3. a real out-of-memory: the device filled with cuMemAlloc until it
#      fails, the controller halving, results unchanged  (TestRealOOM)
#   4. a staged run with a small chunk budget against a resident one, and
#      the memory model                                 (TestStagedVsResident, TestMemoryModel)
#   5. throughput on the population and the MNIST test set: neateval's
#      evaluation (a Go benchmark, warm) and PyTorch's (bench/torch_ref.py
#      --device cuda --warmup) on the same card, as a ratio; an end-to-end
#      neateval run; and the two fitness files compared genome by genome.
#   6. when compute-sanitizer is there and time is left: memcheck over the
#      hand-checked and every-op conformance cases, racecheck (shared
#      memory) over the hand-checked ones.
#
# The table comes last on stdout. Logs go to $OUT (the device tool brings
# back at most 8 files): summary.txt, tests.log, logs.tar.gz.
#
#   scripts/gpu-check.sh [--dry-run] [--batch N] [--parallel N] [--limit N]
#
# --dry-run checks that everything is in place and prints the commands
# without running them (for a machine without a GPU).
#
# The whole check keeps within GPU_CHECK_BUDGET seconds (default 480): a
# device command may run 600 s at most. Each step's timeout is cut to what
# is left, and steps with under 15 s left are skipped (SKIP in the table).
# Give the device call timeout_s 590.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dry=0 batch=10000 parallel=8 limit=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--dry-run) dry=1; shift ;;
	--batch) batch=$2; shift 2 ;;
	--parallel) parallel=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	*) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
	esac
done

budget=${GPU_CHECK_BUDGET:-480}
g=$root/.gpu
out=${OUT:-$g/out}
work=$(mktemp -d)
mkdir -p "$out"
missing=0
for f in "$g/cuda.test" "$g/neateval" "$g/pop/pop.json" "$g/pop/pop.safetensors" \
	"$g/mnist/t10k-images-idx3-ubyte.gz" "$g/mnist/t10k-labels-idx1-ubyte.gz" bench/torch_ref.py; do
	if [[ ! -f $f ]]; then
		echo "gpu-check: $f is missing: run scripts/gpu-prepare.sh here and carry .gpu" >&2
		missing=1
	fi
done
((missing)) && exit 1
# The driver's libraries (libcuda.so.1, libnvidia-ml.so.1) where the image
# mounts them.
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
	[[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
py=python3
export PYTHONUNBUFFERED=1
# Kernels loaded when the module is, not at their first launch: the real
# out-of-memory test fills the device, and a kernel loaded then would need
# memory that is not there.
export CUDA_MODULE_LOADING=EAGER

declare -a names results details
record() { names+=("$1"); results+=("$2"); details+=("$3"); }

# step NAME TIMEOUT CMD...: runs CMD with its output in $work/NAME.log;
# exit 125 when the budget has no room for it.
step() {
	local name=$1 secs=$2
	shift 2
	if ((!dry)); then
		local left=$((budget - SECONDS))
		if ((left < 15)); then
			echo "== $name: skipped, ${left} s left of the budget" >"$work/$name.log"
			return 125
		fi
		((secs > left)) && secs=$left
	fi
	if ((dry)); then
		printf 'dry-run: %s (timeout %ss):' "$name" "$secs"
		printf ' %q' "$@"
		printf '\n'
		return 0
	fi
	local t0=$SECONDS
	timeout -k 10 "$secs" "$@" >"$work/$name.log" 2>&1
	local rc=$?
	echo "== $name: exit $rc in $((SECONDS - t0)) s" >>"$work/$name.log"
	return $rc
}

# gotest NAME REGEXP: one run of the test binary; PASS/FAIL and the count
# of passed subtests go in the table.
gotest() {
	local name=$1 re=$2
	step "$name" 180 "$g/cuda.test" -test.run "$re" -test.v -test.count=1 -test.timeout=170s
	local rc=$?
	((dry)) && { record "$name" dry "$re"; return; }
	local pass fail
	pass=$(grep -c -- '--- PASS' "$work/$name.log")
	fail=$(grep -c -- '--- FAIL' "$work/$name.log")
	if ((rc == 0)); then
		record "$name" PASS "$pass passed ($re)"
	elif ((rc == 125)); then
		record "$name" SKIP "no time left in the budget"
	else
		record "$name" "FAIL($rc)" "$fail failed, $pass passed; see tests.log"
	fi
	cat "$work/$name.log" >>"$out/tests.log"
}

if ((dry)); then
	echo "gpu-check: dry run; files in place:"
	ls -la "$g" "$g/pop" "$g/mnist"
	cat "$g/MANIFEST" 2>/dev/null
	file "$g/cuda.test" "$g/neateval" 2>/dev/null || true
	$py -m py_compile bench/torch_ref.py && echo "gpu-check: torch_ref.py compiles"
else
	: >"$out/tests.log"
	nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem --format=csv >"$work/gpu.txt" 2>&1
	cat "$work/gpu.txt"
fi

gotest conformance '^TestConformance$'
gotest gpu-vs-cpu '^TestAgainstCPU$'
gotest real-oom '^TestRealOOM$'
gotest staged-vs-resident '^(TestStagedVsResident|TestMemoryModel)$'

# Throughput, per population: neateval warm (the benchmark), then PyTorch.
# bench POP: the two runs; their figures go in the table as a ratio.
bench() {
	local p=$1
	NEATEVAL_BENCH_POP=$g/$p/pop.json NEATEVAL_MNIST_DIR=$g/mnist NEATEVAL_BENCH_BATCH=$batch NEATEVAL_BENCH_PARALLEL=$parallel \
		NEATEVAL_BENCH_LIMIT=$((limit > 0 ? limit : 10000)) step "bench-neateval-$p" 120 "$g/cuda.test" -test.run '^$' -test.bench '^BenchmarkEvaluateMNIST$' -test.benchtime 3x
	local rc_bench=$?
	step "bench-torch-$p" 120 $py bench/torch_ref.py "$g/$p/pop.json" "$g/mnist" --batch "$batch" --device cuda --warmup \
		--limit "$limit" --results "$work/results-torch-$p.jsonl"
	local rc_torch=$?
	if ((dry)); then
		record "throughput-$p" dry "neateval benchmark vs torch_ref.py --device cuda"
		return
	fi
	local ours gflops torch tgflops ratio
	ours=$(grep -o '[0-9.e+]* images·genomes/s' "$work/bench-neateval-$p.log" | tail -1 | cut -d' ' -f1)
	gflops=$(grep -o '[0-9.e+]* GFLOP/s' "$work/bench-neateval-$p.log" | tail -1 | cut -d' ' -f1)
	torch=$($py -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["images_genomes_per_s"])' "$work/bench-torch-$p.log" 2>/dev/null)
	tgflops=$($py -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["gflops"])' "$work/bench-torch-$p.log" 2>/dev/null)
	if ((rc_bench == 125 || rc_torch == 125)); then
		record "throughput-$p" SKIP "no time left in the budget"
	elif [[ -n $ours && -n $torch ]]; then
		ratio=$($py -c "print(f'{$ours/$torch:.2f}')")
		record "throughput-$p" "x$ratio" "neateval $ours img·gen/s ($gflops GFLOP/s) vs PyTorch $torch ($tgflops GFLOP/s), batch $batch, parallel $parallel"
	else
		record "throughput-$p" FAIL "bench exit $rc_bench, torch exit $rc_torch: see logs.tar.gz"
	fi
}
bench pop
bench popw
step run-neateval 90 "$g/neateval" run --backend cuda --population "$g/pop/pop.json" --dataset-kind mnist \
	--dataset-path "$g/mnist" --eval-batch-size "$batch" --fitness-eval-parallel "$parallel" --limit "$limit" \
	--results "$work/results-neateval.jsonl" --log-format json --progress off
rc_run=$?

if ((!dry)); then
	e2e=$(grep -o '"images_genomes_per_s":[0-9.e+]*' "$work/run-neateval.log" | tail -1 | cut -d: -f2)
	if ((rc_run == 125)); then
		record end-to-end SKIP "no time left in the budget"
	else
		record end-to-end "$([[ $rc_run == 0 ]] && echo PASS || echo "FAIL($rc_run)")" "neateval run, wall clock incl. load and JIT: ${e2e:-?} img·gen/s"
	fi
	# The two fitness files, genome by genome.
	if [[ -f $work/results-neateval.jsonl && -f $work/results-torch-pop.jsonl ]]; then
		cmp=$($py - "$work/results-neateval.jsonl" "$work/results-torch-pop.jsonl" <<'PY' 2>&1
import json, sys
def load(p):
    return {r["genome_id"]: r for r in map(json.loads, open(p))}
a, b = load(sys.argv[1]), load(sys.argv[2])
da = dl = 0.0
both = 0
for k, r in a.items():
    s = b.get(k)
    if s is None or r.get("accuracy") is None or s.get("accuracy") is None:
        continue
    both += 1
    da = max(da, abs(r["accuracy"] - s["accuracy"]))
    dl = max(dl, abs(r["loss"] - s["loss"]) / max(abs(s["loss"]), 1e-3))
print(f"{both} genomes: max |Δaccuracy| {da:.5f}, max rel Δloss {dl:.2e}")
PY
)
		cmp=$(tail -n1 <<<"$cmp")
		record "vs-torch-fitness" "$([[ $cmp == *genomes:* ]] && echo info || echo FAIL)" "$cmp"
	else
		record "vs-torch-fitness" "n/a" "a results file is missing (end-to-end or torch failed)"
	fi
fi

# The kernels under compute-sanitizer: out-of-bounds accesses, and races on
# shared memory.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n1)
sanitize() {
	local name=$1 tool=$2 re=$3
	step "$name" 150 "$sanitizer" --tool "$tool" --error-exitcode 99 "$g/cuda.test" -test.run "$re" -test.count=1
	local rc=$?
	if ((dry)); then
		record "$name" dry "$tool: $re"
	elif ((rc == 0)); then
		record "$name" PASS "$tool: no errors ($re)"
	elif ((rc == 125)); then
		record "$name" SKIP "no time left in the budget"
	else
		record "$name" "FAIL($rc)" "$tool: $(grep -m1 -E 'ERROR SUMMARY|Invalid|Race' "$work/$name.log")"
	fi
}
if [[ -n $sanitizer ]] || ((dry)); then
	sanitize memcheck memcheck '^TestConformance$/^(HandChecked|EveryOp)$'
	sanitize racecheck racecheck '^TestConformance$/^(HandChecked|NonFinite)$'
else
	record sanitizer n/a "compute-sanitizer not found"
fi

# The logs travel as one file; the table last.
if ((!dry)); then
	tar -czf "$out/logs.tar.gz" -C "$work" . 2>/dev/null
fi
{
	printf '\n%-20s %-9s %s\n' step result detail
	for i in "${!names[@]}"; do
		printf '%-20s %-9s %s\n' "${names[$i]}" "${results[$i]}" "${details[$i]}"
	done
} | tee "$out/summary.txt"
rm -rf "$work"
for r in "${results[@]}"; do
	[[ $r == FAIL* ]] && exit 1
done
exit 0
