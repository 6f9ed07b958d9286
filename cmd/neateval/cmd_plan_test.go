package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/neateval/neateval/run"
)

// planJSON runs `neateval plan --json` with args and decodes its report.
func planJSON(t *testing.T, args ...string) run.PlanReport {
	t.Helper()
	var stdout bytes.Buffer
	if err := runMain(context.Background(), append([]string{"plan", "--json"}, args...), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("plan %v: %v", args, err)
	}
	var rep run.PlanReport
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("plan --json output is not the report: %v", err)
	}
	if dec.More() {
		t.Fatal("plan --json printed more than one object")
	}
	return rep
}

// checkReport checks what every report must satisfy: its chunks hold every
// valid genome once, stay within the budgets unless oversize, and agree
// with the totals.
func checkReport(t *testing.T, r run.PlanReport) {
	t.Helper()
	if len(r.ChunkList) != r.Chunks {
		t.Errorf("%d chunks listed, %d counted", len(r.ChunkList), r.Chunks)
	}
	n, prefetched := 0, 0
	var model, peak int64
	for k, c := range r.ChunkList {
		n += c.Genomes
		model += c.ModelBytes
		peak = max(peak, c.PeakBytes)
		if c.Prefetched {
			prefetched++
		}
		if r.Mode == "cpu_staged" && !c.Oversize && (c.ModelBytes > r.ModelBudgetBytes || c.PeakBytes > r.PeakBudgetBytes) {
			t.Errorf("chunk %d over the budgets: %+v", k+1, c)
		}
	}
	if n != r.Genomes-r.Invalid || model != r.Model.Total {
		t.Errorf("chunks hold %d genomes and %d bytes of weights; want %d and %d", n, model, r.Genomes-r.Invalid, r.Model.Total)
	}
	if prefetched != r.Prefetched || r.Prefetch != (prefetched > 0) || r.PeakPredictedBytes < peak {
		t.Errorf("prefetch %v, %d prefetched (listed %d), predicted peak %d below the largest chunk's %d",
			r.Prefetch, r.Prefetched, prefetched, r.PeakPredictedBytes, peak)
	}
	if r.Chunks < r.LowerBound || r.Chunks > max(r.ByLargest, 1) && r.Mode == "cpu_staged" {
		t.Errorf("%d chunks outside [lower bound %d, by largest %d]", r.Chunks, r.LowerBound, r.ByLargest)
	}
}

// TestPlanSeedExample is the seed's worked example through a generated
// population: 10,000 genomes, 2 GiB of chunk weights, an 80% ceiling,
// eval_batch_size 25000 over a 10,000-image set (MNIST's size) cached on a
// 16 GiB card, one forward at a time. The seed's genomes are unspecified; these are the small
// preset's (37 KiB of weights at the median, 2.7 GiB of activations at
// most at 10,000 images), and with adaptive_population_vram on they fit
// the resident threshold. Forced to stage, they take one chunk, where
// sizing every slot by the largest genome would take 5.
//
// Under the race detector, which makes generating and compiling 10,000
// genomes take a minute, the population is 1,000 genomes and the figures
// that depend on it are not checked.
func TestPlanSeedExample(t *testing.T) {
	n := 10000
	if raceEnabled() {
		n = 1000
	}
	const seed = `
[population]
generate_size = %d
[dataset]
kind = "synthetic"
synthetic_size = 10000
[eval]
eval_batch_size = 25000
fitness_eval_parallel = 1
[vram]
adaptive_population_vram = %v
population_gpu_chunk_bytes = 2_000_000_000
vram_usage_threshold = 0.80
cache_val_on_gpu = true
`
	const gib = int64(1) << 30
	threshold := 0.80
	cache := int64(10000 * 784 * 4) // a multiple of 512: the allocator's rounding adds nothing
	for _, adaptive := range []bool{true, false} {
		r := planJSON(t, "--config", writeConfig(t, fmt.Sprintf(seed, n, adaptive)), "--device-memory", "16GiB")
		checkReport(t, r)
		if r.Genomes != n || r.Invalid != 0 || r.Images != 10000 || r.Batch != 10000 || r.Parallel != 1 {
			t.Errorf("genomes %d (invalid %d), images %d, batch %d, parallel %d", r.Genomes, r.Invalid, r.Images, r.Batch, r.Parallel)
		}
		if r.TotalBytes != 16*gib || r.DeviceSource != "--device-memory" || r.ValCacheBytes != cache || r.FixedBytes != cache {
			t.Errorf("device %d (%s), cache %d, fixed %d", r.TotalBytes, r.DeviceSource, r.ValCacheBytes, r.FixedBytes)
		}
		if r.ModelBudgetBytes != 2_000_000_000 || r.PeakBudgetBytes != int64(threshold*float64(16*gib))-cache || r.SingleBudget {
			t.Errorf("budgets %d / %d (single %v)", r.ModelBudgetBytes, r.PeakBudgetBytes, r.SingleBudget)
		}
		if n != 10000 {
			continue
		}
		if r.Chunks != 1 || r.LowerBound != 1 || r.ByLargest != 5 || r.Prefetch {
			t.Errorf("%d chunks, lower bound %d, by largest %d, prefetch %v; want 1, 1, 5, no", r.Chunks, r.LowerBound, r.ByLargest, r.Prefetch)
		}
		want := fmt.Sprintf("POP | GPU resident | models=0.51 GB peak≤%s (≤50%% VRAM) | 10000 genomes", gbOf(r.PeakPredictedBytes))
		if !adaptive {
			want = "POP | CPU staged | models≤2.00 GB peak≤12.77 GB (80% VRAM−overhead) | 10000 genomes/chunk"
		}
		if r.Line != want {
			t.Errorf("adaptive %v: line\n%s\nwant\n%s", adaptive, r.Line, want)
		}
		if r.Model.Total+r.Act.Max != r.PeakPredictedBytes {
			t.Errorf("predicted peak %d, want Σ M_model %d + M_act max %d", r.PeakPredictedBytes, r.Model.Total, r.Act.Max)
		}
	}
}

// raceEnabled says whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func gbOf(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/(1<<30)) }

const manyChunks = `
[population]
generate_size = 300
generate_seed = 3
[dataset]
kind = "synthetic"
synthetic_size = 500
[eval]
eval_batch_size = 128
fitness_eval_parallel = 2
[vram]
adaptive_population_vram = false
population_gpu_chunk_bytes = "256KiB"
`

// TestPlanTable: the human output starts with the POP line, lists the
// figures, and one row per chunk up to 20, then how many more.
func TestPlanTable(t *testing.T) {
	cfg := writeConfig(t, manyChunks)
	r := planJSON(t, "--config", cfg, "--device-memory", "1GiB")
	checkReport(t, r)
	if r.Mode != "cpu_staged" || r.Chunks <= planRows+1 || r.Parallel != 2 || r.Batch != 128 {
		t.Fatalf("mode %s, %d chunks, parallel %d, batch %d: want cpu_staged, over %d chunks, 2, 128", r.Mode, r.Chunks, r.Parallel, r.Batch, planRows+1)
	}
	var stdout bytes.Buffer
	if err := runMain(context.Background(), []string{"plan", "--config", cfg, "--device-memory", "1GiB"}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != r.Line || !strings.HasPrefix(r.Line, "POP | CPU staged | models≤0.00 GB peak≤0.80 GB (80% VRAM−overhead) | ") {
		t.Errorf("first line %q, want the POP line %q", lines[0], r.Line)
	}
	for _, want := range []string{
		"device memory    1.00 GiB (--device-memory)\n",
		"mode             cpu_staged (adaptive_population_vram = false: always staged)\n",
		"model budget     256.00 KiB of weights per chunk (population_gpu_chunk_bytes)\n",
		fmt.Sprintf("chunks           %d (lower bound %d; %d sizing every slot by the largest genome)\n", r.Chunks, r.LowerBound, r.ByLargest),
		"batch assumed    128 images (eval_batch_size 128), 2 forwards in flight (fitness_eval_parallel)\n",
		fmt.Sprintf("\n chunk  genomes      weights         peak\n     1 %8d ", r.ChunkList[0].Genomes),
		fmt.Sprintf("\n%6d %8d ", planRows, r.ChunkList[planRows-1].Genomes),
		fmt.Sprintf("\n… %d more\n", r.Chunks-planRows),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 45 {
		t.Errorf("%d lines: the table is not capped", n)
	}
}

func TestPlanErrors(t *testing.T) {
	cfg := writeConfig(t, manyChunks)
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		// 500 images of 28×28 in float32 are 1.5 MB: more than 80% of 1 MiB.
		{[]string{"--device-memory", "1MiB"}, 1, "plan: a device of 1.00 MiB is too small for this run: staging: fixed memory 1568256 bytes leaves nothing under the ceiling of 80% of 1048576 bytes"},
		{[]string{"--device-memory", "lots"}, 2, `plan: --device-memory: invalid size "lots"`},
		{[]string{"--device-memory", "0"}, 2, `plan: --device-memory "0": must be > 0`},
		{[]string{"--eval-batch-size", "0"}, 2, "flag --eval-batch-size: eval.eval_batch_size = 0: must be ≥ 1"},
		{[]string{"extra"}, 2, `plan: unexpected argument "extra"`},
	} {
		var stderr bytes.Buffer
		err := runMain(context.Background(), append([]string{"plan", "--config", cfg}, tc.args...), &bytes.Buffer{}, &stderr)
		if code := exitCode(err); code != tc.code || err == nil || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("plan %v: exit %d, %v; want exit %d, %q", tc.args, code, err, tc.code, tc.msg)
		}
	}
}

// TestPlanFlags: --population, --eval-batch-size and --fitness-eval-parallel
// override the config as they do for run, and without --device-memory the
// configured device is planned for.
func TestPlanFlags(t *testing.T) {
	dir := t.TempDir()
	popPath := filepath.Join(dir, "pop.json")
	if err := runMain(context.Background(), []string{"gen", "--out", popPath, "--size", "7", "--seed", "4"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, manyChunks+"memory_bytes = \"300MiB\"\ncuda_graph_memory_reserve_bytes = \"1MiB\"\n")
	r := planJSON(t, "--config", cfg, "--population", popPath, "--eval-batch-size", "1000", "--fitness-eval-parallel", "3")
	checkReport(t, r)
	if r.Population != popPath || r.Genomes != 7 || r.Batch != 500 || r.EvalBatchSize != 1000 || r.Parallel != 3 {
		t.Errorf("population %s (%d genomes), batch %d of eval_batch_size %d, parallel %d", r.Population, r.Genomes, r.Batch, r.EvalBatchSize, r.Parallel)
	}
	if r.TotalBytes != 300<<20 || !strings.HasPrefix(r.DeviceSource, "the configured cpu device") {
		t.Errorf("device %d bytes from %q, want the configured 300 MiB", r.TotalBytes, r.DeviceSource)
	}
	if r.GraphReserveBytes != 1<<20 || r.FixedBytes != r.ValCacheBytes+1<<20 {
		t.Errorf("fixed %d = cache %d + reserve %d", r.FixedBytes, r.ValCacheBytes, r.GraphReserveBytes)
	}
	var stdout bytes.Buffer
	if err := runMain(context.Background(), []string{"help", "plan"}, &stdout, &bytes.Buffer{}); err != nil || !strings.Contains(stdout.String(), "-device-memory SIZE") {
		t.Errorf("help plan: %v\n%s", err, stdout.String())
	}
}

// TestPlanMatchesRun: what `plan` predicts for the configured device is
// what `run` plans and logs when it scores the same population.
func TestPlanMatchesRun(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, `
[population]
generate_size = 40
generate_seed = 9
[dataset]
kind = "synthetic"
synthetic_size = 64
synthetic_seed = 2
[eval]
eval_batch_size = 32
fitness_eval_parallel = 2
[vram]
memory_bytes = "64MiB"
adaptive_population_vram = false
population_gpu_chunk_bytes = "128KiB"
cuda_graph_memory_reserve_bytes = "2MiB"
[output]
results = "`+filepath.Join(dir, "results.jsonl")+`"
log_format = "json"
progress = "off"
`)
	r := planJSON(t, "--config", cfg)
	checkReport(t, r)
	var stderr syncBuffer
	if err := runMain(context.Background(), []string{"run", "--config", cfg}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var logged map[string]any
	for _, m := range jsonLines(t, stderr.String()) {
		if m["event"] == "plan" {
			logged = m
		}
	}
	if logged == nil {
		t.Fatalf("run logged no plan event:\n%s", stderr.String())
	}
	for key, want := range map[string]any{
		"message":              r.Line,
		"mode":                 r.Mode,
		"total_bytes":          r.TotalBytes,
		"fixed_bytes":          r.FixedBytes,
		"model_budget_bytes":   r.ModelBudgetBytes,
		"peak_budget_bytes":    r.PeakBudgetBytes,
		"peak_predicted_bytes": r.PeakPredictedBytes,
		"single_budget":        r.SingleBudget,
		"genomes":              r.Genomes - r.Invalid,
		"genomes_per_chunk":    r.GenomesPerChunk,
		"chunks":               r.Chunks,
		"chunks_lower_bound":   r.LowerBound,
		"chunks_by_largest":    r.ByLargest,
		"prefetch":             r.Prefetch,
		"chunks_prefetched":    r.Prefetched,
	} {
		got := fmt.Sprint(logged[key])
		if f, ok := logged[key].(float64); ok {
			got = strconv.FormatFloat(f, 'f', -1, 64)
		}
		if got != fmt.Sprint(want) {
			t.Errorf("%s: run logged %s, plan says %v", key, got, want)
		}
	}
	if r.Chunks < 3 || !r.Prefetch {
		t.Errorf("%d chunks, prefetch %v: want a staged run of several chunks with prefetch", r.Chunks, r.Prefetch)
	}
}

// syncBuffer is a bytes.Buffer safe for the bar's ticker.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
