package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// TestMain lets a test run this package's binary as a child process: with
// NEATEVAL_TEST_MAIN=1 the test binary is neateval itself.
func TestMain(m *testing.M) {
	if os.Getenv("NEATEVAL_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// evolveConfig writes a config for a small, fast evolve run on a synthetic
// set in dir, checkpointed after every generation, with extra TOML
// appended to its [evolve] section.
func evolveConfig(t *testing.T, dir string, generations int, extra string) string {
	t.Helper()
	text := fmt.Sprintf(`[dataset]
kind = "synthetic"
synthetic_size = 700
synthetic_seed = 3
[eval]
eval_batch_size = 256
threads = 1
[vram]
memory_bytes = "256MiB"
[output]
log_format = "json"
[evolve]
generations = %d
population_size = 12
val_size = 300
checkpoint_dir = %q
checkpoint_seconds = 0
best = %q
%s
`, generations, filepath.Join(dir, "ck"), filepath.Join(dir, "out", "best.json"), extra)
	path := filepath.Join(dir, "evolve.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// logLines parses JSON log lines and returns those of one event.
func logLines(t *testing.T, log []byte, event string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if m["event"] == event {
			out = append(out, m)
		}
	}
	return out
}

// generationKeys are the fields of a generation line that do not depend on
// timing.
var generationKeys = []string{"gen", "best", "mean", "species", "params", "flops", "nodes", "best_genome",
	"best_ever", "evaluated", "failed", "threshold", "val_sample", "val_batch", "mode", "chunks"}

func TestEvolveSynthetic(t *testing.T) {
	dir := t.TempDir()
	// The linear minimal genomes learn the synthetic classes within a few
	// generations; the default search's ES needs more generations than
	// this test's 8 (run/evolve_search_test.go holds it to beating the
	// old search on MNIST).
	cfg := evolveConfig(t, dir, 8, `init = "minimal"`)
	var stdout, stderr bytes.Buffer
	if err := runMain(context.Background(), []string{"evolve", "--config", cfg}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	gens := logLines(t, stderr.Bytes(), run.EventGeneration)
	if len(gens) != 8 {
		t.Fatalf("%d generation lines, want 8", len(gens))
	}
	plans := logLines(t, stderr.Bytes(), "plan")
	if len(plans) < 8 {
		t.Errorf("%d plan lines for 8 generations", len(plans))
	}
	prev := math.Inf(-1)
	for i, g := range gens {
		for _, k := range generationKeys {
			if _, ok := g[k]; !ok {
				t.Fatalf("generation line %d lacks %q: %v", i, k, g)
			}
		}
		if g["gen"].(float64) != float64(i) {
			t.Errorf("line %d is generation %v", i, g["gen"])
		}
		best := g["best_ever"].(float64) // a generation's best may fall: each is scored on its own sample
		if best < prev {
			t.Errorf("generation %d: best_ever fell from %v to %v", i, prev, best)
		}
		prev = best
	}
	done := logLines(t, stderr.Bytes(), run.EventEvolveDone)
	if len(done) != 1 {
		t.Fatalf("%d evolve_done lines", len(done))
	}
	d := done[0]
	t.Logf("best genome %v: validation accuracy %v, test accuracy %v", d["best_genome"], d["val_accuracy"], d["test_accuracy"])
	// Chance is 0.1; a linear read of the pooled image learns the
	// synthetic classes within a few generations.
	if acc := d["test_accuracy"].(float64); acc < 0.2 || d["val_accuracy"].(float64) < 0.2 {
		t.Errorf("best genome: validation accuracy %v, test accuracy %v: not above chance", d["val_accuracy"], acc)
	}
	if int(d["test_images"].(float64)) != 400 {
		t.Errorf("test images %v, want the 400 not drawn for validation", d["test_images"])
	}
	pop, err := neat.Load(filepath.Join(dir, "out", "best.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pop.Genomes) != 1 || float64(pop.Genomes[0].ID) != d["best_genome"].(float64) {
		t.Fatalf("best.json holds %d genomes, first %d; evolve_done says %v", len(pop.Genomes), pop.Genomes[0].ID, d["best_genome"])
	}
	if _, err := neat.Compile(pop.Genomes[0], pop.Input, pop.NumClasses); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "best genome ") {
		t.Errorf("stdout %q", stdout.String())
	}

	// The checkpoint is there: a second run refuses it without --resume,
	// refuses another configuration with --resume, and continues it when
	// asked for more generations.
	err = runMain(context.Background(), []string{"evolve", "--config", cfg}, io.Discard, io.Discard)
	if exitCode(err) != exitUsage || !strings.Contains(message(err), "holds a checkpoint; pass --resume") {
		t.Errorf("second run without --resume: %v", err)
	}
	cfg2 := evolveConfig(t, dir, 8, "init = \"minimal\"\nseed = 2\np_add_conv = 0.5") // the same folders
	err = runMain(context.Background(), []string{"evolve", "--config", cfg2, "--resume"}, io.Discard, io.Discard)
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "evolve.seed was 1, now 2; evolve.p_add_conv was 0.15, now 0.5") {
		t.Errorf("resume under another config: %v", err)
	}
	evolveConfig(t, dir, 8, `init = "minimal"`) // back to the first
	stderr.Reset()
	if err := runMain(context.Background(), []string{"evolve", "--config", cfg, "--resume", "--generations", "10"}, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	more := logLines(t, stderr.Bytes(), run.EventGeneration)
	if len(more) != 2 || more[0]["gen"].(float64) != 8 {
		t.Errorf("resumed for 10 generations: %d lines, first %v", len(more), more)
	}
}

func TestEvolveFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"evolve", "--generations", "0"}, "flag --generations: evolve.generations = 0: must be ≥ 1"},
		{[]string{"evolve", "--population", "x"}, "evolve: flag provided but not defined: -population (see neateval help evolve)"},
		{[]string{"evolve", "extra"}, `evolve: unexpected argument "extra" (see neateval help evolve)`},
	}
	for _, tt := range tests {
		err := runMain(context.Background(), tt.args, io.Discard, io.Discard)
		if err == nil || err.Error() != tt.want || exitCode(err) != exitUsage {
			t.Errorf("%v: %v (exit %d), want %q", tt.args, err, exitCode(err), tt.want)
		}
	}
	var out bytes.Buffer
	if err := runMain(context.Background(), []string{"help", "evolve"}, &out, io.Discard); err != nil || !strings.Contains(out.String(), "-resume") {
		t.Errorf("help evolve: %v\n%s", err, out.String())
	}
}

// runChild runs neateval (this test binary as main) with args and returns
// its stderr; kill, when not nil, is called with each stderr line and
// kills the process (SIGKILL) when it returns true.
func runChild(t *testing.T, kill func(line []byte) bool, args ...string) (stderr []byte, killed bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "NEATEVAL_TEST_MAIN=1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		buf.Write(sc.Bytes())
		buf.WriteByte('\n')
		if kill != nil && !killed && kill(sc.Bytes()) {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if killed {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("killed child: %v\n%s", err, buf.String())
		}
	} else if err != nil {
		t.Fatalf("child: %v\n%s", err, buf.String())
	}
	return buf.Bytes(), killed
}

// TestEvolveResumeAfterKill kills a real neateval process with SIGKILL in
// the middle of a run, resumes it, and holds the result to the run that
// was never interrupted: the same checkpoint files, the same best genome
// file, and the same generation lines (those of the killed process and of
// the resumed one together).
func TestEvolveResumeAfterKill(t *testing.T) {
	t.Run("fixed sample", func(t *testing.T) { testResumeAfterKill(t, "") })
	// The sample grows from 100 to 250 images over the 12 generations: a
	// resumed run must draw each generation's images as the uninterrupted
	// one did.
	t.Run("growing sample", func(t *testing.T) {
		testResumeAfterKill(t, "val_batch = 100\nval_batch_final = 250\nes_anneal = 12")
	})
}

func testResumeAfterKill(t *testing.T, extra string) {
	const gens = 12
	whole := t.TempDir()
	wholeLog, _ := runChild(t, nil, "evolve", "--config", evolveConfig(t, whole, gens, extra))

	cut := t.TempDir()
	cfg := evolveConfig(t, cut, gens, extra)
	killedLog, killed := runChild(t, func(line []byte) bool {
		return bytes.Contains(line, []byte(`"event":"generation"`)) && bytes.Contains(line, []byte(`"resume_at":4,`))
	}, "evolve", "--config", cfg)
	if !killed || len(logLines(t, killedLog, run.EventEvolveDone)) != 0 {
		t.Fatalf("the run was not killed mid-run (killed %v)", killed)
	}
	resumedLog, _ := runChild(t, nil, "evolve", "--config", cfg, "--resume")
	res := logLines(t, resumedLog, run.EventResume)
	if len(res) != 1 || res[0]["generation"].(float64) < 4 {
		t.Fatalf("resume lines %v: want to resume at generation 4 or later", res)
	}

	want := logLines(t, wholeLog, run.EventGeneration)
	got := map[float64]map[string]any{}
	for _, g := range append(logLines(t, killedLog, run.EventGeneration), logLines(t, resumedLog, run.EventGeneration)...) {
		if prev, dup := got[g["gen"].(float64)]; dup {
			for _, k := range generationKeys {
				if fmt.Sprint(prev[k]) != fmt.Sprint(g[k]) {
					t.Errorf("generation %v logged twice with %s %v and %v", g["gen"], k, prev[k], g[k])
				}
			}
		}
		got[g["gen"].(float64)] = g
	}
	if len(want) != gens || len(got) != gens {
		t.Fatalf("%d generation lines uninterrupted, %d killed + resumed; want %d", len(want), len(got), gens)
	}
	for _, w := range want {
		g := got[w["gen"].(float64)]
		for _, k := range generationKeys {
			if fmt.Sprint(w[k]) != fmt.Sprint(g[k]) {
				t.Errorf("generation %v: %s %v uninterrupted, %v killed and resumed", w["gen"], k, w[k], g[k])
			}
		}
	}
	for _, f := range []string{"ck/state.json", "out/best.json", "out/best.safetensors"} {
		a, err1 := os.ReadFile(filepath.Join(whole, f))
		b, err2 := os.ReadFile(filepath.Join(cut, f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the uninterrupted and the resumed run (%v, %v)", f, err1, err2)
		}
	}
	wd, rd := logLines(t, wholeLog, run.EventEvolveDone), logLines(t, resumedLog, run.EventEvolveDone)
	for _, k := range []string{"best_genome", "best", "val_accuracy", "test_accuracy", "test_loss", "params"} {
		if fmt.Sprint(wd[0][k]) != fmt.Sprint(rd[0][k]) {
			t.Errorf("evolve_done %s: %v uninterrupted, %v resumed", k, wd[0][k], rd[0][k])
		}
	}
}

// TestEvolveInterrupted: a cancelled run (SIGINT, SIGTERM) exits 130 and
// says how to continue.
func TestEvolveInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := runMain(ctx, []string{"evolve", "--config", evolveConfig(t, dir, 3, "")}, io.Discard, io.Discard)
	if exitCode(err) != exitInterrupted || !strings.Contains(message(err), "resumes at generation 0; run again with --resume") {
		t.Errorf("cancelled run: %v (exit %d)", err, exitCode(err))
	}
}
