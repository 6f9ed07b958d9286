package evaluator_test

import (
	"context"
	"fmt"
	"math"

	"github.com/neateval/neateval/datasets"
	"github.com/neateval/neateval/evaluator"
	"github.com/neateval/neateval/evaluator/cpu"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/staging"
)

// An experiment makes one evaluator and hands it a population each
// generation; results come back in population order.
func Example() {
	ctx := context.Background()
	ds := datasets.Synthetic(256, 1, 28, 28, 10, 1) // the validation set
	b, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 256 << 20, Threads: 1})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	// Made once: with CacheData the images stay on the device for every
	// generation to come.
	e, err := evaluator.New(b, ds, staging.DefaultConfig(), evaluator.Options{EvalBatchSize: 128, CacheData: true})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	pop := neat.Generate(7, 4, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	results, err := e.Evaluate(ctx, pop, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Printf("genome %d: %d images, %d params, scored %v, fitness = accuracy %v\n",
			r.GenomeID, r.Images, r.Params, r.OK(), r.Fitness == r.Accuracy)
	}
	fmt.Println("plan:", e.Manager().Plan().Mode)
	// Output:
	// genome 0: 256 images, 5659 params, scored true, fitness = accuracy true
	// genome 1: 256 images, 14380 params, scored true, fitness = accuracy true
	// genome 2: 256 images, 1604 params, scored true, fitness = accuracy true
	// genome 3: 256 images, 133412 params, scored true, fitness = accuracy true
	// plan: gpu_resident
}

// A custom fitness is a function of a genome's metrics. NEAT experiments
// often weigh accuracy against size; here each parameter costs 10⁻⁵.
func ExampleFitnessFunc() {
	sizePenalised := func(m evaluator.Metrics) float64 {
		return m.Accuracy - 1e-5*float64(m.Params)
	}
	ds := datasets.Synthetic(128, 1, 28, 28, 10, 2)
	b, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 256 << 20, Threads: 1})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	e, err := evaluator.New(b, ds, staging.DefaultConfig(), evaluator.Options{Fitness: sizePenalised, CacheData: true})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	pop := neat.Generate(3, 3, neat.Input{Channels: 1, Height: 28, Width: 28}, 10, neat.DefaultGenConfig())
	results, err := e.Evaluate(context.Background(), pop, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		penalty := r.Accuracy - r.Fitness
		fmt.Printf("genome %d: %d params, penalty %.5f\n", r.GenomeID, r.Params, penalty)
	}
	// Output:
	// genome 0: 57001 params, penalty 0.57001
	// genome 1: 26299 params, penalty 0.26299
	// genome 2: 14959 params, penalty 0.14959
}

// A program can drive the staging lifecycle itself: plan the generation,
// then load, score and unload chunk after chunk. Here a weight budget of
// 16 KiB per chunk forces the population through the device in several
// chunks (cpu_staged), as on a GPU too small to hold it.
func ExampleEvaluator_Manager() {
	ctx := context.Background()
	in := neat.Input{Channels: 1, Height: 28, Width: 28}
	ds := datasets.Synthetic(128, 1, 28, 28, 10, 3)
	b, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 256 << 20, Threads: 1})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	st := staging.DefaultConfig()
	st.Adaptive, st.ChunkBytes = false, 16<<10
	e, err := evaluator.New(b, ds, st, evaluator.Options{EvalBatchSize: 64, CacheData: true})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	pop := neat.Generate(5, 6, in, 10, neat.DefaultGenConfig())
	graphs := map[int]*neat.Graph{}
	var order []int
	for i, g := range pop.Genomes {
		gr, err := neat.Compile(g, pop.Input, pop.NumClasses)
		if err != nil {
			continue // an invalid genome: report it, score the others
		}
		graphs[i] = gr
		order = append(order, i)
	}

	mgr := e.Manager()
	fixed := b.Device().Stats().Allocated // the cached validation set
	load := func(i int) (staging.Resident, error) { return b.Load(graphs[i]) }
	plan, err := mgr.PrepareForEval(e.Items(graphs, order), fixed, load) // prepare_for_eval
	if err != nil {
		panic(err)
	}
	fmt.Println("mode:", plan.Mode, "several chunks:", len(plan.Chunks) > 1)
	scored := 0
	for c := range mgr.IterEvalChunks(ctx) { // iter_eval_chunks
		if err := mgr.LoadChunk(ctx, c); err != nil { // load_chunk
			panic(err)
		}
		for _, i := range c.Indexes {
			m, err := c.Model(i)
			if err != nil {
				panic(err) // an out-of-memory: load it alone later
			}
			r, err := e.Score(ctx, i, m.(evaluator.Model))
			if err != nil {
				panic(err)
			}
			if r.OK() && r.Images == ds.N {
				scored++
			}
		}
		mgr.UnloadChunk(c) // unload_chunk
	}
	fmt.Println("scored:", scored, "of", len(pop.Genomes))
	fmt.Println("weights left on the device:", b.Device().Stats().Allocated-fixed)
	// Output:
	// mode: cpu_staged several chunks: true
	// scored: 6 of 6
	// weights left on the device: 0
}

// The evaluator is a NEAT loop's fitness: neat.Evolution hands each
// generation's unscored genomes to Evaluate and breeds the next (by
// default every genome, elites too: rescore_elites).
func ExampleEvaluator_Evaluate_evolution() {
	ctx := context.Background()
	ds := datasets.Synthetic(300, 1, 28, 28, 10, 4)
	b, err := cpu.New(evaluator.BackendOptions{MemoryBytes: 256 << 20, Threads: 1})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	e, err := evaluator.New(b, ds, staging.DefaultConfig(), evaluator.Options{CacheData: true})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	cfg := neat.DefaultEvolveConfig()
	cfg.PopulationSize = 12
	evo, err := neat.NewEvolution(neat.Input{Channels: ds.Channels, Height: ds.Height, Width: ds.Width}, ds.NumClasses, cfg)
	if err != nil {
		panic(err)
	}
	fitness := evaluator.NEATFitness(e) // NaN for a genome that could not be scored
	best := math.Inf(-1)
	for range 5 {
		st, err := evo.Step(ctx, fitness)
		if err != nil {
			panic(err)
		}
		fmt.Printf("generation %d: %d scored, best did not fall: %v\n", st.Generation, st.Evaluated, st.Best >= best)
		best = st.Best
	}
	g, _, _ := evo.Best()
	_, err = neat.Compile(g, evo.Population().Input, ds.NumClasses)
	fmt.Println("best genome compiles:", err == nil, "above chance:", best > 0.1)
	// Output:
	// generation 0: 12 scored, best did not fall: true
	// generation 1: 12 scored, best did not fall: true
	// generation 2: 12 scored, best did not fall: true
	// generation 3: 12 scored, best did not fall: true
	// generation 4: 12 scored, best did not fall: true
	// best genome compiles: true above chance: true
}
