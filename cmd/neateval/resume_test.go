package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNeatevalProcess is not a test: it is the neateval binary, for tests
// that need a real process (to kill it). neatevalCmd runs this test binary
// with NEATEVAL_PROCESS=1, only this function, and neateval's arguments
// after "--"; it then runs main, which exits.
func TestNeatevalProcess(t *testing.T) {
	if os.Getenv("NEATEVAL_PROCESS") != "1" {
		return
	}
	os.Args = append([]string{"neateval"}, flag.Args()...)
	main()
}

// neatevalCmd is `neateval args...` as a separate process, in dir, its
// output going to dir/<name>.out.
func neatevalCmd(t *testing.T, dir, name string, args ...string) (*exec.Cmd, *os.File) {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestNeatevalProcess$", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NEATEVAL_PROCESS=1")
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, out
}

// runNeateval runs neateval to the end and returns its exit code and
// output.
func runNeateval(t *testing.T, dir, name string, args ...string) (int, string) {
	t.Helper()
	cmd, out := neatevalCmd(t, dir, name, args...)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", name, err)
	}
	text, _ := os.ReadFile(out.Name())
	return cmd.ProcessState.ExitCode(), string(text)
}

// resumeConfig is a run of 48 generated genomes on 800 synthetic images,
// staged in chunks of 64 KiB of weights (one to three genomes each, some
// alone and oversize), with prefetch and two forwards in flight: a few
// seconds of work, its results appended chunk by chunk.
const resumeConfig = `
[population]
generate_size = 48
generate_seed = %d
[dataset]
kind = "synthetic"
synthetic_size = 800
synthetic_seed = 3
[eval]
eval_batch_size = 400
fitness_eval_parallel = 2
threads = 2
[vram]
memory_bytes = "256MiB"
adaptive_population_vram = false
population_gpu_chunk_bytes = "64KiB"
prefetch = true
[output]
results = %q
log_format = "json"
log_level = "info"
progress = "off"
`

// lineCount is the number of newline-terminated lines in a file (0 when it
// does not exist yet).
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// withoutSeconds decodes the lines of a results file with each line's
// "seconds" removed: the fields left are compared byte for byte, as
// written.
func withoutSeconds(t *testing.T, path string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		if _, ok := m["seconds"]; !ok {
			t.Fatalf("%s line %d has no seconds", path, i+1)
		}
		delete(m, "seconds")
		fields := map[string]string{}
		for k, v := range m {
			fields[k] = string(v)
		}
		out = append(out, fields)
	}
	return out
}

// TestKillAndResume kills a real `neateval run` with SIGKILL part way, runs
// `neateval run --resume` to the end, and compares the results file with
// the one of a run that was never interrupted: the same lines in the same
// order, every field the same byte for byte (run id, genome id, index,
// fitness, accuracy, loss, images, error, params, flops) but "seconds",
// the wall time of the genome's forwards, which differs from run to run.
// The resumed run scores only the genomes whose lines were missing. A
// results file of another population is then refused, and left as it is.
func TestKillAndResume(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL")
	}
	const genomes = 48
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.jsonl")
	killed := filepath.Join(dir, "killed.jsonl")
	wholeCfg := writeConfig(t, fmt.Sprintf(resumeConfig, 1, whole))
	killedCfg := writeConfig(t, fmt.Sprintf(resumeConfig, 1, killed))

	if code, out := runNeateval(t, dir, "whole", "run", "--config", wholeCfg); code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", code, out)
	}

	// The run to kill: once a fifth of the genomes have their lines (and
	// before all have), SIGKILL.
	cmd, out := neatevalCmd(t, dir, "killed", "run", "--config", killedCfg)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for n := lineCount(killed); n < genomes/5; n = lineCount(killed) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no results after 2 minutes (%d lines)", n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		text, _ := os.ReadFile(out.Name())
		t.Fatalf("the run was not killed by SIGKILL (%v): it finished first?\n%s", err, text)
	}
	left := lineCount(killed)
	if left == 0 || left >= genomes {
		t.Fatalf("%d lines left by the killed run, want some but not all %d", left, genomes)
	}

	code, text := runNeateval(t, dir, "resumed", "run", "--config", killedCfg, "--resume")
	if code != 0 {
		t.Fatalf("resumed run: exit %d\n%s", code, text)
	}
	var resume struct {
		Event     string `json:"event"`
		Done      int    `json:"done"`
		Remaining int    `json:"remaining"`
	}
	for _, m := range jsonLines(t, text) {
		if m["event"] == "resume" {
			b, _ := json.Marshal(m)
			json.Unmarshal(b, &resume)
		}
	}
	// The killed file's whole lines were kept (a line torn by the kill is
	// cut off), and only the rest was scored.
	if resume.Event != "resume" || resume.Done < left-1 || resume.Done > left || resume.Done+resume.Remaining != genomes {
		t.Errorf("resume event %+v; the killed run left %d lines of %d", resume, left, genomes)
	}
	t.Logf("killed with %d of %d lines written; resumed with %d done, %d to score", left, genomes, resume.Done, resume.Remaining)

	want, got := withoutSeconds(t, whole), withoutSeconds(t, killed)
	if len(got) != genomes || len(want) != genomes {
		t.Fatalf("%d lines after resuming, %d uninterrupted; want %d", len(got), len(want), genomes)
	}
	scored := 0
	for i := range want {
		if want[i]["error"] == "null" && want[i]["fitness"] != "null" {
			scored++
		}
		if len(got[i]) != len(want[i]) {
			t.Errorf("line %d: fields %v, want %v", i+1, got[i], want[i])
			continue
		}
		for k, v := range want[i] {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %s, uninterrupted %s", i+1, k, got[i][k], v)
			}
		}
	}

	if scored < genomes/2 {
		t.Errorf("only %d of %d genomes scored: the comparison says little", scored, genomes)
	}

	// Another population's run (generate_seed 2) refuses this file.
	before, _ := os.ReadFile(killed)
	otherCfg := writeConfig(t, fmt.Sprintf(resumeConfig, 2, killed))
	code, text = runNeateval(t, dir, "other", "run", "--config", otherCfg, "--resume")
	if code != exitUsage || !strings.Contains(text, "was written for another population, data set or fitness") ||
		!strings.Contains(text, "refusing to resume it (the file is left as it is)") {
		t.Errorf("resuming another population's file: exit %d\n%s", code, text)
	}
	if after, _ := os.ReadFile(killed); !bytes.Equal(before, after) {
		t.Error("the refused results file was changed")
	}
}
