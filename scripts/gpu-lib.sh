# gpu-lib.sh: what scripts/gpu-smoke.sh and scripts/gpu-check.sh share, to
# be sourced: steps with their own timeouts inside one budget of seconds,
# each one's result recorded, and the table printed last.
#
# Results: PASS (exit 0), FAIL(rc) (any other exit), TIMEOUT (killed at its
# timeout, exit 124 or 137: the step ran out of time, which says nothing of
# its correctness), SKIP (not started: under GPU_MIN_STEP seconds left of
# the budget, or a tool missing), INFO (a step that measures and does not
# judge), PLAN (--dry-run: printed, not run).
#
# The caller sets: budget (seconds), dry (0 or 1), work (a folder for the
# steps' logs), out (where summary.txt goes), and may set GPU_MIN_STEP
# (default 10).

declare -a gl_names=() gl_results=() gl_secs=() gl_details=()

# record NAME RESULT SECONDS DETAIL
record() {
	gl_names+=("$1")
	gl_results+=("$2")
	gl_secs+=("$3")
	gl_details+=("$4")
}

# budget_left: seconds of the budget not yet spent.
budget_left() { echo $((budget - SECONDS)); }

# run_step NAME TIMEOUT CMD...: runs CMD with its output in $work/NAME.log,
# killed after TIMEOUT seconds or when the budget ends, whichever is first;
# sets step_rc (125 when not started for lack of time) and step_secs, and
# returns step_rc. Under --dry-run it prints the command and returns 0.
run_step() {
	local name=$1 secs=$2
	shift 2
	step_secs=0
	if ((dry)); then
		printf 'plan: %-20s timeout %4ss:' "$name" "$secs"
		printf ' %q' "$@"
		printf '\n'
		step_rc=0
		return 0
	fi
	local left
	left=$(budget_left)
	if ((left < ${GPU_MIN_STEP:-10})); then
		echo "== $name: not started, ${left} s left of the budget" >"$work/$name.log"
		step_rc=125
		return 125
	fi
	((secs > left)) && secs=$left
	local t0=$SECONDS
	echo "== $name: $* (timeout ${secs} s)" >"$work/$name.log"
	timeout -k 5 "$secs" "$@" >>"$work/$name.log" 2>&1
	step_rc=$?
	step_secs=$((SECONDS - t0))
	echo "== $name: exit $step_rc in $step_secs s" >>"$work/$name.log"
	return $step_rc
}

# verdict RC: the result word for a step's exit status.
verdict() {
	case $1 in
	0) echo PASS ;;
	124 | 137) echo TIMEOUT ;;
	125) echo SKIP ;;
	*) echo "FAIL($1)" ;;
	esac
}

# step NAME TIMEOUT DETAIL CMD...: run_step, then record its verdict with
# DETAIL (under --dry-run, PLAN).
step() {
	local name=$1 secs=$2 detail=$3
	shift 3
	run_step "$name" "$secs" "$@"
	if ((dry)); then
		record "$name" PLAN 0 "$detail"
		return 0
	fi
	local r
	r=$(verdict "$step_rc")
	[[ $r == SKIP ]] && detail="not started: no time left in the budget"
	[[ $r == TIMEOUT ]] && detail="killed at its timeout; $detail"
	record "$name" "$r" "$step_secs" "$detail"
	return $step_rc
}

# table: the results, last on stdout and in $out/summary.txt; returns 1
# when a step failed (TIMEOUT and SKIP do not fail the run).
table() {
	{
		printf '\n%-20s %-9s %5s  %s\n' step result secs detail
		local i
		for i in "${!gl_names[@]}"; do
			printf '%-20s %-9s %5s  %s\n' "${gl_names[$i]}" "${gl_results[$i]}" "${gl_secs[$i]}" "${gl_details[$i]}"
		done
		printf 'total %d s of a %d s budget\n' "$SECONDS" "$budget"
	} | tee "$out/summary.txt"
	local r
	for r in "${gl_results[@]}"; do
		[[ $r == FAIL* ]] && return 1
	done
	return 0
}

# need FILE...: under --dry-run and for real, every file must be there.
need() {
	local f missing=0
	for f in "$@"; do
		if [[ ! -e $f ]]; then
			echo "gpu: $f is missing: run scripts/gpu-prepare.sh here and carry .gpu" >&2
			missing=1
		fi
	done
	return $missing
}

# driver_libs puts the driver's libraries (libcuda.so.1, libnvidia-ml.so.1)
# on the loader's path where the device image mounts them.
driver_libs() {
	local d
	for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
		[[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	done
	return 0
}

# gotest_detail LOG: "N passed" and, when some failed, their names.
gotest_detail() {
	local pass fail
	pass=$(grep -c -- '--- PASS' "$1" 2>/dev/null)
	fail=$(grep -- '--- FAIL' "$1" 2>/dev/null | awk '{print $3}' | tr '\n' ' ')
	echo "${pass:-0} passed${fail:+; failed: $fail}"
}

# module_detail LOG: how each module loaded and in how long, from the
# tests' "module NAME IMAGE N ms" lines, on one line.
module_detail() {
	grep -E 'module [a-z_]+ ' "$1" 2>/dev/null | sed -E 's/.*module /module /; s/ +/ /g; s/ $//' | paste -sd';' -
}
