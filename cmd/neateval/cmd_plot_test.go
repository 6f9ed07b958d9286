package main

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunPlot(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ kind, in string }{
		{"fitness", "../../plot/testdata"},
		{"timeline", "../../plot/testdata/run.log"},
		{"results", "../../plot/testdata/results.jsonl"},
	} {
		out := filepath.Join(dir, c.kind+".png")
		var stdout bytes.Buffer
		if err := cmdPlot(context.Background(), []string{c.kind, "--in", c.in, "--out", out}, &stdout, &stdout); err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != 800 {
			t.Errorf("%s: %v, width %d", c.kind, err, cfg.Width)
		}
		if !strings.HasPrefix(stdout.String(), "wrote "+out) {
			t.Errorf("%s: printed %q", c.kind, stdout.String())
		}
	}
}

func TestRunPlotErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.png")
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--in", "x", "--out", out}, true, "which picture?"},
		{[]string{"pie", "--in", "x", "--out", out}, true, `got "pie"`},
		{[]string{"results", "--out", out}, true, "--in is required"},
		{[]string{"results", "--in", "x", "--out", "x.jpg"}, true, "must end in .png"},
		{[]string{"results", "--in", "../../plot/testdata/run.log", "--out", out}, false, `run.log:1: no "genome_id"`},
	} {
		err := cmdPlot(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
		var ue *usageError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.usage {
			t.Errorf("%v: error %v, want one containing %q (a usage error: %v)", c.args, err, c.want, c.usage)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed plot left %s", out)
	}
}
