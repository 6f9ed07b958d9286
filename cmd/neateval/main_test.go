package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

func TestRunMainDispatch(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
		msg    string
	}{
		{nil, 2, "", "Commands:", "no command given"},
		{[]string{"frobnicate"}, 2, "", "", `unknown command "frobnicate" (commands: run, plan, serve, gen, evolve, export, bench, plot, worker, broker, version, help; see neateval help)`},
		{[]string{"help"}, 0, "Exit codes:", "", ""},
		{[]string{"--help"}, 0, "Commands:", "", ""},
		{[]string{"help", "run"}, 0, "-fitness-eval-parallel N", "", ""},
		{[]string{"help", "gen"}, 0, "-preset P", "", ""},
		{[]string{"help", "version"}, 0, "Usage: neateval version", "", ""},
		{[]string{"help", "nope"}, 2, "", "", `help: unknown command "nope"`},
		{[]string{"run", "--help"}, 0, "Usage: neateval run", "", ""},
		{[]string{"version"}, 0, "go        " + runtime.Version(), "", ""},
		{[]string{"--version"}, 0, "platform  " + runtime.GOOS + "/" + runtime.GOARCH, "", ""},
		{[]string{"version", "x"}, 2, "", "", `version: unexpected argument "x" (see neateval help version)`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		err := runMain(context.Background(), tt.args, &stdout, &stderr)
		if code := exitCode(err); code != tt.code {
			t.Errorf("%v: exit %d (%v), want %d", tt.args, code, err, tt.code)
		}
		if tt.msg != "" && (err == nil || err.Error() != tt.msg) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.msg)
		}
		if !strings.Contains(stdout.String(), tt.stdout) {
			t.Errorf("%v: stdout %q lacks %q", tt.args, stdout.String(), tt.stdout)
		}
		if !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%v: stderr %q lacks %q", tt.args, stderr.String(), tt.stderr)
		}
	}
}

func TestVersionText(t *testing.T) {
	v := versionText()
	lines := strings.Split(strings.TrimSuffix(v, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "neateval ") || !strings.HasPrefix(lines[3], "cpu       ") {
		t.Errorf("version text %q", v)
	}
	if runtime.GOARCH == "amd64" && !strings.Contains(lines[3], "sse4.1") && !strings.Contains(lines[3], "no SIMD") {
		t.Errorf("cpu line %q", lines[3])
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\n  b\tc\n"); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
}
