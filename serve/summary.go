package serve

import "github.com/neateval/neateval/run"

// summaryLine is the last line of a stream that completed.
type summaryLine struct {
	Summary summary `json:"summary"`
}

// summary has the fields of the run_summary log event; the fitness fields
// are null when no genome was scored.
type summary struct {
	Genomes           int      `json:"genomes"`
	Failed            int      `json:"failed"`
	Images            int64    `json:"images"`
	Seconds           float64  `json:"seconds"`
	ImagesGenomesPerS float64  `json:"images_genomes_per_s"`
	BestFitness       *float64 `json:"best_fitness"`
	BestGenome        *int64   `json:"best_genome"`
	MeanFitness       *float64 `json:"mean_fitness"`
}

func newSummary(s run.Summary) summary {
	out := summary{Genomes: s.Genomes, Failed: s.Failed, Images: s.Images, Seconds: s.Wall.Seconds(), ImagesGenomesPerS: s.Rate()}
	if s.HaveFitness {
		best, id, mean := s.BestFitness, s.BestGenomeID, s.MeanFitness
		out.BestFitness, out.BestGenome, out.MeanFitness = &best, &id, &mean
	}
	return out
}
