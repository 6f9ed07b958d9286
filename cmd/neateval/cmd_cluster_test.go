package main

import (
	"bytes"
	"testing"

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
