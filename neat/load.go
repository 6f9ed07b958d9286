package neat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Load reads a population: the JSON file at jsonPath and the safetensors
// file its "weights" field names, relative to the JSON's folder.
//
// A problem with either file as a whole (see the format's list of
// whole-file errors) is an error naming the file and, where it applies, the
// key or byte offset; nothing is returned with it. A problem within one
// genome is not an error of Load: it is kept in that genome (Genome.Invalid,
// Node.Problem, a Tensor of another dtype) and Compile reports it, naming the
// genome and the node, while the other genomes load as usual.
//
// Each listed node gets the tensors named g<genome id>.n<node id>.weight and
// .bias that the file holds, converted to float32, with their shapes as
// found; Compile checks them against the graph. Tensors no listed node names
// are never decoded.
func Load(jsonPath string) (*Population, error) {
	pop, _, err := LoadDigest(jsonPath)
	return pop, err
}

// LoadDigest is Load that also returns the population's identity, for a
// run's id: "sha256:" and the SHA-256 of the two files' bytes as read (so
// any change to either file changes it). A population held in memory has
// ContentDigest instead.
//
// The F32 tensors of a loaded population are, where they can be, views of
// one buffer holding the weights file (no copy of 550 MB for 10,000 small
// genomes); the buffer lives as long as any of them does. Each tensor's
// Data is its own: writing it changes no other tensor.
func LoadDigest(jsonPath string) (*Population, string, error) {
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		return nil, "", err // *fs.PathError names the file
	}
	pop, weights, err := ParsePopulationJSON(data, jsonPath)
	if err != nil {
		return nil, "", err
	}
	wpath := filepath.Join(filepath.Dir(jsonPath), weights)
	wdata, err := readLarge(wpath)
	if err != nil {
		return nil, "", fmt.Errorf("%s: weights %q: %w", jsonPath, weights, err)
	}
	// wdata is this function's own: the F32 tensors may be views of it.
	digest, err := withWeights(pop, data, wdata, wpath, true)
	if err != nil {
		return nil, "", err
	}
	return pop, digest, nil
}

// Parse is LoadDigest on the two files' contents, for a population that
// did not come from disk (an upload, a message): jsonData is the population
// JSON, weights the safetensors file it names; jsonName and weightsName
// name them in errors. The digest is the one LoadDigest gives for the same
// bytes on disk. The population's tensors are copies: weights stays the
// caller's.
func Parse(jsonData, weights []byte, jsonName, weightsName string) (*Population, string, error) {
	pop, _, err := ParsePopulationJSON(jsonData, jsonName)
	if err != nil {
		return nil, "", err
	}
	digest, err := withWeights(pop, jsonData, weights, weightsName, false)
	if err != nil {
		return nil, "", err
	}
	return pop, digest, nil
}

// withWeights attaches the tensors of the safetensors file weights to pop
// (parsed from jsonData) and returns the two files' digest, computed on
// another core meanwhile: for 10,000 small genomes (550 MB) hashing takes
// as long as the rest. When own is true, weights is not used by anything
// else, and F32 tensors become views of it instead of copies (see
// stEntry.view).
func withWeights(pop *Population, jsonData, weights []byte, weightsName string, own bool) (string, error) {
	digest := make(chan string, 1)
	go func() { digest <- fileDigest(jsonData, weights) }()
	entries, err := parseSafetensors(weights)
	if err != nil {
		<-digest
		return "", fmt.Errorf("%s: %w", weightsName, err)
	}
	attachParams(pop, entries, own && disjoint(entries))
	return <-digest, nil
}

// attachParams gives each listed node of every genome the tensors the
// weights file holds for it: views of the file's bytes where view allows
// (stEntry.view), else decoded copies.
func attachParams(pop *Population, entries map[string]stEntry, view bool) {
	var name []byte
	get := func(e stEntry) *Tensor {
		if view {
			if t := e.view(); t != nil {
				return t
			}
		}
		return e.tensor()
	}
	for _, g := range pop.Genomes {
		for i := range g.Nodes {
			id := g.Nodes[i].ID
			if _, done := g.Params[id]; done {
				continue // a duplicate node id: Compile reports it
			}
			var p Params
			name = tensorName(name[:0], g.ID, id, "weight")
			if e, ok := entries[string(name)]; ok {
				p.Weight = get(e)
			}
			name = tensorName(name[:0], g.ID, id, "bias")
			if e, ok := entries[string(name)]; ok {
				p.Bias = get(e)
			}
			if p.Weight != nil || p.Bias != nil {
				g.Params[id] = &p
			}
		}
	}
}

// TensorName is the name of a node's tensor in the weights file:
// g<genome>.n<node>.<kind>, kind being "weight" or "bias".
func TensorName(genome int64, node int, kind string) string {
	return string(tensorName(nil, genome, node, kind))
}

func tensorName(dst []byte, genome int64, node int, kind string) []byte {
	dst = append(dst, 'g')
	dst = strconv.AppendInt(dst, genome, 10)
	dst = append(dst, ".n"...)
	dst = strconv.AppendInt(dst, int64(node), 10)
	dst = append(dst, '.')
	return append(dst, kind...)
}
