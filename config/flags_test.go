package config

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overrides declares a flag set with a flag for each kind of key.
func overrides() (*flag.FlagSet, *Overrides) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ov := NewOverrides(fs)
	ov.Bind("limit", "dataset.limit", "`N` (dataset.limit)")
	ov.Bind("kind", "dataset.kind", "(dataset.kind)")
	ov.Bind("threshold", "vram.vram_usage_threshold", "(vram.vram_usage_threshold)")
	ov.Bind("memory", "vram.memory_bytes", "(vram.memory_bytes)")
	ov.Bind("prefetch", "vram.prefetch", "(vram.prefetch)")
	ov.Bind("generations", "evolve.generations", "(evolve.generations)")
	ov.Bind("seed", "evolve.seed", "(evolve.seed, a key of the embedded neat.EvolveConfig)")
	return fs, ov
}

func TestOverrides(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(file, []byte("[dataset]\nlimit = 7\nkind = \"idx\"\nimages = \"i\"\nlabels = \"l\"\n"), 0o644)
	tests := []struct {
		args  []string
		file  string
		want  string // error; "" for none
		check func(c *Config) bool
	}{
		{nil, "", "", func(c *Config) bool { return c.Dataset.Limit == 0 }},
		{nil, file, "", func(c *Config) bool { return c.Dataset.Limit == 7 }},
		{[]string{"--limit", "9"}, file, "", func(c *Config) bool { return c.Dataset.Limit == 9 && c.Dataset.Kind == "idx" }},
		{[]string{"--limit=0"}, file, "", func(c *Config) bool { return c.Dataset.Limit == 0 }},
		{[]string{"--threshold", "0.5", "--memory", "1GiB", "--prefetch=false"}, "", "", func(c *Config) bool {
			return c.VRAM.VRAMUsageThreshold == 0.5 && c.VRAM.MemoryBytes == 1<<30 && !c.VRAM.Prefetch
		}},
		{[]string{"--generations", "3", "--seed", "9"}, "", "", func(c *Config) bool { return c.Evolve.Generations == 3 && c.Evolve.Seed == 9 }},
		{[]string{"--limit", "-1"}, "", "flag --limit: dataset.limit = -1: must be ≥ 0 (0 = all images)", nil},
		{[]string{"--threshold", "2"}, "", "flag --threshold: vram.vram_usage_threshold = 2.0: must be in (0, 1]", nil},
		{[]string{"--kind", "cifar10"}, "", `the built-in defaults with --kind: dataset.path = "": must be set when dataset.kind = "cifar10" (only MNIST ships with neateval)`, nil},
		{[]string{"--kind", "cifar10", "--limit", "3"}, file, file + ` with --kind, --limit: dataset.path = "": must be set`, nil},
	}
	for _, tt := range tests {
		fs, ov := overrides()
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		c, err := ov.Load(tt.file)
		if tt.want != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("%v: %v, want %q", tt.args, err, tt.want)
			}
			var fe *FlagError
			var fle *FileError
			if !errors.As(err, &fe) && !errors.As(err, &fle) {
				t.Errorf("%v: %T is neither a *FlagError nor a *FileError", tt.args, err)
			}
			continue
		}
		if err != nil || !tt.check(c) {
			t.Errorf("%v over %q: %v, config %+v", tt.args, tt.file, err, c)
		}
	}
	// Values of the wrong type are refused when the flags are parsed.
	for _, args := range [][]string{{"--limit", "many"}, {"--threshold", "x"}, {"--memory", "16 GB of RAM"}, {"--prefetch=maybe"}} {
		fs, _ := overrides()
		if err := fs.Parse(args); err == nil {
			t.Errorf("%v: parsed", args)
		}
	}
}

func TestBindUnknownKeyPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Bind of an unknown key did not panic")
		}
	}()
	NewOverrides(flag.NewFlagSet("t", flag.ContinueOnError)).Bind("x", "eval.no_such_key", "")
}

// FuzzOverrides feeds arbitrary command-line values to every kind of bound
// flag: a value is refused or loads into a config, never a panic.
func FuzzOverrides(f *testing.F) {
	for _, s := range []string{"0", "-1", "1.5", "16GiB", "true", "nan", "", "idx", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, name := range []string{"limit", "kind", "threshold", "memory", "prefetch", "generations", "seed"} {
			fs, ov := overrides()
			if fs.Parse([]string{"--" + name + "=" + v}) != nil {
				continue
			}
			if c, err := ov.Load(""); err == nil {
				if verr := c.Validate(); verr != nil {
					t.Errorf("--%s=%q: loaded a config that fails Validate: %v", name, v, verr)
				}
			}
		}
	})
}
