package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func needTool(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed", n)
		}
	}
}

// fakeGPUDir makes the files scripts/gpu-prepare.sh builds, empty.
func fakeGPUDir(t *testing.T) string {
	t.Helper()
	g := t.TempDir()
	for _, f := range []string{"cuda.test", "cuda.race.test", "pop/pop.json", "pop/pop.safetensors", "popw/pop.json",
		"mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz"} {
		p := filepath.Join(g, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func run(t *testing.T, gpu string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", args...)
	cmd.Env = append(os.Environ(), "GPU_DIR="+gpu, "OUT="+filepath.Join(t.TempDir(), "out"))
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// TestDryRun runs both scripts' dry runs over the files gpu-prepare.sh
// makes: every step planned, and the table printed.
func TestDryRun(t *testing.T) {
	needTool(t, "bash", "python3", "timeout")
	g := fakeGPUDir(t)
	for script, steps := range map[string][]string{
		"gpu-smoke.sh": {"gpu", "smoke", "jit"},
		"gpu-check.sh": {"facts", "smoke", "conformance", "mnist-vs-cpu", "tf32-vs-cpu", "staged-resident", "real-oom", "memcheck", "race",
			"ceilings", "torch-tf32-on", "torch-tf32-off", "bench-neateval", "bench-tf32", "bench-pop-100", "bench-layer-100"},
	} {
		out, err := run(t, g, script, "--dry-run")
		if err != nil {
			t.Fatalf("%s --dry-run: %v\n%s", script, err, out)
		}
		for _, s := range steps {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s) + ` +PLAN `).MatchString(out) {
				t.Errorf("%s --dry-run: no PLAN row for step %s:\n%s", script, s, out)
			}
		}
	}
}

// TestDryRunMissing: a dry run without the binaries fails and names them.
func TestDryRunMissing(t *testing.T) {
	needTool(t, "bash")
	g := fakeGPUDir(t)
	if err := os.Remove(filepath.Join(g, "cuda.test")); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{"gpu-smoke.sh", "gpu-check.sh"} {
		out, err := run(t, g, script, "--dry-run")
		if err == nil || !strings.Contains(out, "cuda.test is missing") {
			t.Errorf("%s --dry-run without cuda.test: %v\n%s", script, err, out)
		}
	}
}

// TestVerdicts runs real steps through gpu-lib.sh: an exit of 0 passes,
// another fails, a step killed at its timeout is TIMEOUT, one with no
// budget left is SKIP, and the table fails the run only for the FAIL.
func TestVerdicts(t *testing.T) {
	needTool(t, "bash", "timeout", "sleep")
	dir := t.TempDir()
	script := `set -u
source gpu-lib.sh
budget=30 dry=0 work=` + dir + ` out=` + dir + `
step ok 5 fine true
step bad 5 broken false
step slow 1 sleeps sleep 20
budget=0
step late 5 never true
table`
	out, err := exec.Command("bash", "-c", script).CombinedOutput()
	if err == nil {
		t.Errorf("table returned 0 with a failed step:\n%s", out)
	}
	for _, want := range []string{`ok +PASS `, `bad +FAIL\(1\) `, `slow +TIMEOUT +[0-9]+ +killed at its timeout`, `late +SKIP +0 +not started`} {
		if !regexp.MustCompile(`(?m)^` + want).Match(out) {
			t.Errorf("no row %q in:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.txt")); err != nil {
		t.Errorf("no summary.txt: %v", err)
	}
}

// TestModuleDetail: the smoke step's table row names how each module
// loaded, from the test's log lines.
func TestModuleDetail(t *testing.T) {
	needTool(t, "bash", "sed", "paste")
	log := filepath.Join(t.TempDir(), "smoke.log")
	if err := os.WriteFile(log, []byte("=== RUN   TestSmoke\n    smoke_test.go:84: module gemm  sm_90 cubin         12.3 ms \n"+
		"    smoke_test.go:84: module gemm_tc compute_80 PTX   950.0 ms NEATEVAL_CUDA_IMAGE=ptx\n--- PASS: TestSmoke (1.00s)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", "source gpu-lib.sh; module_detail "+log).CombinedOutput()
	want := "module gemm sm_90 cubin 12.3 ms;module gemm_tc compute_80 PTX 950.0 ms NEATEVAL_CUDA_IMAGE=ptx\n"
	if err != nil || string(out) != want {
		t.Errorf("module_detail: %v %q, want %q", err, out, want)
	}
}
