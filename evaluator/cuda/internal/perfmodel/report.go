package perfmodel

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/neateval/neateval/evaluator/cuda/internal/sched"
	"github.com/neateval/neateval/evaluator/cuda/kernels"
	"github.com/neateval/neateval/neat"
	"github.com/neateval/neateval/vram"
)

// KernelRow is one kernel's share of an evaluation.
type KernelRow struct {
	Name        string
	Res         kernels.Resource
	BlocksPerSM int
	Cost
}

// Report is the prediction for one evaluation of a population: every
// valid genome over images images in slices of batch, float32 storage,
// the data set cached on the device.
type Report struct {
	Genomes, Valid, Images, Batch int
	Precision                     sched.Precision
	// PopBatch is the forwards a population launch gathers (0: the
	// population path off); PopGenomes the genomes it scored.
	PopBatch, PopGenomes int
	Kernels              []KernelRow // by predicted time, largest first
	Total                Cost
	// Host is the worker's time to enqueue every launch (one thread).
	Host time.Duration
}

// Evaluate predicts one evaluation of pop on c, the products in precision
// prec. With popBatch > 0 (fp32 only), the genomes the population kernels
// take (sched.BuildPop) are scored popBatch forwards a launch, as the
// backend gathers the forwards in flight; the others per layer.
func Evaluate(c Ceilings, res map[string]kernels.Resource, pop *neat.Population, images, batch int, prec sched.Precision, popBatch int) (Report, error) {
	rep := Report{Genomes: len(pop.Genomes), Images: images, Batch: batch, Precision: prec, PopBatch: popBatch}
	rows := map[string]*KernelRow{}
	row := func(name string) *KernelRow {
		r := rows[name]
		if r == nil {
			r = &KernelRow{Name: name, Res: res[name], BlocksPerSM: c.BlocksPerSM(res[name], sched.Threads)}
			rows[name] = r
		}
		return r
	}
	var pps []*sched.PopProgram
	var pns []int
	var puse []float64
	slicesOf := map[int]int{batch: images / batch}
	if r := images % batch; r > 0 {
		slicesOf[r]++
	}
	for _, gen := range pop.Genomes {
		g, err := neat.Compile(gen, pop.Input, pop.NumClasses)
		if err != nil {
			continue // invalid genomes are not evaluated
		}
		rep.Valid++
		pp := sched.BuildPop(g, vram.Float32, sched.PopSmemH200)
		if popBatch == 0 || prec != sched.FP32 {
			pp = nil
		}
		took := false
		for n, times := range slicesOf {
			// The backend's rule (pop.go): the genome fits, and the
			// forward's work is at most sched.PopMaxWork.
			if pp != nil && times > 0 && g.FLOPs*int64(n) <= sched.PopMaxWork {
				took = true
				for range times {
					pps, pns, puse = append(pps, pp), append(pns, n), append(puse, float64(g.FLOPs))
				}
				continue
			}
			if times == 0 {
				continue
			}
			p, err := sched.BuildPrecision(g, vram.Float32, n, true, prec)
			if err != nil {
				return rep, err
			}
			for i := range p.Launches {
				l := &p.Launches[i]
				cost, err := Predict(c, res, l)
				if err != nil {
					return rep, fmt.Errorf("genome %d: %w", g.GenomeID, err)
				}
				row := row(sched.Kernels[l.Kernel])
				for range times {
					row.add(cost)
					rep.Total.add(cost)
				}
			}
		}
		if took {
			rep.PopGenomes++
		}
	}
	for lo := 0; lo < len(pps); lo += popBatch {
		hi := min(lo+popBatch, len(pps))
		fw, rd := PredictPop(c, pps[lo:hi], pns[lo:hi], puse[lo:hi]), PredictPopReduce(c, pns[lo:hi])
		row(sched.Kernels[pps[lo].Kernel]).add(fw)
		row("pop_reduce").add(rd)
		rep.Total.add(fw)
		rep.Total.add(rd)
	}
	rep.Host = time.Duration(rep.Total.Launches) * c.Launch
	for _, r := range rows {
		rep.Kernels = append(rep.Kernels, *r)
	}
	slices.SortFunc(rep.Kernels, func(a, b KernelRow) int {
		return cmp.Or(cmp.Compare(b.Time, a.Time), cmp.Compare(a.Name, b.Name))
	})
	return rep, nil
}

// Predicted is the evaluation's predicted time: the device's, or the
// host's enqueueing when that is longer.
func (r Report) Predicted() time.Duration { return max(r.Total.Time, r.Host) }

// Rate is images·genomes a second at the predicted time.
func (r Report) Rate() float64 {
	return float64(r.Valid) * float64(r.Images) / r.Predicted().Seconds()
}
