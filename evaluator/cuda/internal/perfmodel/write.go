package perfmodel

import (
	"io"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/cuda/kernels"
	"github.com/neateval/neateval/neat"
)

// The populations of scripts/gpu-prepare.sh (neateval gen), and the images
// and batch of the full MNIST test set and of gpu-check.sh's bench step.
var (
	mnist  = neat.Input{Channels: 1, Height: 28, Width: 28}
	setups = []struct {
		name       string
		seed       int64
		size       int
		cfg        func() neat.GenConfig
		checkBatch int
	}{
		{"small (pop: seed 7, 64 genomes)", 7, 64, neat.DefaultGenConfig, 2000},
		{"wide (popw: seed 8, 12 genomes)", 8, 12, neat.WideGenConfig, 2000},
	}
)

const (
	fullImages  = 10000
	checkImages = 2000
	// smallImages is a small validation set, as NEAT loops use (evolve's
	// val_size): where launches, not arithmetic, bound the per-layer path.
	smallImages = 100
)

// PopBatch is the forwards one population launch gathers in the report:
// the backend's default of 4 forwards in flight (cuda.DefaultParallel).
const PopBatch = 4

// Write computes the report for H200 and writes it as markdown.
func Write(w io.Writer) error {
	res, err := kernels.Resources()
	if err != nil {
		return err
	}
	var ps []Preset
	for _, s := range setups {
		pop := neat.Generate(s.seed, s.size, mnist, 10, s.cfg())
		ps = append(ps, Preset{Name: s.name})
		r := &ps[len(ps)-1].Reports
		for i, run := range []struct{ images, batch int }{{fullImages, fullImages}, {checkImages, s.checkBatch}, {smallImages, smallImages}} {
			for j, v := range []struct {
				prec sched.Precision
				pop  int
			}{{sched.FP32, 0}, {sched.TF32, 0}, {sched.FP32, PopBatch}} {
				if r[3*i+j], err = Evaluate(H200, res, pop, run.images, run.batch, v.prec, v.pop); err != nil {
					return err
				}
			}
		}
	}
	return WriteMarkdown(w, H200, ps)
}
