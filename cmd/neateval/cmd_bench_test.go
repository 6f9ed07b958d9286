package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestBenchFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--preset", "huge"}, `bench: --preset "huge": want small, wide, evolve, both or all`},
		{[]string{"--images", "0"}, "bench: --images 0: must be ≥ 1"},
		{[]string{"--dataset", "cifar10"}, `bench: --dataset "cifar10": want mnist or synthetic`},
		{[]string{"--parallel", "-1"}, "bench: --parallel -1: must be ≥ 0"},
		{[]string{"--repeat", "0"}, "bench: --repeat 0: must be ≥ 1"},
		{[]string{"--torch", "yes"}, `bench: --torch "yes": want auto or off`},
		{[]string{"--ceiling", "on"}, `bench: --ceiling "on": want auto or off`},
		{[]string{"--size", "-1"}, "bench: --size -1: must be ≥ 0"},
		{[]string{"extra"}, `bench: unexpected argument "extra" (see neateval help bench)`},
		{[]string{"--help"}, "help"},
		{[]string{"--dataset", "synthetic", "--images", "20", "--bench-dir", "/nonexistent", "--torch", "auto", "--ceiling", "off", "--preset", "small", "--size", "1"}, ""},
	} {
		var stdout bytes.Buffer
		err := runMain(context.Background(), append([]string{"bench"}, tt.args...), &stdout, &bytes.Buffer{})
		if tt.msg == "help" {
			if exitCode(err) != exitOK || !strings.Contains(stdout.String(), "Usage: neateval bench") || !strings.Contains(stdout.String(), "-torch M") {
				t.Errorf("--help: exit %d, usage:\n%s", exitCode(err), stdout.String())
			}
			continue
		}
		if tt.msg == "" {
			if err != nil {
				t.Errorf("%v: %v", tt.args, err)
			}
			if !strings.Contains(stdout.String(), "PyTorch not run: --bench-dir /nonexistent: no bench/ folder") {
				t.Errorf("%v: output lacks why PyTorch did not run:\n%s", tt.args, stdout.String())
			}
			continue
		}
		if exitCode(err) != exitUsage || err.Error() != tt.msg {
			t.Errorf("%v: error %v (exit %d), want %q (exit 2)", tt.args, err, exitCode(err), tt.msg)
		}
	}
}
