package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/neateval/neateval/bench/harness"
	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/results"
	"github.com/neateval/neateval/run"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"help", flag.ErrHelp, 0},
		{"usage", usagef("unknown command"), 2},
		{"wrapped usage", fmt.Errorf("x: %w", usagef("bad")), 2},
		{"config file", &config.FileError{File: "c.toml", Err: errors.New("unknown key")}, 2},
		{"config value", &config.ValueError{Key: "eval.threads", Value: "-1", Rule: "must be ≥ 0"}, 2},
		{"flag value", &config.FlagError{Flag: "limit", Err: errors.New("x")}, 2},
		{"other run's results", &results.NotResumableError{Path: "r.jsonl", Err: &results.OtherRunError{Run: "a", Want: "b"}}, 2},
		{"damaged results", &results.NotResumableError{Path: "r.jsonl", Err: results.ErrDamaged}, 1},
		{"checkpoint exists", &run.CheckpointError{Dir: "ckpt"}, 2},
		{"bench option", fmt.Errorf("x: %w", &harness.OptionError{}), 2},
		{"genome errors", &run.GenomeErrors{Failed: 2, Total: 64, Results: "r.jsonl"}, 3},
		{"wrapped genome errors", fmt.Errorf("run: %w", &run.GenomeErrors{Failed: 1, Total: 1}), 3},
		{"interrupted", &run.InterruptedError{Results: "r.jsonl", Err: context.Canceled}, 130},
		{"canceled", fmt.Errorf("chunk 3: %w", context.Canceled), 130},
		{"failure", errors.New("population p.json: not JSON"), 1},
		{"io", io.ErrUnexpectedEOF, 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("%s: exitCode = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestReport(t *testing.T) {
	var buf bytes.Buffer
	code := report(&run.GenomeErrors{Failed: 2, Total: 64, Results: "results.jsonl"}, &buf)
	if code != 3 || buf.String() != "neateval: 2 of 64 genomes got an error result (see the \"error\" field in results.jsonl)\n" {
		t.Errorf("report = %d, %q", code, buf.String())
	}
	buf.Reset()
	code = report(&run.InterruptedError{Results: "r.jsonl", Err: context.Canceled}, &buf)
	if code != 130 || buf.String() != "neateval: interrupted; the results written so far are kept in r.jsonl; run again with --resume to continue\n" {
		t.Errorf("report = %d, %q", code, buf.String())
	}
	buf.Reset()
	if code := report(errors.New("two\nlines"), &buf); code != 1 || buf.String() != "neateval: two lines\n" {
		t.Errorf("report = %d, %q", code, buf.String())
	}
	buf.Reset()
	if code := report(nil, &buf); code != 0 || buf.Len() != 0 {
		t.Errorf("report(nil) = %d, %q", code, buf.String())
	}
	if code := report(flag.ErrHelp, &buf); code != 0 || buf.Len() != 0 {
		t.Errorf("report(ErrHelp) = %d, %q", code, buf.String())
	}
}
