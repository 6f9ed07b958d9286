package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// parseRunArgs parses run's flags as cmdRun does.
func parseRunArgs(t *testing.T, args ...string) runOptions {
	t.Helper()
	var o runOptions
	fs := newRunFlags(&o)
	if err := parseFlags(fs, args, &bytes.Buffer{}, runUsage); err != nil {
		t.Fatal(err)
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o
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
		apply func(c *Config)
	}{
		{"no flags: the config as it is", nil, func(c *Config) {}},
		{"population", []string{"--population", "p.json"}, func(c *Config) { c.Population.Path = "p.json" }},
		{"dataset", []string{"--dataset-kind", "fashion-mnist", "--dataset-path", "/data/fm"}, func(c *Config) {
			c.Dataset.Kind, c.Dataset.Path = "fashion-mnist", "/data/fm"
		}},
		{"limit to zero", []string{"--limit=0"}, func(c *Config) { c.Dataset.Limit = 0 }},
		{"results and logs", []string{"-results", "r.jsonl", "--log-format", "json", "--log-level", "debug", "--progress", "off"}, func(c *Config) {
			c.Output.Results, c.Output.LogFormat, c.Output.LogLevel, c.Output.Progress = "r.jsonl", "json", "debug", "off"
		}},
		{"eval", []string{"--backend", "auto", "--eval-batch-size", "256", "--fitness-eval-parallel", "4"}, func(c *Config) {
			c.Eval.Backend, c.Eval.EvalBatchSize, c.Eval.FitnessEvalParallel = "auto", 256, 4
		}},
		{"population set to empty: generate", []string{"--population="}, func(c *Config) { c.Population.Path = "" }},
	}
	base, err := LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		o := parseRunArgs(t, append([]string{"--config", cfgPath}, tt.args...)...)
		got, err := loadRunConfig(o)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		want, _ := LoadConfig(cfgPath)
		tt.apply(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, want)
		}
		if tt.args == nil && !reflect.DeepEqual(got, base) {
			t.Errorf("no flags changed the config")
		}
	}
	// Without --config: the defaults, with the flags over them.
	o := parseRunArgs(t, "--eval-batch-size", "7")
	got, err := loadRunConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Eval.EvalBatchSize = 7
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults + flag: %+v", got)
	}
}

// Every overriding flag is mapped to a real key, and every flag but
// --config and --resume overrides one.
func TestRunFlagKeys(t *testing.T) {
	known := knownKeys()
	fs := newRunFlags(&runOptions{})
	fs.VisitAll(func(f *flag.Flag) {
		key, ok := runFlagKeys[f.Name]
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
		o := parseRunArgs(t, tt.args...)
		_, err := loadRunConfig(o)
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
		err := parseFlags(newRunFlags(&runOptions{}), tt.args, &stdout, runUsage)
		if err == nil || err.Error() != tt.want || exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want %q", tt.args, err, exitCode(err), tt.want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("errors printed usage: %q", stdout.String())
	}
	err := parseFlags(newRunFlags(&runOptions{}), []string{"-h"}, &stdout, runUsage)
	if !errors.Is(err, flag.ErrHelp) || exitCode(err) != 0 {
		t.Errorf("-h: %v", err)
	}
	for _, want := range []string{"Usage: neateval run", "-eval-batch-size N", "Exit codes:", "130"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-h output lacks %q", want)
		}
	}
}

// withRunEval replaces the evaluation for one test.
func withRunEval(t *testing.T, f func(ctx context.Context, env evalEnv) error) {
	t.Helper()
	old := runEval
	runEval = f
	t.Cleanup(func() { runEval = old })
}

func TestRunRunHandsTheMergedConfigToEval(t *testing.T) {
	var got evalEnv
	withRunEval(t, func(ctx context.Context, env evalEnv) error {
		got = env
		logEvent(&env.Log, zerolog.InfoLevel, EvDatasetLoaded).Int(KeyImages, 10000).Send()
		env.Progress.Start(2, 0)
		env.Progress.Add(2, 20000)
		return nil
	})
	cfgPath := writeConfig(t, "[eval]\nfitness_eval_parallel = 3\n")
	var stderr bytes.Buffer
	err := runMain(context.Background(), []string{"run", "--config", cfgPath, "--resume", "--log-format", "json", "--eval-batch-size", "99"}, &bytes.Buffer{}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config.Eval.EvalBatchSize != 99 || got.Config.Eval.FitnessEvalParallel != 3 || !got.Resume || got.ConfigPath != cfgPath {
		t.Errorf("env %+v, config %+v", got, got.Config.Eval)
	}
	if got.Progress.Done() != 2 {
		t.Error("progress not handed over")
	}
	objs := jsonLines(t, stderr.String())
	checkSchema(t, objs)
	if len(objs) != 2 || objs[0][KeyEvent] != EvRunStart || objs[1][KeyEvent] != EvDatasetLoaded {
		t.Errorf("log lines %v", objs)
	}
	if objs[0][KeyEvalBatchSize] != 99.0 || objs[0][KeyResume] != true || objs[0][KeyConfig] != cfgPath {
		t.Errorf("run_start %v", objs[0])
	}
}

func TestRunRunOutcomes(t *testing.T) {
	tests := []struct {
		name  string
		eval  func(ctx context.Context, env evalEnv) error
		code  int
		event string // the last log line's event
		msg   string
	}{
		{"failure", func(ctx context.Context, env evalEnv) error { return errors.New("population p.json: not JSON") }, 1, EvRunFailed,
			"run: population p.json: not JSON"},
		{"genome errors", func(ctx context.Context, env evalEnv) error {
			return &GenomeErrors{Failed: 1, Total: 4, Results: env.Config.Output.Results}
		}, 3, EvRunStart, `1 of 4 genomes got an error result (see the "error" field in results.jsonl)`},
		{"interrupted", func(ctx context.Context, env evalEnv) error {
			<-ctx.Done()
			return ctx.Err()
		}, 130, EvRunInterrupted, "interrupted; the results written so far are kept in results.jsonl (run again with --resume to finish)"},
	}
	for _, tt := range tests {
		withRunEval(t, tt.eval)
		ctx, cancel := context.WithCancel(context.Background())
		if tt.code == 130 {
			cancel()
		}
		var stderr bytes.Buffer
		err := runMain(ctx, []string{"run", "--log-format", "json", "--progress", "off"}, &bytes.Buffer{}, &stderr)
		cancel()
		if exitCode(err) != tt.code || err.Error() != tt.msg {
			t.Errorf("%s: %v (exit %d), want %q (exit %d)", tt.name, err, exitCode(err), tt.msg, tt.code)
		}
		objs := jsonLines(t, stderr.String())
		checkSchema(t, objs)
		if last := objs[len(objs)-1]; last[KeyEvent] != tt.event {
			t.Errorf("%s: last log line %v, want event %s", tt.name, last, tt.event)
		}
	}
}
