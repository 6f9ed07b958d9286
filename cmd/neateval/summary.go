package main

import (
	"time"

	"github.com/rs/zerolog"
)

// runSummary is what the run_summary line reports.
type runSummary struct {
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
}

// summarize computes the summary of a run's results (all, in population
// order) after wall time; resumed are the results found in the file on
// --resume, not scored by this process.
func summarize(all []Result, resumed map[int]Result, wall time.Duration) runSummary {
	s := runSummary{Genomes: len(all), Wall: wall}
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

// rate is images·genomes per second over the wall time.
func (s runSummary) rate() float64 {
	if sec := s.Wall.Seconds(); sec > 0 {
		return float64(s.Images) / sec
	}
	return 0
}

// log writes the run_summary line. Best and mean fitness are absent when no
// genome has a fitness.
func (s runSummary) log(l *zerolog.Logger) {
	e := logEvent(l, zerolog.InfoLevel, EvRunSummary).
		Int(KeyGenomes, s.Genomes).
		Int(KeyFailed, s.Failed).
		Int64(KeyImages, s.Images).
		Float64(KeySeconds, s.Wall.Seconds()).
		Float64(KeyImagesGenomesPerS, s.rate())
	if s.HaveFitness {
		e = e.Float64(KeyBestFitness, s.BestFitness).
			Int64(KeyBestGenome, s.BestGenomeID).
			Float64(KeyMeanFitness, s.MeanFitness)
	}
	e.Msgf("%d genomes (%d failed), %s images·genomes/s", s.Genomes, s.Failed, siNumber(s.rate()))
}
