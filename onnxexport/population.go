package onnxexport

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/neateval/neateval/neat"
)

// ManifestName is the file WritePopulation writes beside the models.
const ManifestName = "manifest.json"

// ManifestFormat is the "format" field of a manifest.
const ManifestFormat = "neateval.onnx-population/v1"

// Manifest lists the models of an exported population, in the population's
// order. It is what bench/ort_ref.js reads to score the population.
type Manifest struct {
	Format     string       `json:"format"`
	Input      neat.Input   `json:"input"`
	NumClasses int          `json:"num_classes"`
	Opset      int          `json:"opset"`
	Genomes    []ModelEntry `json:"genomes"`
}

// ModelEntry is one genome of a Manifest: the model's file name, relative
// to the manifest's folder, or, for a genome that could not be exported
// (neat.Compile rejects it), no file and the error.
type ModelEntry struct {
	GenomeID int64   `json:"genome_id"`
	File     string  `json:"file,omitempty"`
	Error    *string `json:"error"`
}

// FileName is the name WritePopulation gives genome id's model.
func FileName(id int64) string { return fmt.Sprintf("genome-%d.onnx", id) }

// WritePopulation writes one model per genome of pop into dir (created if
// needed), named by FileName, and the manifest that lists them. A genome
// that cannot be exported is listed with its error and does not stop the
// others; the returned error is only for files that cannot be written.
func WritePopulation(dir string, pop *neat.Population, o Options) (*Manifest, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("onnxexport: %w", err)
	}
	m := &Manifest{Format: ManifestFormat, Input: pop.Input, NumClasses: pop.NumClasses, Opset: Opset}
	for _, g := range pop.Genomes {
		e := ModelEntry{GenomeID: g.ID}
		b, err := Encode(g, pop.Input, pop.NumClasses, o)
		if err != nil {
			s := err.Error()
			e.Error = &s
		} else {
			e.File = FileName(g.ID)
			if err := os.WriteFile(filepath.Join(dir, e.File), b, 0o644); err != nil {
				return nil, fmt.Errorf("onnxexport: %w", err)
			}
		}
		m.Genomes = append(m.Genomes, e)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("onnxexport: %w", err)
	}
	return m, nil
}

// WriteFile writes genome g of pop as a model to path.
func WriteFile(path string, g *neat.Genome, pop *neat.Population, o Options) error {
	b, err := Encode(g, pop.Input, pop.NumClasses, o)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("onnxexport: %w", err)
	}
	return nil
}

// ErrNoBest is returned by Best for a checkpoint of a run that has not
// evaluated a generation yet.
var ErrNoBest = errors.New("the run has no best genome yet (no generation was evaluated)")

// Best returns the best genome of the evolve run checkpointed in dir (see
// neat.LoadCheckpoint), as a population of that genome alone.
func Best(dir string) (*neat.Population, error) {
	evo, _, err := neat.LoadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	g, _, _ := evo.Best()
	if g == nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoBest)
	}
	pop := evo.Population()
	pop.Genomes = []*neat.Genome{g}
	return pop, nil
}
