package run

import (
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/neateval/neateval/results"
)

// Summary is what a run's run_summary line reports.
type Summary struct {
	Genomes int // results in the file, resumed ones included
	Failed  int // error results
	// Images is images·genomes scored in this process (resumed results
	// excluded), the numerator of the throughput.
	Images       int64
	Wall         time.Duration
	HaveFitness  bool // some genome has a fitness
	BestFitness  float64
	BestGenomeID int64 // the first genome (in population order) with BestFitness
	MeanFitness  float64
	// Remote is what the cluster did, when the run scored on one.
	Remote *RemoteStats
}

// Summarize computes the summary of a run's results (all, in population
// order) after wall time; resumed are the results found in the file on
// resume, not scored by this process.
func Summarize(all []results.Result, resumed map[int]results.Result, wall time.Duration) Summary {
	s := Summary{Genomes: len(all), Wall: wall}
	var sum float64
	var n int
	for i := range all {
		r := &all[i]
		if _, ok := resumed[r.Index]; !ok {
			s.Images += int64(r.Images)
		}
		if r.Error != nil {
			s.Failed++
			continue
		}
		if r.Fitness == nil {
			continue
		}
		f := *r.Fitness
		if !s.HaveFitness || f > s.BestFitness {
			s.BestFitness, s.BestGenomeID = f, r.GenomeID
		}
		s.HaveFitness = true
		sum += f
		n++
	}
	if n > 0 {
		s.MeanFitness = sum / float64(n)
	}
	return s
}

// Rate is images·genomes per second over the wall time.
func (s Summary) Rate() float64 {
	if sec := s.Wall.Seconds(); sec > 0 {
		return float64(s.Images) / sec
	}
	return 0
}

// log writes the run_summary line. Best and mean fitness are absent when no
// genome has a fitness.
func (s Summary) log(l *zerolog.Logger) {
	e := event(l, zerolog.InfoLevel, EventRunSummary).
		Int(KeyGenomes, s.Genomes).
		Int(KeyFailed, s.Failed).
		Int64(KeyImages, s.Images).
		Float64(KeySeconds, s.Wall.Seconds()).
		Float64(KeyImagesGenomesPerS, s.Rate())
	if s.HaveFitness {
		e = e.Float64(KeyBestFitness, s.BestFitness).
			Int64(KeyBestGenome, s.BestGenomeID).
			Float64(KeyMeanFitness, s.MeanFitness)
	}
	if r := s.Remote; r != nil {
		e = e.Int(KeyWorkers, r.Workers).Int(KeyItems, r.Items).Int(KeyRedeliveries, r.Redeliveries)
	}
	e.Msgf("%d genomes (%d failed), %s images·genomes/s", s.Genomes, s.Failed, SI(s.Rate()))
}

// SI writes x with three significant digits and an SI prefix: 1.23M.
func SI(x float64) string {
	for _, u := range []struct {
		s string
		v float64
	}{{"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if x >= u.v {
			return fmt.Sprintf("%.3g%s", x/u.v, u.s)
		}
	}
	return fmt.Sprintf("%.3g", x)
}
