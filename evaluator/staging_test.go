package evaluator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/evaltest"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
	"github.com/neateval/neateval/vram"
)

const mib = int64(1) << 20

// planEvent is the staging plan event as a log reader sees it.
type planEvent struct {
	Event      string `json:"event"`
	Mode       string `json:"mode"`
	Chunks     int    `json:"chunks"`
	Prefetch   bool   `json:"prefetch"`
	Prefetched int    `json:"chunks_prefetched"`
	Single     bool   `json:"single_budget"`
}

// planEvents reads the plan events from JSON log lines.
func planEvents(t testing.TB, log []byte) []planEvent {
	t.Helper()
	var out []planEvent
	for _, line := range bytes.Split(bytes.TrimSpace(log), []byte("\n")) {
		var ev planEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if ev.Event == staging.EventPlan {
			out = append(out, ev)
		}
	}
	return out
}

// footprints are the planner's figures of a population on b.
type footprints struct {
	sumModel, maxModel int64
	acts               []int64 // largest first
}

func footprintsOf(t testing.TB, b evaluator.Backend, pop *neat.Population, batch int, cached bool) footprints {
	t.Helper()
	var f footprints
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			t.Fatal(err)
		}
		fp := b.Footprint(gr, batch, cached)
		f.sumModel += fp.Model
		f.maxModel = max(f.maxModel, fp.Model)
		f.acts = append(f.acts, fp.Act)
	}
	sort.Slice(f.acts, func(i, j int) bool { return f.acts[i] > f.acts[j] })
	return f
}

func (f footprints) topActs(p int) int64 {
	var s int64
	for _, a := range f.acts[:min(p, len(f.acts))] {
		s += a
	}
	return s
}

// TestStagingEquivalence is issue 4's "done means": the same population
// gets the same fitness in gpu_resident and cpu_staged, with and without a
// chunk-bytes limit (the single budget), with fitness_eval_parallel 1 to 4,
// with and without the validation cache on the device, and with and without
// prefetch. The plan event in the log shows which mode, how many chunks and
// whether prefetch ran, so each case proves it ran the way it is named.
func TestStagingEquivalence(t *testing.T) {
	const batch = 24
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	pop := neat.Generate(21, 16, in, 5, neat.DefaultGenConfig())
	ds := datasets.Synthetic(64, 1, 12, 12, 5, 21)
	const device = 64 * mib
	b := newCPU(t, evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: device, Threads: 1})

	base := evaltest.Evaluate(t, b, ds, pop, staging.DefaultConfig(),
		evaluator.Options{EvalBatchSize: batch, Parallel: 1, Threads: 1, CacheData: true})
	for _, r := range base {
		if r.Err != nil {
			t.Fatalf("baseline: genome %d: %v", r.GenomeID, r.Err)
		}
	}

	for _, mode := range []string{"resident", "staged-chunk-bytes", "staged-single-budget"} {
		for par := 1; par <= 4; par++ {
			for _, cached := range []bool{true, false} {
				for _, prefetch := range []bool{false, true} {
					name := fmt.Sprintf("%s/par%d/cache=%v/prefetch=%v", mode, par, cached, prefetch)
					t.Run(name, func(t *testing.T) {
						f := footprintsOf(t, b, pop, batch, cached)
						st := staging.DefaultConfig()
						st.Prefetch = prefetch
						wantMode, wantChunks := staging.GPUResident, 1
						switch mode {
						case "staged-chunk-bytes":
							st.Adaptive = false
							st.ChunkBytes = max(f.maxModel, f.sumModel/5)
							wantMode, wantChunks = staging.CPUStaged, 5
						case "staged-single-budget":
							// A single budget of weights and activations
							// together, below what one chunk of every
							// genome would take: Σ M_model + the P largest
							// M_act.
							st.Adaptive = false
							frac := float64(f.sumModel/3+f.topActs(par)) / float64(device)
							st.BatchFracMin, st.BatchFracMax = frac, frac
							wantMode, wantChunks = staging.CPUStaged, 2
						}
						var log bytes.Buffer
						logger := zerolog.New(zerolog.SyncWriter(&log))
						rs := evaltest.Evaluate(t, b, ds, pop, st, evaluator.Options{
							EvalBatchSize: batch, Parallel: par, Threads: 2, CacheData: cached, Logger: &logger,
						})
						evaltest.Identical(t, base, rs)
						plans := planEvents(t, log.Bytes())
						if len(plans) != 1 {
							t.Fatalf("%d plan events, want 1", len(plans))
						}
						p := plans[0]
						if p.Mode != string(wantMode) || p.Chunks < wantChunks {
							t.Errorf("plan: mode %s with %d chunks, want %s with at least %d", p.Mode, p.Chunks, wantMode, wantChunks)
						}
						if p.Single != (mode != "staged-chunk-bytes") {
							t.Errorf("plan: single budget %v", p.Single)
						}
						if wantPrefetch := prefetch && wantMode == staging.CPUStaged; p.Prefetch != wantPrefetch || (p.Prefetch && p.Prefetched != p.Chunks-1) {
							t.Errorf("plan: prefetch %v (%d of %d chunks), want %v", p.Prefetch, p.Prefetched, p.Chunks, wantPrefetch)
						}
					})
				}
			}
		}
	}
	if st := b.Device().Stats(); st.Allocated != 0 {
		t.Errorf("%d bytes left on the device after every evaluator closed", st.Allocated)
	}
}

// largest returns the genome of pop with the most weight bytes.
func largest(t testing.TB, pop *neat.Population) *neat.Genome {
	t.Helper()
	var best *neat.Genome
	var bytes int64
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			t.Fatal(err)
		}
		if n := gr.WeightBytes(4); n > bytes {
			best, bytes = g, n
		}
	}
	return best
}

// hugeGenome is conv 3×3 to ch channels, conv 5×5 to ch, global average
// pool, dense: the 5×5 conv's ch²·25 float32 weights dominate (20 MB for
// ch = 448).
func hugeGenome(id int64, in neat.Input, classes, ch int) *neat.Genome {
	fill := func(shape ...int) *neat.Tensor {
		t := &neat.Tensor{Shape: shape}
		t.Data = make([]float32, t.Len())
		for i := range t.Data {
			t.Data[i] = float32(i%7-3) * 1e-3
		}
		return t
	}
	c1 := neat.Node{ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, OutChannels: ch, Kernel: 3, Padding: neat.PaddingDefault}
	c2 := neat.Node{ID: 2, Op: neat.OpConv2D, Inputs: []int{1}, OutChannels: ch, Kernel: 5, Padding: neat.PaddingDefault}
	gap := neat.Node{ID: 3, Op: neat.OpGlobalAvgPool, Inputs: []int{2}, Padding: neat.PaddingDefault}
	d := neat.Node{ID: 4, Op: neat.OpDense, Inputs: []int{3}, OutFeatures: classes, Padding: neat.PaddingDefault}
	return &neat.Genome{ID: id, Output: 4, Nodes: []neat.Node{c1, c2, gap, d}, Params: map[int]*neat.Params{
		1: {Weight: fill(ch, in.Channels, 3, 3), Bias: fill(ch)},
		2: {Weight: fill(ch, ch, 5, 5), Bias: fill(ch)},
		4: {Weight: fill(classes, ch), Bias: fill(classes)},
	}}
}

// TestGenomeLargerThanAnyChunk: a wide genome among small ones, on a small
// device with a chunk budget below its weights, is planned alone in an
// oversize chunk and scored, with the fitness it gets on a roomy device.
// A genome whose weights cannot fit on the device at all gets an error
// result that says so, and the others are scored.
func TestGenomeLargerThanAnyChunk(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	const classes = 5
	pop := neat.Generate(5, 10, in, classes, neat.DefaultGenConfig())
	wide := largest(t, neat.Generate(6, 8, in, classes, neat.WideGenConfig()))
	wide.ID = 100
	pop.Genomes = slices.Insert(pop.Genomes, 4, wide)
	ds := datasets.Synthetic(40, 1, 12, 12, classes, 5)
	opts := evaluator.Options{EvalBatchSize: 40, Parallel: 2, Threads: 2, CacheData: true}

	roomy := newCPU(t, evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 256 * mib, Threads: 1})
	want := evaltest.Evaluate(t, roomy, ds, pop, staging.DefaultConfig(), opts)

	small := newCPU(t, evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 16 * mib, Threads: 1})
	f := footprintsOf(t, small, &neat.Population{Input: in, NumClasses: classes, Genomes: pop.Genomes[:4]}, 40, true)
	st := staging.DefaultConfig()
	st.Adaptive = false
	st.ChunkBytes = 2 * f.maxModel // several small genomes per chunk, the wide one over it
	wideModel := small.Footprint(mustCompile(t, wide, in, classes), 40, true).Model
	if wideModel <= st.ChunkBytes {
		t.Fatalf("the wide genome's weights (%d bytes) fit a chunk of %d", wideModel, st.ChunkBytes)
	}
	e, err := evaluator.New(small, ds, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Evaluate(context.Background(), pop, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := e.Manager().Plan()
	e.Close()
	evaltest.Identical(t, want, got)
	if got[4].Err != nil {
		t.Errorf("wide genome: %v", got[4].Err)
	}
	alone := false
	for _, c := range plan.Chunks {
		if slices.Contains(c.Items, 4) {
			alone = len(c.Items) == 1 && c.Oversize
		}
	}
	if !alone || len(plan.Chunks) < 3 {
		t.Errorf("the wide genome is not alone in an oversize chunk (%d chunks)", len(plan.Chunks))
	}

	// Weights of 20 MB cannot load on a 16 MiB device.
	huge := hugeGenome(200, in, classes, 448)
	pop.Genomes = slices.Insert(pop.Genomes, 2, huge)
	got = evaltest.Evaluate(t, small, ds, pop, st, opts)
	r := got[2]
	if r.Err == nil || !errors.Is(r.Err, vram.ErrOutOfMemory) || r.GenomeID != 200 {
		t.Fatalf("huge genome: %+v, want an out-of-memory error result", r)
	}
	t.Logf("huge genome: %v", r.Err)
	for i, g := range got {
		if i != 2 && g.Err != nil {
			t.Errorf("genome %d: %v", g.GenomeID, g.Err)
		}
	}
	evaltest.Identical(t, want, slices.Delete(got, 2, 3))
}

func mustCompile(t testing.TB, g *neat.Genome, in neat.Input, classes int) *neat.Graph {
	t.Helper()
	gr, err := neat.Compile(g, in, classes)
	if err != nil {
		t.Fatal(err)
	}
	return gr
}

// TestStagingEmptyAndOne: a population of one genome is scored in both
// modes; a population with no valid genome plans nothing.
func TestStagingEmptyAndOne(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 8, Width: 8}
	pop := neat.Generate(3, 1, in, 3, neat.DefaultGenConfig())
	ds := datasets.Synthetic(30, 1, 8, 8, 3, 3)
	b := newCPU(t, evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 32 * mib, Threads: 1})
	staged := staging.DefaultConfig()
	staged.Adaptive = false
	staged.ChunkBytes = 1024
	var results [][]evaluator.Result
	for _, st := range []staging.Config{staging.DefaultConfig(), staged} {
		rs := evaltest.Evaluate(t, b, ds, pop, st, evaluator.Options{EvalBatchSize: 7})
		if len(rs) != 1 || rs[0].Err != nil || rs[0].Images != 30 {
			t.Fatalf("one genome: %+v", rs)
		}
		results = append(results, rs)
	}
	evaltest.Identical(t, results[0], results[1])

	bad := &neat.Population{Input: in, NumClasses: 3, Genomes: []*neat.Genome{{ID: 9, Output: 42}}}
	for _, st := range []staging.Config{staging.DefaultConfig(), staged} {
		var log bytes.Buffer
		logger := zerolog.New(zerolog.SyncWriter(&log))
		rs := evaltest.Evaluate(t, b, ds, bad, st, evaluator.Options{Logger: &logger})
		if len(rs) != 1 || rs[0].Err == nil {
			t.Errorf("invalid genome: %+v", rs)
		}
		if p := planEvents(t, log.Bytes()); len(p) != 0 {
			t.Errorf("no genome to load, yet a plan: %+v", p)
		}
	}
}

// TestStagedCancelLeavesDeviceClean: a run cancelled part way through a
// staged generation with prefetch returns the context's error, keeps the
// results it finished, and leaves nothing on the device but the validation
// cache: the chunk prefetched ahead is unloaded too.
func TestStagedCancelLeavesDeviceClean(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 10, Width: 10}
	pop := neat.Generate(8, 24, in, 4, neat.DefaultGenConfig())
	ds := datasets.Synthetic(32, 1, 10, 10, 4, 8)
	b := newCPU(t, evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: 64 * mib, Threads: 1})
	f := footprintsOf(t, b, pop, 32, true)
	st := staging.DefaultConfig()
	st.Adaptive = false
	st.ChunkBytes = max(f.maxModel, f.sumModel/6)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var scored atomic.Int32
	e, err := evaluator.New(b, ds, st, evaluator.Options{
		EvalBatchSize: 32, Parallel: 1, CacheData: true,
		OnResult: func(evaluator.Result) {
			if scored.Add(1) == 3 {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cache := b.Device().Stats().Allocated
	rs, err := e.Evaluate(ctx, pop, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Evaluate: %v, want context.Canceled", err)
	}
	if !e.Manager().Plan().Prefetch {
		t.Fatal("no prefetch in the plan")
	}
	done, missing := 0, 0
	for _, r := range rs {
		switch {
		case r.Err == nil:
			done++
		case errors.Is(r.Err, evaluator.ErrNotEvaluated):
			missing++
		default:
			t.Errorf("genome %d: %v", r.GenomeID, r.Err)
		}
	}
	if done < 3 || missing == 0 || done+missing != len(pop.Genomes) {
		t.Errorf("%d scored, %d not evaluated, of %d", done, missing, len(pop.Genomes))
	}
	if got := b.Device().Stats().Allocated; got != cache {
		t.Errorf("after the cancelled run: %d bytes allocated, want the validation cache's %d", got, cache)
	}
}

// TestPackingMixedGenerated packs a population of mixed sizes, generated
// with the small and the wide presets, by the CPU backend's footprints,
// and logs how many chunks packing by real sizes used against the lower
// bound ⌈Σ M_model / budget⌉ and against slots sized by the largest genome.
func TestPackingMixedGenerated(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	small := neat.Generate(1, 200, in, 10, neat.DefaultGenConfig())
	wide := neat.Generate(2, 20, in, 10, neat.WideGenConfig())
	pop := &neat.Population{Input: in, NumClasses: 10}
	for i, g := range wide.Genomes {
		pop.Genomes = append(pop.Genomes, small.Genomes[i*10:i*10+10]...)
		pop.Genomes = append(pop.Genomes, g)
	}
	b := newCPU(t, evaluator.BackendOptions{DType: vram.Float32, MemoryBytes: mib, Threads: 1})
	for _, tc := range []struct {
		chunk int64
		batch int
		par   int
	}{
		{1 * mib, 1000, 1},
		{4 * mib, 1000, 1},
		{16 * mib, 1000, 1},
		{16 * mib, 10000, 4},
		{64 * mib, 10000, 2},
	} {
		items := make([]staging.Item, len(pop.Genomes))
		var models []int64
		for i, g := range pop.Genomes {
			fp := b.Footprint(mustCompile(t, g, in, 10), tc.batch, true)
			items[i] = staging.Item{Index: i, Model: fp.Model, Act: fp.Act}
			models = append(models, fp.Model)
		}
		slices.Sort(models)
		cfg := staging.DefaultConfig()
		cfg.Adaptive = false
		cfg.ChunkBytes = tc.chunk
		cfg.Parallel = tc.par
		const total, fixed = 16 << 30, 10000 * 784 * 4
		p, err := staging.NewPlan(cfg, items, total, fixed)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d genomes (M_model %d B to %d B, median %d B), chunk %s, batch %d, P %d on 16 GiB: %d chunks, lower bound %d, by largest slot %d, %d oversize",
			len(items), models[0], models[len(models)-1], models[len(models)/2], vram.FormatBytes(tc.chunk), tc.batch, tc.par,
			len(p.Chunks), p.LowerBound, p.SlotChunks, countOversize(p))
		if len(p.Chunks) < p.LowerBound || len(p.Chunks) > p.SlotChunks {
			t.Errorf("%d chunks outside [lower bound %d, by largest %d]", len(p.Chunks), p.LowerBound, p.SlotChunks)
		}
		seen := make([]int, len(items))
		for _, c := range p.Chunks {
			if !c.Oversize && (c.Model > p.ModelBudget || c.Peak > p.PeakBudget) {
				t.Errorf("chunk over budget: weights %d, peak %d", c.Model, c.Peak)
			}
			for _, i := range c.Items {
				seen[i]++
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Errorf("genome %d in %d chunks", i, n)
			}
		}
	}
}

func countOversize(p *staging.Plan) int {
	n := 0
	for _, c := range p.Chunks {
		if c.Oversize {
			n++
		}
	}
	return n
}
