package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neateval/neateval/cluster"
)

// --device sets eval.device for a worker, and for run, whose local workers
// then take the devices that follow it.
func TestDeviceFlag(t *testing.T) {
	var wo workerOptions
	fs, ov := newWorkerFlags(&wo)
	if err := parseFlags(fs, []string{"--nats", "nats://127.0.0.1:4222", "--backend", "cuda", "--device", "3"}, &bytes.Buffer{}, workerUsage); err != nil {
		t.Fatal(err)
	}
	cfg, err := ov.Load(wo.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := cfg.BackendOptions(nil); o.DeviceIndex != 3 {
		t.Errorf("worker --device 3: the backend opens device %d", o.DeviceIndex)
	}

	cfg, err = loadRunArgs(t, "--workers", "2", "--backend", "cuda", "--device", "2")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []int{2, 3} {
		if o, _ := cluster.LocalWorkerConfig(cfg, k).BackendOptions(nil); o.DeviceIndex != want {
			t.Errorf("run --workers 2 --device 2: local worker %d opens device %d, want %d", k, o.DeviceIndex, want)
		}
	}

	fs, ov = newWorkerFlags(&wo)
	if err := parseFlags(fs, []string{"--device", "-1"}, &bytes.Buffer{}, workerUsage); err != nil {
		t.Fatal(err)
	}
	if _, err := ov.Load(""); err == nil || exitCode(err) != exitUsage {
		t.Errorf("worker --device -1: %v (exit %d), want a usage error", err, exitCode(err))
	}
}

// An item that fails on every delivery ends `neateval run --nats` with
// exit code 3 and error lines naming the cause, never a hang (the
// context's deadline would end it with another code). The workers are
// real and fail for real reasons: one whose device memory
// (vram.memory_bytes) the cached validation set nearly fills, so that no
// chunk of population_gpu_chunk_bytes fits under the usage ceiling (an
// out-of-memory no halving of the batch can fix); one with another data
// set, which refuses the items.
func TestRunItemFailsEveryDelivery(t *testing.T) {
	const common = "[population]\ngenerate_size = 4\n[dataset]\nkind = \"synthetic\"\nsynthetic_size = 1300\n" +
		"[cluster]\nmax_deliver = 2\nack_wait_seconds = 2\nitem_genomes = 2\n[eval]\nthreads = 1\n"
	tests := []struct {
		name, worker string
		cause        []string // in every genome's error
	}{
		{"device too small", common + "[vram]\nmemory_bytes = \"4MiB\"\npopulation_gpu_chunk_bytes = \"1MiB\"\n",
			[]string{"failed on every delivery", "staging: fixed memory", "leaves nothing under the ceiling of 80% of 4194304 bytes"}},
		{"another data set", strings.Replace(common, "synthetic_size = 1300", "synthetic_size = 1200", 1),
			[]string{"failed on every delivery", "refused by worker w: data set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := cluster.StartBroker(cluster.BrokerOptions{Port: 0, StoreDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Shutdown()
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			wctx, stopWorker := context.WithCancel(ctx)
			var wlog syncBuffer
			werr := make(chan error, 1)
			go func() {
				werr <- runMain(wctx, []string{"worker", "--nats", b.ClientURL(), "--config", writeConfig(t, tt.worker), "--name", "w",
					"--log-format", "json"}, io.Discard, &wlog)
			}()
			results := filepath.Join(dir, "results.jsonl")
			var stderr bytes.Buffer
			err = runMain(ctx, []string{"run", "--nats", b.ClientURL(), "--config", writeConfig(t, common), "--results", results,
				"--progress", "off", "--log-format", "json"}, io.Discard, &stderr)
			stopWorker()
			wErr := <-werr
			if code := report(err, &stderr); code != exitGenomeErrs || wErr != nil {
				t.Fatalf("exit %d (%v), want %d; the worker: %v\n%s", code, err, exitGenomeErrs, wErr, stderr.String())
			}
			if msg := lastLine(stderr.String()); !strings.HasPrefix(msg, "neateval: 4 of 4 genomes got an error result") {
				t.Errorf("the message: %q", msg)
			}
			lines := readLines(t, results)
			if len(lines) != 4 {
				t.Fatalf("%d result lines, want 4", len(lines))
			}
			for _, l := range lines {
				for _, c := range tt.cause {
					if !strings.Contains(l, c) {
						t.Errorf("result %s lacks %q", l, c)
					}
				}
			}
			if !strings.Contains(wlog.String(), `"event":"item_`) {
				t.Errorf("the worker logged no item event:\n%s", wlog.String())
			}
		})
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// `neateval broker` listens on loopback by default; beyond loopback
// without a token it is refused before it listens (exit 2, with what to
// do), and starts with one.
func TestBrokerLoopbackOrToken(t *testing.T) {
	t.Setenv(cluster.TokenEnv, "")
	if logs := serveBroker(t, "broker", "--port", "0", "--store", t.TempDir()); !strings.Contains(logs, "nats://127.0.0.1:") {
		t.Errorf("by default the broker listens on:\n%s", logs)
	}
	args := []string{"broker", "--listen", "0.0.0.0", "--port", "0", "--store", t.TempDir()}
	var stderr bytes.Buffer
	code := report(runMain(context.Background(), args, io.Discard, &stderr), &stderr)
	want := "neateval: broker on 0.0.0.0: the broker listens beyond loopback: it needs a token or a user and password; give one with --token-file FILE or $NEATEVAL_NATS_TOKEN, or listen on 127.0.0.1\n"
	if code != exitUsage || stderr.String() != want {
		t.Errorf("exit %d, %q; want %d, %q", code, stderr.String(), exitUsage, want)
	}

	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("tok-cmd-5c1a\n"), 0o600)
	if logs := serveBroker(t, append(args, "--token-file", token)...); strings.Contains(logs, "tok-cmd-5c1a") {
		t.Errorf("the broker logged its token:\n%s", logs)
	}
}

// serveBroker runs `neateval args...` until it logs broker_started, stops
// it, and returns its logs.
func serveBroker(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan error, 1)
	go func() { done <- runMain(ctx, args, io.Discard, &logs) }()
	for !strings.Contains(logs.String(), "broker_started") {
		select {
		case err := <-done:
			t.Fatalf("%v: %v", args, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("%v: %v", args, err)
	}
	return logs.String()
}
