package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neateval/neateval/config"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/run"
)

// loadRunArgs parses run's flags and loads the config as cmdRun does.
func loadRunArgs(t *testing.T, args ...string) (*config.Config, error) {
	t.Helper()
	var o runOptions
	fs, ov := newRunFlags(&o)
	if err := parseFlags(fs, args, &bytes.Buffer{}, runUsage); err != nil {
		t.Fatal(err)
	}
	return ov.Load(o.ConfigPath)
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunFlagsOverrideConfig(t *testing.T) {
	cfgPath := writeConfig(t, `
[population]
path = "from-config.json"
[dataset]
limit = 500
[eval]
eval_batch_size = 1000
fitness_eval_parallel = 2
[output]
results = "config.jsonl"
log_format = "console"
`)
	tests := []struct {
		name  string
		args  []string
		apply func(c *config.Config)
	}{
		{"no flags: the config as it is", nil, func(c *config.Config) {}},
		{"population", []string{"--population", "p.json"}, func(c *config.Config) { c.Population.Path = "p.json" }},
		{"dataset", []string{"--dataset-kind", "fashion-mnist", "--dataset-path", "/data/fm"}, func(c *config.Config) {
			c.Dataset.Kind, c.Dataset.Path = "fashion-mnist", "/data/fm"
		}},
		{"limit to zero", []string{"--limit=0"}, func(c *config.Config) { c.Dataset.Limit = 0 }},
		{"results and logs", []string{"-results", "r.jsonl", "--log-format", "json", "--log-level", "debug", "--progress", "off"}, func(c *config.Config) {
			c.Output.Results, c.Output.LogFormat, c.Output.LogLevel, c.Output.Progress = "r.jsonl", "json", "debug", "off"
		}},
		{"eval", []string{"--backend", "auto", "--eval-batch-size", "256", "--fitness-eval-parallel", "4"}, func(c *config.Config) {
			c.Eval.Backend, c.Eval.EvalBatchSize, c.Eval.FitnessEvalParallel = "auto", 256, 4
		}},
		{"population set to empty: generate", []string{"--population="}, func(c *config.Config) { c.Population.Path = "" }},
	}
	base, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		got, err := loadRunArgs(t, append([]string{"--config", cfgPath}, tt.args...)...)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want, _ := config.Load(cfgPath)
		tt.apply(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, want)
		}
		if tt.args == nil && !reflect.DeepEqual(got, base) {
			t.Errorf("no flags changed the config")
		}
	}
	// Without --config: the defaults, with the flags over them.
	got, err := loadRunArgs(t, "--eval-batch-size", "7")
	if err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	want.Eval.EvalBatchSize = 7
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults + flag: %+v", got)
	}
}

// Every overriding flag is mapped to a real key, and every flag but
// --config and --resume overrides one.
func TestRunFlagKeys(t *testing.T) {
	known := map[string]bool{}
	for _, k := range config.Keys() {
		known[k] = true
	}
	fs, ov := newRunFlags(&runOptions{})
	keys := ov.Keys()
	fs.VisitAll(func(f *flag.Flag) {
		key, ok := keys[f.Name]
		switch {
		case f.Name == "config" || f.Name == "resume":
		case !ok:
			t.Errorf("flag --%s overrides no key", f.Name)
		case !known[key]:
			t.Errorf("flag --%s maps to unknown key %s", f.Name, key)
		case !strings.Contains(f.Usage, "("+key+")"):
			t.Errorf("flag --%s: usage does not name %s", f.Name, key)
		}
	})
}

func TestRunFlagErrors(t *testing.T) {
	cfgPath := writeConfig(t, "[dataset]\nkind = \"idx\"\nimages = \"i\"\nlabels = \"l\"\n")
	tests := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--eval-batch-size", "0"}, "flag --eval-batch-size: eval.eval_batch_size = 0: must be ≥ 1", 2},
		{[]string{"--backend", "gpu"}, `flag --backend: eval.backend = "gpu": must be one of "cpu", "cuda", "auto"`, 2},
		{[]string{"--log-format", "xml"}, `flag --log-format: output.log_format = "xml": must be one of "auto", "console", "json"`, 2},
		{[]string{"--limit", "-3"}, "flag --limit: dataset.limit = -3: must be ≥ 0 (0 = all images)", 2},
		// A rule across keys broken by the merge is reported against the file.
		{[]string{"--config", cfgPath, "--dataset-kind", "mnist"}, "", 0},
		{[]string{"--config", cfgPath, "--dataset-kind", "cifar10", "--limit", "5"}, cfgPath + ` with --dataset-kind, --limit: dataset.path = "": must be set when dataset.kind = "cifar10"`, 2},
		{[]string{"--dataset-kind", "cifar10"}, `the built-in defaults with --dataset-kind: dataset.path = "": must be set when dataset.kind = "cifar10"`, 2},
		{[]string{"--config", "missing.toml"}, "missing.toml: no such file or directory", 2},
	}
	for _, tt := range tests {
		_, err := loadRunArgs(t, tt.args...)
		if tt.code == 0 { // valid
			if err != nil {
				t.Errorf("%v: %v", tt.args, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
		}
		if exitCode(err) != tt.code {
			t.Errorf("%v: exit code %d, want %d", tt.args, exitCode(err), tt.code)
		}
	}
}

func TestParseFlagsErrors(t *testing.T) {
	var stdout bytes.Buffer
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--no-such-flag"}, "run: flag provided but not defined: -no-such-flag (see neateval help run)"},
		{[]string{"--eval-batch-size", "many"}, `run: invalid value "many" for flag -eval-batch-size: parse error (see neateval help run)`},
		{[]string{"config.toml"}, `run: unexpected argument "config.toml" (see neateval help run)`},
	}
	for _, tt := range tests {
		fs, _ := newRunFlags(&runOptions{})
		err := parseFlags(fs, tt.args, &stdout, runUsage)
		if err == nil || err.Error() != tt.want || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want %q", tt.args, err, exitCode(err), tt.want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("errors printed usage: %q", stdout.String())
	}
	fs, _ := newRunFlags(&runOptions{})
	err := parseFlags(fs, []string{"-h"}, &stdout, runUsage)
	if !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
		t.Errorf("-h: %v", err)
	}
	for _, want := range []string{"Usage: neateval run", "-eval-batch-size N", "Exit codes:", "130"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-h output lacks %q", want)
		}
	}
}

// TestRunOutcomes runs real runs that end each way a run can, and checks
// the exit code, the message and the last log line.
func TestRunOutcomes(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.json")
	pop := neat.Generate(1, 3, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	for _, p := range pop.Genomes[1].Params { // a NaN weight: an error result
		if p != nil && p.Weight != nil {
			p.Weight.Data[0] = float32(math.NaN())
			break
		}
	}
	if err := neat.Save(pop, broken, "broken.safetensors"); err != nil {
		t.Fatal(err)
	}
	synthetic := []string{"--dataset-kind", "synthetic", "--limit", "50"}
	tests := []struct {
		name   string
		args   []string
		cancel bool
		code   int
		event  string // the last log line's event
		msg    string // the start of err's message
	}{
		{"failure", []string{"--population", filepath.Join(dir, "missing.json")}, false, 1, run.EventRunFailed, "run: open " + dir},
		{"genome errors", []string{"--population", broken}, false, 3, run.EventRunSummary, "1 of 3 genomes got an error result (see the \"error\" field in "},
		{"interrupted", nil, true, 130, run.EventRunInterrupted, "interrupted; the results written so far are kept in "},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancel(context.Background())
		if tt.cancel {
			cancel()
		}
		var stderr bytes.Buffer
		args := append([]string{"run", "--log-format", "json", "--progress", "off", "--results", filepath.Join(dir, tt.name+".jsonl")}, synthetic...)
		err := runMain(ctx, append(args, tt.args...), &bytes.Buffer{}, &stderr)
		cancel()
		if exitCode(err) != tt.code || err == nil || !strings.HasPrefix(err.Error(), tt.msg) {
			t.Errorf("%s: %v (exit %d), want %q… (exit %d)", tt.name, err, exitCode(err), tt.msg, tt.code)
		}
		objs := jsonLines(t, stderr.String())
		if last := objs[len(objs)-1]; last[run.KeyEvent] != tt.event {
			t.Errorf("%s: last log line %v, want event %s", tt.name, last, tt.event)
		}
	}
}

// jsonLines parses log output, one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		objs = append(objs, m)
	}
	return objs
}
