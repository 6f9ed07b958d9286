package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"
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
		{"config file", &ConfigError{File: "c.toml", Err: errors.New("unknown key")}, 2},
		{"config value", &ValueError{Key: "eval.threads", Value: "-1", Rule: "must be ≥ 0"}, 2},
		{"genome errors", &GenomeErrors{Failed: 2, Total: 64, Results: "r.jsonl"}, 3},
		{"wrapped genome errors", fmt.Errorf("run: %w", &GenomeErrors{Failed: 1, Total: 1}), 3},
		{"interrupted", &interruptedError{results: "r.jsonl", err: context.Canceled}, 130},
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
	code := report(&GenomeErrors{Failed: 2, Total: 64, Results: "results.jsonl"}, &buf)
	if code != 3 || buf.String() != "neateval: 2 of 64 genomes got an error result (see the \"error\" field in results.jsonl)\n" {
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
