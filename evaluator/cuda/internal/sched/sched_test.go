package sched

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/neateval/neateval/evaluator/cuda/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// TestKernelsInPTX checks that every kernel a schedule can name is an entry
// point of the committed PTX, and that the PTX targets what the driver
// needs.
func TestKernelsInPTX(t *testing.T) {
	entry := regexp.MustCompile(`\.visible \.entry ([A-Za-z0-9_]+)\(`)
	have := map[string]bool{}
	for _, m := range kernels.Modules {
		if !regexp.MustCompile(`(?m)^\.target sm_80$`).MatchString(m.PTX) {
			t.Errorf("module %s: no .target sm_80 line (regenerate with make ptx)", m.Name)
		}
		for _, e := range entry.FindAllStringSubmatch(m.PTX, -1) {
			if have[e[1]] {
				t.Errorf("kernel %s is in two modules", e[1])
			}
			have[e[1]] = true
		}
	}
	for _, k := range Kernels {
		if !have[k] {
			t.Errorf("kernel %s is not in the PTX", k)
		}
	}
	if len(have) != len(Kernels) {
		t.Errorf("the PTX has %d entry points, the schedules use %d", len(have), len(Kernels))
	}
}

func graphs(t *testing.T, seed int64, n int, in neat.Input) []*neat.Graph {
	t.Helper()
	pop := neat.Generate(seed, n, in, 10, neat.DefaultGenConfig())
	var gs []*neat.Graph
	for _, g := range pop.Genomes {
		gr, err := neat.Compile(g, in, 10)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, gr)
	}
	return gs
}

// TestArenaAgainstLiveness compares the arena with the peak of the live
// bytes of the same schedule: never below it, and near it.
func TestArenaAgainstLiveness(t *testing.T) {
	worst := 1.0
	for _, in := range []neat.Input{{Channels: 1, Height: 28, Width: 28}, {Channels: 3, Height: 32, Width: 32}} {
		for _, g := range graphs(t, 5, 40, in) {
			for _, dt := range []vram.DType{vram.Float32, vram.BFloat16} {
				for _, b := range []int{1, 13, 256} {
					for _, o := range []struct{ cached, unfused bool }{{true, false}, {false, false}, {true, true}} {
						cached, opt := o.cached, Options{Unfused: o.unfused}
						p, err := BuildWith(g, dt, b, cached, opt)
						if err != nil {
							t.Fatal(err)
						}
						low := livePeak(g, dt, b, cached, opt)
						if p.ArenaBytes < low {
							t.Errorf("genome %d %v b=%d %+v: arena %d below the liveness peak %d", g.GenomeID, dt, b, o, p.ArenaBytes, low)
						}
						worst = max(worst, float64(p.ArenaBytes)/float64(low))
						_, act := FootprintWith(g, dt, b, cached, opt)
						if act != vram.RoundSize(p.ArenaBytes) {
							t.Errorf("Footprint %d, arena %d", act, p.ArenaBytes)
						}
					}
				}
			}
		}
	}
	t.Logf("worst arena / liveness peak: %.3f", worst)
	if worst > 1.25 {
		t.Errorf("the plan costs %.0f%% over the liveness peak", (worst-1)*100)
	}
}

// TestFusedPools checks which pools the schedules fuse: some of the
// random genomes' (their pools have strides below, at and above the
// window), each fused pool launching nothing of its own, and none with
// Options.Unfused.
func TestFusedPools(t *testing.T) {
	var fusedN, pools int
	for _, g := range graphs(t, 5, 40, neat.Input{Channels: 1, Height: 28, Width: 28}) {
		fused := FusedPools(g)
		for i, j := range fused {
			if j < 0 {
				continue
			}
			p := &g.Steps[j]
			if g.Steps[i].Node.Op != neat.OpConv2D || p.Inputs[0] != i || p.Node.Stride < p.Node.Kernel {
				t.Errorf("genome %d: step %d fused into step %d (%s %d/%d)", g.GenomeID, j, i, p.Node.Op, p.Node.Kernel, p.Node.Stride)
			}
		}
		count := func(o Options) (convpool, pool int) {
			p, err := BuildWith(g, vram.Float32, 5, true, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range p.Launches {
				switch name := Kernels[l.Kernel]; {
				case regexp.MustCompile(`_convpool_`).MatchString(name):
					convpool++
				case regexp.MustCompile(`^pool_`).MatchString(name):
					pool++
				}
			}
			return convpool, pool
		}
		n := 0
		for _, j := range fused {
			if j >= 0 {
				n++
			}
		}
		cp, p := count(Options{})
		ucp, up := count(Options{Unfused: true})
		if cp != n || ucp != 0 || up != p+n {
			t.Errorf("genome %d: %d fused pools; %d convpool and %d pool launches, unfused %d and %d", g.GenomeID, n, cp, p, ucp, up)
		}
		fusedN += n
		pools += up
	}
	t.Logf("%d of %d pools fused", fusedN, pools)
	if fusedN == 0 || fusedN == pools {
		t.Errorf("%d of %d pools fused: want some, not all", fusedN, pools)
	}
}

// livePeak replays the liveness schedule and returns the largest sum of
// live bytes: what any placement of the arena must hold at once. A
// convolution with a fused pool holds nothing; the pool's output is live
// from the convolution on.
func livePeak(g *neat.Graph, dt vram.DType, b int, cached bool, o Options) int64 {
	elem, n := int64(dt.Size()), int64(b)
	fused := FusedPools(g)
	size := func(i int) int64 {
		if !o.Unfused && fused[i] >= 0 {
			return 0
		}
		e := elem
		if i == len(g.Steps)-1 {
			e = 4
		}
		return alignUp(n * int64(g.Steps[i].Out.Size()) * e)
	}
	live := int64(Align) // the stats
	if !cached {
		live += alignUp(n*int64(g.Input.Size())*elem) + alignUp(n)
	}
	peak := live
	for i := range g.Steps {
		s := &g.Steps[i]
		var ws int64
		if len(s.Inputs) > 1 {
			ws = alignUp(n * int64(s.In.Size()) * 4)
		}
		add := size(i)
		if !o.Unfused {
			if j := fused[i]; j >= 0 {
				add = size(j) // the pool's output, from the convolution on
			} else if slices.Contains(fused, i) {
				add = 0 // counted at its convolution
			}
		}
		live += add
		peak = max(peak, live+ws)
		for _, r := range s.Release {
			live -= size(r)
		}
	}
	return peak
}

// TestArgsInBounds checks every pointer argument of every launch: arena
// offsets inside the arena, weight offsets inside the weight block.
func TestArgsInBounds(t *testing.T) {
	for _, g := range graphs(t, 9, 30, neat.Input{Channels: 1, Height: 12, Width: 12}) {
		_, _, weights := WeightLayout(g)
		if weights != g.Params {
			t.Errorf("genome %d: layout of %d weights, graph has %d", g.GenomeID, weights, g.Params)
		}
		for _, dt := range []vram.DType{vram.Float32, vram.BFloat16} {
			p, err := Build(g, dt, 7, false)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.Launches[len(p.Launches)-1].Kernel, kernel("reduce_logits"); got != want {
				t.Errorf("genome %d: last launch %s, want reduce_logits", g.GenomeID, Kernels[got])
			}
			for _, l := range p.Launches {
				if l.Grid[0] < 1 || l.Grid[1] < 1 || l.NArgs < 1 || l.NArgs > MaxArgs {
					t.Errorf("genome %d: %s: grid %v, %d args", g.GenomeID, Kernels[l.Kernel], l.Grid, l.NArgs)
				}
				for _, a := range l.Args[:l.NArgs] {
					switch a.Base {
					case Arena:
						if a.V < 0 || a.V >= p.ArenaBytes {
							t.Errorf("genome %d: %s: arena offset %d outside %d bytes", g.GenomeID, Kernels[l.Kernel], a.V, p.ArenaBytes)
						}
					case Weights:
						if a.V < 0 || a.V >= weights*int64(dt.Size()) {
							t.Errorf("genome %d: %s: weight offset %d outside %d weights", g.GenomeID, Kernels[l.Kernel], a.V, weights)
						}
					}
				}
			}
		}
	}
}

// TestPlan plans random regions and checks that regions live at the same
// time never overlap and that the arena covers them all.
func TestPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for run := range 300 {
		rs := make([]region, 1+rng.IntN(40))
		for i := range rs {
			from := int64(rng.IntN(20))
			rs[i] = region{size: alignUp(int64(1 + rng.IntN(5000))), from: from, to: from + int64(rng.IntN(6))}
		}
		peak := plan(rs)
		for i, a := range rs {
			if a.off%Align != 0 || a.off+a.size > peak {
				t.Fatalf("run %d: region %d at %d (+%d) in an arena of %d", run, i, a.off, a.size, peak)
			}
			for j, b := range rs[:i] {
				if a.to < b.from || b.to < a.from {
					continue
				}
				if a.off < b.off+b.size && b.off < a.off+a.size {
					t.Fatalf("run %d: regions %d and %d are live together and overlap", run, i, j)
				}
			}
		}
	}
}

func ExampleBuild() {
	g := &neat.Genome{ID: 1, Output: 2, Nodes: []neat.Node{
		{ID: 1, Op: neat.OpConv2D, Inputs: []int{0}, OutChannels: 4, Kernel: 3, Padding: neat.PaddingDefault},
		{ID: 3, Op: neat.OpGlobalAvgPool, Inputs: []int{1}, Padding: neat.PaddingDefault},
		{ID: 2, Op: neat.OpDense, Inputs: []int{3}, OutFeatures: 10, Padding: neat.PaddingDefault},
	}}
	gr, err := neat.InferShapes(g, neat.Input{Channels: 1, Height: 28, Width: 28}, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := Build(gr, vram.Float32, 1000, true)
	for _, l := range p.Launches {
		fmt.Println(Kernels[l.Kernel], l.Grid)
	}
	fmt.Println("arena", p.ArenaBytes)
	// Output:
	// gemm_m16_conv_fff [6125 1]
	// gap_ff [500 1]
	// gemm_m16_dense_fff [8 1]
	// reduce_logits [1 1]
	// arena 12560384
}

// TestPopSharedLimit counts the small preset's genomes at 28×28 whose
// frame fits a block: more with an H200's 227 KiB of dynamic shared
// memory than with the 46 KiB of a default block, none beyond the limit
// given, and a genome's tile no larger than its frame needs beyond 46 KiB.
func TestPopSharedLimit(t *testing.T) {
	gs := graphs(t, 7, 64, neat.Input{Channels: 1, Height: 28, Width: 28})
	fit := func(smem int64) int {
		n := 0
		for _, g := range gs {
			p := BuildPop(g, vram.Float32, smem)
			if p == nil {
				continue
			}
			if p.Frame > smem || p.Shared() > 4*max(min(PopSmem, smem), p.Frame) {
				t.Errorf("genome %d at %d floats: tile %d of frame %d", g.GenomeID, smem, p.Tile, p.Frame)
			}
			n++
		}
		return n
	}
	small, h200 := fit(PopSmem), fit(PopSmemH200)
	t.Logf("of %d genomes, %d fit in 46 KiB, %d in 227 KiB", len(gs), small, h200)
	if h200 <= small || fit(1024) > small {
		t.Errorf("%d genomes fit in 46 KiB, %d in 227 KiB, %d in 4 KiB", small, h200, fit(1024))
	}
}

// TestBuildPop checks the population tables of random genomes: every
// step reads and writes inside one image's frame, a tile fits in the
// block's shared memory, and a launch of several forwards needs no more
// device memory than the forwards' per-layer arenas together.
func TestBuildPop(t *testing.T) {
	in := neat.Input{Channels: 1, Height: 12, Width: 12}
	gs := graphs(t, 9, 40, in)
	var ps []*PopProgram
	var ns []int
	var arenas int64
	for i, g := range gs {
		p := BuildPop(g, vram.Float32, PopSmemH200)
		if p == nil {
			continue
		}
		if p.Tile < 1 || p.Shared() > 4*max(PopSmem, p.Frame) || p.Frame > PopSmemH200 || p.Logits+int64(g.NumClasses) > p.Frame || p.InOff+p.InSize > p.Frame {
			t.Errorf("genome %d: tile %d of frame %d, logits at %d, image at %d", g.GenomeID, p.Tile, p.Frame, p.Logits, p.InOff)
		}
		for s := 0; s < p.NSteps(); s++ {
			f := p.Steps[s*PopFields:][:PopFields]
			_, outs := stepWork(f)
			if f[0] == popMergeCat {
				outs += f[6] * f[4] * f[5]
			}
			if f[1] < 0 || f[2] < 0 || f[2]+outs > p.Frame {
				t.Errorf("genome %d step %d: op %d writes %d floats at %d of a frame of %d", g.GenomeID, s, f[0], outs, f[2], p.Frame)
			}
		}
		n := 1 + i%7
		prog, err := Build(g, vram.Float32, n, true)
		if err != nil {
			t.Fatal(err)
		}
		if !p.PopFits(n, prog.ArenaBytes) {
			continue
		}
		ps, ns = append(ps, p), append(ns, n)
		arenas += prog.ArenaBytes
	}
	if len(ps) < 20 {
		t.Fatalf("%d of %d genomes on the population path", len(ps), len(gs))
	}
	if l := LayPop(ps, ns); l.Bytes > arenas || l.Upload > l.Bytes {
		t.Errorf("a launch of %d forwards needs %d bytes (upload %d), their arenas %d", len(ps), l.Bytes, l.Upload, arenas)
	}
}

// stepWork is, as perfmodel's, a step's outputs for one image (second).
func stepWork(f []int64) (int64, int64) { return 0, f[11] * f[9] * f[10] }
