package cluster_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/neateval/neateval/run"
)

// The cluster as users run it: `neateval broker` on 127.0.0.1, three
// `neateval worker` processes and `neateval run --nats`; one worker is
// SIGKILLed once it holds an item. The results file equals a
// single-process run's, field by field but the seconds.
func TestMultiProcessKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds neateval and runs five processes: -short skips it")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "neateval")
	build := exec.Command("go", "build", "-o", bin, "../cmd/neateval")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	broker := start(t, bin, "broker", "--port", fmt.Sprint(port), "--store", filepath.Join(dir, "store"))
	waitListening(t, port)
	common := []string{"--dataset-kind", "synthetic", "--log-format", "json", "--threads", "1"}
	cfgPath := filepath.Join(dir, "c.toml")
	os.WriteFile(cfgPath, []byte("[cluster]\nack_wait_seconds = 2\nitem_genomes = 2\n\n[population]\ngenerate_size = 16\n\n[dataset]\nsynthetic_size = 500\n"), 0o644)
	victim := startWorkers(t, bin, 3, append([]string{"worker", "--nats", url, "--config", cfgPath}, common...))
	out := filepath.Join(dir, "cluster.jsonl")
	coord := exec.Command(bin, "run", "--nats", url, "--config", cfgPath, "--results", out, "--progress", "off", "--log-format", "json",
		"--dataset-kind", "synthetic")
	log, err := coord.CombinedOutput()
	if err != nil {
		t.Fatalf("neateval run --nats: %v\n%s", err, log)
	}
	if strings.Contains(string(log), `"redeliveries":0`) || !strings.Contains(string(log), `"redeliveries":`) {
		t.Errorf("the killed worker's item was not redelivered:\n%s", log)
	}
	broker.Process.Signal(syscall.SIGTERM)

	cfg := testConfig(16)
	cfg.Dataset.SyntheticSize = 500
	cfg.Output.Results = filepath.Join(dir, "local.jsonl")
	if _, err := run.Run(context.Background(), run.Spec{Config: cfg, Logger: &nop}); err != nil {
		t.Fatal(err)
	}
	if got, want := withoutSeconds(t, out), withoutSeconds(t, cfg.Output.Results); got != want {
		t.Errorf("results differ:\n%s\nwant\n%s", got, want)
	}
	if victim.ProcessState == nil {
		victim.Wait()
	}
	if ws, ok := victim.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the victim was not killed: %v", victim.ProcessState)
	}
}

// startWorkers starts n worker processes (args, and --name wK) and returns
// the first, which is SIGKILLed as soon as it logs that it took an item.
func startWorkers(t *testing.T, bin string, n int, args []string) (victim *exec.Cmd) {
	t.Helper()
	taken := make(chan struct{}, 1)
	for k := range n {
		w := exec.Command(bin, append(slices.Clone(args), "--name", fmt.Sprintf("w%d", k))...)
		stderr, _ := w.StderrPipe()
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Process.Kill(); w.Wait() })
		if k == 0 {
			victim = w
			go watchFor(stderr, `"event":"item_taken"`, taken)
		} else {
			go io.Copy(io.Discard, stderr)
		}
	}
	go func() { <-taken; victim.Process.Signal(syscall.SIGKILL) }()
	return victim
}

func start(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(bin, args...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, port int) {
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the broker did not listen in 10s")
}

// watchFor signals found once a line of r contains s, and drains r.
func watchFor(r io.Reader, s string, found chan<- struct{}) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			select {
			case found <- struct{}{}:
			default:
			}
		}
	}
}

// `neateval evolve --nats` with two `neateval worker --evolve` processes,
// one SIGKILLed once it holds an item, and the coordinator SIGKILLed after
// its first generation's checkpoint is written and started again with --resume: the run's
// checkpoint and best genome are a single process's, byte for byte.
func TestMultiProcessEvolve(t *testing.T) {
	if testing.Short() {
		t.Skip("builds neateval and runs four processes: -short skips it")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "neateval")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/neateval").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	broker := start(t, bin, "broker", "--port", fmt.Sprint(port), "--store", filepath.Join(dir, "store"))
	waitListening(t, port)
	cfg := evolveConfig(filepath.Join(dir, "cluster"))
	toml := fmt.Sprintf("[cluster]\nack_wait_seconds = 2\nitem_genomes = 2\n\n[dataset]\nkind = \"synthetic\"\nsynthetic_size = %d\n\n"+
		"[eval]\nthreads = 1\n\n[evolve]\ngenerations = %d\npopulation_size = %d\nval_size = %d\nval_batch = %d\ncheckpoint_seconds = 0\ncheckpoint_dir = %q\nbest = %q\n",
		cfg.Dataset.SyntheticSize, cfg.Evolve.Generations, cfg.Evolve.PopulationSize, cfg.Evolve.ValSize, cfg.Evolve.ValBatch,
		cfg.Evolve.CheckpointDir, cfg.Evolve.Best)
	cfgPath := filepath.Join(dir, "evolve.toml")
	if err := os.WriteFile(cfgPath, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	victim := startWorkers(t, bin, 2, []string{"worker", "--evolve", "--nats", url, "--config", cfgPath, "--log-format", "json"})
	first := exec.Command(bin, "evolve", "--nats", url, "--config", cfgPath, "--log-format", "json")
	stderr, _ := first.StderrPipe()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	generation := make(chan struct{}, 1)
	go watchFor(stderr, `"resume_at":1,`, generation) // generation 0's checkpoint written
	select {
	case <-generation:
		first.Process.Signal(syscall.SIGKILL)
	case <-time.After(2 * time.Minute):
		t.Fatal("no generation line with resume_at 1 from neateval evolve --nats in 2 minutes")
	}
	first.Wait()
	coord := exec.Command(bin, "evolve", "--nats", url, "--config", cfgPath, "--log-format", "json", "--resume")
	log, err := coord.CombinedOutput()
	if err != nil {
		t.Fatalf("neateval evolve --nats --resume: %v\n%s", err, log)
	}
	if !strings.Contains(string(log), `"event":"resume"`) || strings.Contains(string(log), `"generation":0,`) {
		t.Errorf("the second coordinator did not resume after generation 0:\n%s", log)
	}
	broker.Process.Signal(syscall.SIGTERM)

	local := evolveConfig(filepath.Join(dir, "local"))
	if _, err := run.Evolve(context.Background(), run.EvolveSpec{Config: local, Logger: &nop}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"best.json", "best.safetensors", filepath.Join("ckpt", "state.json")} {
		want, err := os.ReadFile(filepath.Join(dir, "local", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "cluster", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs between neateval evolve --nats and a local run", name)
		}
	}
	if victim.ProcessState == nil {
		victim.Wait()
	}
	if ws, ok := victim.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the victim was not killed: %v", victim.ProcessState)
	}
}
