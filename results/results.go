package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
)

// FormatVersion is the results file's format. Format 1 began with a
// header line; format 2 has none and writes the run id (Header.RunID) on
// every line instead. The version is hashed into that id, so a file of
// another format is never resumed as one of this format.
const FormatVersion = 2

// Header says which run a results file belongs to, so that Resume refuses
// a file written for another population, dataset or fitness. It is not
// written out as a line: every line of the file is one genome's result, and
// each carries the header's hash as "run" (see RunID).
type Header struct {
	// Version is the results format; Create and Resume set it to
	// FormatVersion.
	Version int `json:"neateval_results"`
	// Population is the population's digest: neat.FileDigest of its files,
	// or neat.ContentDigest of a population held in memory.
	Population string `json:"population"`
	Genomes    int    `json:"genomes"`
	// Dataset names the validation set and its size: "mnist test 10000"
	// (datasets.Dataset.Identity).
	Dataset string `json:"dataset"`
	Fitness string `json:"fitness"`
}

// Result is one genome's line in the results file. The line also carries
// "run", the id of the run that wrote it (Header.RunID), first.
//
// A genome that could not be scored has Error set and nil Fitness,
// Accuracy and Loss; Images is the number of images it saw (0 for an
// invalid genome). A scored genome has all three and a nil Error.
type Result struct {
	GenomeID int64    `json:"genome_id"`
	Index    int      `json:"index"` // position in the population, from 0
	Fitness  *float64 `json:"fitness"`
	Accuracy *float64 `json:"accuracy"`
	Loss     *float64 `json:"loss"`
	Images   int      `json:"images"`
	Error    *string  `json:"error"`
	Params   int64    `json:"params"`  // parameters of the reachable nodes
	FLOPs    int64    `json:"flops"`   // per image: 2 × multiply-adds
	Seconds  float64  `json:"seconds"` // wall time of this genome's forwards
}

// RunID is the "run" field of every line of h's results file:
// "sha256:" and, in hex, the first 16 bytes (32 hex digits) of the SHA-256
// of h with Version set to FormatVersion, as json.Marshal writes it (keys
// in field order, no spaces). 128 bits tell runs apart; the fields cannot
// be read back from the id, only compared through it.
func (h Header) RunID() string {
	h.Version = FormatVersion
	b, _ := json.Marshal(h) // strings and ints only: cannot fail
	sum := sha256.Sum256(b)
	return runIDPrefix + hex.EncodeToString(sum[:runIDBytes])
}

// Check says what is wrong with r, for a population of n genomes: an index
// outside it, metrics inconsistent with Error, a non-finite metric.
func (r *Result) Check(n int) error {
	if r.Index < 0 || r.Index >= n {
		return fmt.Errorf("genome %d: index %d outside the population [0, %d)", r.GenomeID, r.Index, n)
	}
	metrics := []struct {
		name string
		v    *float64
	}{{"fitness", r.Fitness}, {"accuracy", r.Accuracy}, {"loss", r.Loss}}
	for _, m := range metrics {
		switch {
		case r.Error != nil && m.v != nil:
			return fmt.Errorf("genome %d: %s set on an error result", r.GenomeID, m.name)
		case r.Error == nil && m.v == nil:
			return fmt.Errorf("genome %d: %s missing on a result without error", r.GenomeID, m.name)
		case m.v != nil && (math.IsNaN(*m.v) || math.IsInf(*m.v, 0)):
			return fmt.Errorf("genome %d: %s is %v; a non-finite result must be an error result", r.GenomeID, m.name, *m.v)
		}
	}
	if r.Images < 0 {
		return fmt.Errorf("genome %d: images %d < 0", r.GenomeID, r.Images)
	}
	return nil
}
