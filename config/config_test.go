package config

import (
	"bufio"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestDefaultConfigMatchesShippedFile(t *testing.T) {
	got, err := Load("../config.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	// Compare key by key, so a failure names the key.
	for _, key := range Keys() {
		g, _ := got.field(key)
		w, _ := want.field(key)
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			t.Errorf("%s: config.toml has %#v, Default has %#v", key, g.Interface(), w.Interface())
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("config.toml and Default differ")
	}
}

// TestShippedConfigDocumented holds config.toml to being the reference:
// every key of Config is in it, and every key line has a comment, on the
// line or in the comment block right above it.
func TestShippedConfigDocumented(t *testing.T) {
	f, err := os.Open("../config.toml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keyLine := regexp.MustCompile(`^([a-z_]+)\s*=`)
	section := ""
	commented := false // the previous line is a comment
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
			commented = true
			continue
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		case keyLine.MatchString(line):
			key := section + "." + keyLine.FindStringSubmatch(line)[1]
			seen[key] = true
			if !commented && !strings.Contains(line, "#") {
				t.Errorf("config.toml:%d: key %s has no comment", n, key)
			}
		}
		commented = false
	}
	for _, k := range Keys() {
		if !seen[k] {
			t.Errorf("config.toml lacks key %s", k)
		}
	}
}

func TestLoadConfigOverridesDefaults(t *testing.T) {
	cfg, err := Parse([]byte(`
[eval]
eval_batch_size = 25000
fitness_eval_parallel = 4
[vram]
population_gpu_chunk_bytes = "2GB"
memory_bytes = "16GiB"
cuda_graph_memory_reserve_bytes = 1048576
fault_at = [3, 7]
[dataset]
mean = [0.1307]
std = [0.3081]
`), "c.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Eval.EvalBatchSize = 25000
	want.Eval.FitnessEvalParallel = 4
	want.VRAM.PopulationGPUChunkBytes = 2_000_000_000
	want.VRAM.MemoryBytes = 16 << 30
	want.VRAM.CUDAGraphMemoryReserveBytes = 1 << 20
	want.VRAM.FaultAt = []int64{3, 7}
	want.Dataset.Mean = []float64{0.1307}
	want.Dataset.Std = []float64{0.3081}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"unknown key with suggestion", "[eval]\neval_batchsize = 10\n",
			`c.toml: unknown key "eval.eval_batchsize" (did you mean "eval.eval_batch_size"?)`},
		{"key in the wrong table", "[eval]\nvram_usage_threshold = 0.5\n",
			`c.toml: unknown key "eval.vram_usage_threshold" (did you mean "vram.vram_usage_threshold"?)`},
		{"key in the wrong case", "[eval]\nEval_Batch_Size = 10\n",
			`c.toml: unknown key "eval.Eval_Batch_Size" (did you mean "eval.eval_batch_size"?)`},
		{"unknown key far from any", "[output]\ncolour = true\n",
			`c.toml: unknown key "output.colour"`},
		{"unknown table reported once", "[evaluation]\nx = 1\ny = 2\n",
			`c.toml: unknown key "evaluation"`},
		{"top-level key", "eval_batch_size = 10\n",
			`c.toml: unknown key "eval_batch_size" (did you mean "eval.eval_batch_size"?)`},
		{"threshold above 1", "[vram]\nvram_usage_threshold = 1.5\n",
			`c.toml: vram.vram_usage_threshold = 1.5: must be in (0, 1]`},
		{"threshold zero", "[vram]\npopulation_vram_resident_threshold = 0\n",
			`c.toml: vram.population_vram_resident_threshold = 0.0: must be in (0, 1]`},
		{"threshold nan", "[vram]\nvram_usage_threshold = nan\n",
			`c.toml: vram.vram_usage_threshold = nan: must be in (0, 1]`},
		{"fractions reversed", "[vram]\npopulation_gpu_batch_frac_min = 0.6\npopulation_gpu_batch_frac_max = 0.5\n",
			`c.toml: vram.population_gpu_batch_frac_min = 0.6: must be ≤ vram.population_gpu_batch_frac_max (0.5)`},
		{"batch size zero", "[eval]\neval_batch_size = 0\n",
			`c.toml: eval.eval_batch_size = 0: must be ≥ 1`},
		{"parallel negative", "[eval]\nfitness_eval_parallel = -2\n",
			`c.toml: eval.fitness_eval_parallel = -2: must be ≥ 0 (0 = the backend's suggestion)`},
		{"device negative", "[eval]\ndevice = -1\n",
			`c.toml: eval.device = -1: must be ≥ 0 (a CUDA device index)`},
		{"backend", "[eval]\nbackend = \"gpu\"\n",
			`c.toml: eval.backend = "gpu": must be one of "cpu", "cuda", "auto"`},
		{"dtype", "[eval]\ndtype = \"float16\"\n",
			`c.toml: eval.dtype = "float16": must be one of "float32", "bfloat16"`},
		{"fitness", "[eval]\nfitness = \"loss\"\n",
			`c.toml: eval.fitness = "loss": must be one of "accuracy", "neg_loss"`},
		{"dataset kind", "[dataset]\nkind = \"imagenet\"\n",
			`c.toml: dataset.kind = "imagenet": must be one of "mnist", "fashion-mnist", "idx", "cifar10", "synthetic"`},
		{"idx without images", "[dataset]\nkind = \"idx\"\nlabels = \"l\"\n",
			`c.toml: dataset.images = "": must name the images file (in dataset.path, if set) when dataset.kind = "idx"`},
		{"cifar without path", "[dataset]\nkind = \"cifar10\"\n",
			`c.toml: dataset.path = "": must be set when dataset.kind = "cifar10" (only MNIST ships with neateval)`},
		{"mean and std lengths", "[dataset]\nmean = [0.5, 0.5, 0.5]\nstd = [0.2]\n",
			`c.toml: dataset.std = [0.2]: must have as many entries as dataset.mean (3)`},
		{"std zero", "[dataset]\nmean = [0.5]\nstd = [0.0]\n",
			`c.toml: dataset.std[0] = 0.0: must be > 0 and finite`},
		{"limit negative", "[dataset]\nlimit = -1\n",
			`c.toml: dataset.limit = -1: must be ≥ 0 (0 = all images)`},
		{"fault rate", "[vram]\nfault_rate = 1.5\n",
			`c.toml: vram.fault_rate = 1.5: must be in [0, 1]`},
		{"fault_at zero", "[vram]\nfault_at = [4, 0]\n",
			`c.toml: vram.fault_at[1] = 0: must be ≥ 1 (allocations are numbered from 1)`},
		{"log level", "[output]\nlog_level = \"verbose\"\n",
			`c.toml: output.log_level = "verbose": must be one of "trace", "debug", "info", "warn", "error"`},
		{"empty results", "[output]\nresults = \"\"\n",
			`c.toml: output.results = "": must name a file`},
		{"wrong type", "[eval]\neval_batch_size = \"big\"\n",
			`c.toml: line 2 (last key "eval.eval_batch_size"): incompatible types: TOML value has type string; destination has type integer`},
		{"float for an integer", "[eval]\neval_batch_size = 1.5\n",
			`c.toml: line 2 (last key "eval.eval_batch_size"): incompatible types: TOML value has type float64; destination has type integer`},
		{"bad size string", "[vram]\nmemory_bytes = \"16 GB of RAM\"\n",
			`c.toml: line 2 (key "vram.memory_bytes"): invalid size "16 GB of RAM": want a number followed by an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)`},
		{"negative size", "[vram]\npopulation_gpu_chunk_bytes = -5\n",
			`c.toml: line 2 (key "vram.population_gpu_chunk_bytes"): invalid size -5: must be ≥ 0`},
		{"float size", "[vram]\nmemory_bytes = 1.5\n",
			`c.toml: line 2 (key "vram.memory_bytes"): invalid size 1.5: want an integer number of bytes or a string such as "16GiB", "512MiB", "2GB"`},
		{"syntax error", "[eval]\neval_batch_size = 10\nthreads = = 2\n",
			`c.toml: line 3 (key "eval.threads"): expected value but found '=' instead`},
		{"unterminated string", "[output]\nresults = \"r.jsonl\n",
			`c.toml: line 2 (key "output.results"): strings cannot contain newlines`},
		{"duplicate key", "[eval]\nthreads = 1\nthreads = 2\n",
			`c.toml: line 3 (key "eval.threads"): Key 'eval.threads' has already been defined.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.toml), "c.toml")
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("%T is not a *FileError", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Error("error spans several lines")
			}
		})
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := Load("no/such/config.toml")
	if err == nil || err.Error() != "no/such/config.toml: no such file or directory" {
		t.Fatalf("got %v", err)
	}
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Errorf("%T is not a *FileError", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Error("error does not match os.ErrNotExist")
	}
}

func TestSuggestKey(t *testing.T) {
	known := knownKeys()
	tests := []struct{ in, want string }{
		{"eval.eval_batchsize", "eval.eval_batch_size"},
		{"vram.vram_usage_treshold", "vram.vram_usage_threshold"},
		{"dataset.synthetic_sise", "dataset.synthetic_size"},
		{"output.log", ""},
		{"vram.population_gpu_chunk_byte", "vram.population_gpu_chunk_bytes"},
		{"eval.dtype_x", "eval.dtype"},
		{"evl", "eval"},
		{"output.results_path", ""},
		{"zzz.qqq", ""},
	}
	for _, tt := range tests {
		if got := suggestKey(tt.in, known); got != tt.want {
			t.Errorf("suggestKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzConfig(f *testing.F) {
	if data, err := os.ReadFile("../config.toml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"", "[eval]\neval_batch_size = 10\n", "[vram]\nmemory_bytes = \"16GiB\"\n",
		"[vram]\nmemory_bytes = [1]\n", "[vram]\nmemory_bytes = {a = 1}\n", "[[eval]]\nx=1\n",
		"eval = 3\n", "[dataset]\nmean = [\"a\"]\n", "a.b.c.d = 1\n", "[vram]\nfault_at = [1.5]\n",
		"[eval]\nthreads = 9223372036854775807\n", "[vram]\nmemory_bytes = \"9999999999TiB\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.toml")
		if err != nil {
			if cfg != nil {
				t.Error("config returned with an error")
			}
			if !strings.HasPrefix(err.Error(), "fuzz.toml: ") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("accepted config fails Validate: %v", err)
		}
	})
}

func TestUnknownKeysReportedAtMostThree(t *testing.T) {
	_, err := Parse([]byte("[eval]\na1 = 1\na2 = 2\na3 = 3\na4 = 4\na5 = 5\n[x]\n[x.y]\nz = 1\n"), "c.toml")
	want := `c.toml: unknown key "eval.a1"; unknown key "eval.a2"; unknown key "eval.a3"; and 3 more unknown keys`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestEvolveConfigErrors(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"[evolve]\npopulation_size = 1\n", `c.toml: evolve.population_size = 1: must be in 2 … 1048576`},
		{"[evolve]\ninit = \"random\"\n", `c.toml: evolve.init = "random": must be one of "minimal", "conv", "generate", "fixed"`},
		{"[evolve]\nkernels = [3, 4]\n", `c.toml: evolve.kernels[1] = 4: must be odd, 1 … 63 (so the default padding keeps the image size)`},
		{"[evolve]\nkernels = []\n", `c.toml: evolve.kernels = []: must list at least one kernel size`},
		{"[evolve]\nactivations = [\"swish\"]\n", `c.toml: evolve.activations[0] = "swish": must be one of "identity", "relu", "leaky_relu", "tanh", "sigmoid", "gelu"`},
		{"[evolve]\np_add_conv = 1.5\n", `c.toml: evolve.p_add_conv = 1.5: must be in [0, 1]`},
		{"[evolve]\nmin_channels = 8\nmax_channels = 4\n", `c.toml: evolve.max_channels = 4: must be in min_channels (8) … 65536`},
		{"[evolve]\nelitism = 50\n", `c.toml: evolve.elitism = 50: must be in 0 … evolve.population_size (40)`},
		{"[evolve]\nspecies_elitism = 0\n", `c.toml: evolve.species_elitism = 0: must be ≥ 1 (the best species always stays)`},
		{"[evolve]\nsurvival_threshold = 0.0\n", `c.toml: evolve.survival_threshold = 0.0: must be in (0, 1]`},
		{"[evolve]\nparam_penalty = -1.0\n", `c.toml: evolve.param_penalty = -1.0: must be finite and ≥ 0`},
		{"[evolve]\nbest = \"best\"\n", `c.toml: evolve.best = "best": must name a .json file (the weights go beside it)`},
		{"[evolve]\nval_batch_final = 100\n", `c.toml: evolve.val_batch_final = 100: must be 0 (no growth) or ≥ evolve.val_batch > 0, with evolve.es_anneal > 0 (its schedule)`},
		{"[evolve]\nval_batch_final = 400\nes_anneal = 0\n", `c.toml: evolve.val_batch_final = 400: must be 0 (no growth) or ≥ evolve.val_batch > 0, with evolve.es_anneal > 0 (its schedule)`},
		{"[evolve]\nval_sise = 10\n", `c.toml: unknown key "evolve.val_sise" (did you mean "evolve.val_size"?)`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.toml), "c.toml")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q:\n got: %v\nwant: %s", tt.toml, err, tt.want)
		}
	}
}

// ValBatchAt grows the sample from val_batch to val_batch_final along
// es_anneal's half cosine, and is val_batch without val_batch_final.
func TestValBatchAt(t *testing.T) {
	e := Default().Evolve
	if got := e.ValBatchAt(700); got != e.ValBatch {
		t.Fatalf("no growth: generation 700 draws %d, want val_batch %d", got, e.ValBatch)
	}
	e.ValBatch, e.ValBatchFinal, e.ESAnneal = 200, 800, 1000
	for _, c := range []struct{ gen, want int }{{0, 200}, {500, 500}, {1000, 800}, {5000, 800}, {250, 288}} {
		if got := e.ValBatchAt(c.gen); got != c.want {
			t.Errorf("generation %d draws %d, want %d", c.gen, got, c.want)
		}
	}
	for g := 1; g <= 1000; g++ {
		if e.ValBatchAt(g) < e.ValBatchAt(g-1) {
			t.Fatalf("the sample shrinks at generation %d", g)
		}
	}
}
